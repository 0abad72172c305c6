/**
 * The checks every service applies to what a gRPC request carries: ids, text, choices, email addresses and
 * timestamps. A failed check throws grpc-kit's `invalid` (a 400 at the gateway naming the field). Rules that
 * belong to one service (tags in crm, hex colors in messaging, webhook URLs) stay in that service.
 */
export { bulkIds, isUuid, requireUuid } from './ids';
export { optionalText, rejectNul, requireText } from './text';
export { oneOf, optionalOneOf } from './choices';
export { normaliseEmail, optionalEmail } from './email';
export { isoTimestamp } from './time';
