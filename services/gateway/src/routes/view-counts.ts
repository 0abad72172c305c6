/**
 * GET /conversations/counts counts at most this many of the caller's conversation views (the first by name). In a file
 * of its own because the route and its documented schema both read it (docs/schemas/messaging.ts importing chat.routes
 * made an import circle through the scheduled messages' schemas).
 */
export const VIEW_COUNTS_MAX = 20;
