/**
 * The checks every service applies to what a gRPC request carries: ids, text, choices, email addresses, URLs and
 * timestamps. A failed check throws grpc-kit's `invalid` (a 400 at the gateway naming the field). Rules that
 * need a service's config or data stay in that service (the address policies of webhook URLs, AI base URLs and
 * connector proxies, existence checks, quota caps); each service's contract rules are here (`crmRules`,
 * `messagingRules`, `identityRules`, `webhookRules`, `automationRules`, `aiRules`, `connectorRules`) because the
 * gateway's schemas are built from them too.
 */
export { bulkIds, isUuid, requireUuid } from './ids';
export { DEFAULT_TEXT_MAX, optionalText, rejectNul, requireText } from './text';
export { oneOf, optionalOneOf } from './choices';
export { EMAIL_MAX, EMAIL_MESSAGE, EMAIL_PATTERN, normaliseEmail, optionalEmail } from './email';
export { isoTimestamp } from './time';
export { HTTP_URL_MESSAGE, isHttpUrl, networkHttpUrl, optionalHttpUrl, URL_MAX } from './url';
export * as crmRules from './crm';
export * as messagingRules from './messaging';
export * as identityRules from './identity';
export * as webhookRules from './webhooks';
export * as automationRules from './automation';
export * as aiRules from './ai';
export * as knowledgeRules from './knowledge';
export * as connectorRules from './connector';
