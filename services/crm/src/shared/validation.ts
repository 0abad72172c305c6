// Every rule crm checks without its data is stated once in @crm/validation (the shared checks, and `crmRules`,
// crm's contract that the gateway's schemas are built from); escapeLike lives with the SQL helpers in @crm/db.
// This file only passes them on to crm's modules. Checks that need an org's data stay in the module that owns it.
import { traceFields } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';
import { networkHttpUrl } from '@crm/validation';
export { escapeLike } from '@crm/db';
export { bulkIds, isoTimestamp, isUuid, oneOf, optionalEmail, optionalText, requireText, requireUuid } from '@crm/validation';
export { crmRules as rules } from '@crm/validation';

/**
 * A URL the chat network supplied (an avatar, passed on by messaging or the connector): one that is not http(s), or is
 * longer than 2,000 characters, is dropped (stored as '') with a debug line, never refused, since nobody could correct
 * it and the contact it comes with must still be stored. The value is not logged, only its scheme and length. The line
 * carries the trace of the call `ctx` that brought it (its traceparent).
 */
export function networkUrl(log: Pick<Logger, 'debug'>, ctx: { traceparent?: string }, value: string | undefined, field: string): string {
  const { url, dropped } = networkHttpUrl(value);
  if (dropped)
    log.debug(
      { field, scheme: /^[a-z][a-z0-9+.-]{0,19}:/i.exec(value ?? '')?.[0] ?? '', length: value?.length, ...traceFields(ctx) },
      'dropped a network-supplied URL that is not http(s)',
    );
  return url;
}
