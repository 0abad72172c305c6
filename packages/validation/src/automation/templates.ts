/** Most characters of each free-text field of a message template. */
export const TEMPLATE_TEXT_MAX = { name: 200, content: 4000, category: 100, variable: 100 } as const;
export const MAX_TEMPLATE_VARIABLES = 100;
export const TOO_MANY_VARIABLES = `must have at most ${MAX_TEMPLATE_VARIABLES} variables`;
