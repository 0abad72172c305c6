import { parseDateOrTime, s } from '../http/validate';

/**
 * An ISO 8601 timestamp, sent on as its UTC instant; whether it lies ahead (and at most 90 days) is messaging's call.
 * Its own module: chat.routes.ts (a send with sendAt) takes it without importing the scheduled messages' response
 * schemas, which import the docs' messaging schemas, which import chat.routes.ts.
 */
export const sendAt = () => s.timestamp().transform((v) => parseDateOrTime(v)!.at.toISOString());
