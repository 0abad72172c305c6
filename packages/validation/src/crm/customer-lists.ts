/** Most characters of a customer list's name and description (its criteria are checked by crm, field by field). */
export const CUSTOMER_LIST_TEXT_MAX = { name: 200, description: 2000 } as const;
