/** The wording of a failed rule, shared by the gateway's zod schemas and the services' checks so both say the same. */
export const maxChars = (max: number) => `must be at most ${max} characters`;
export const oneOfMessage = (allowed: readonly string[]) => `must be one of ${allowed.join(', ')}`;
export const integerRange = (min: number, max: number) => `must be an integer from ${min} to ${max}`;
