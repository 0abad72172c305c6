/**
 * GET /conversations/counts counts at most this many of the caller's conversation views (the first by name). In a file
 * of its own because the route (chat.routes.ts) and its response schema (chat.schemas.ts, which the routes import) both
 * read it.
 */
export const VIEW_COUNTS_MAX = 20;
