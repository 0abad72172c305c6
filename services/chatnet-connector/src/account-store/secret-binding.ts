/** Session data and proxy URLs are bound to their org and account: a ciphertext moved elsewhere fails. */
export const aad = (orgId: string, accountId: string) => `${orgId}:${accountId}`;
