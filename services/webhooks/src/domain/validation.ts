import { invalid } from '@crm/grpc-kit';
import { webhookRules } from '@crm/validation';
import { isPublicEventType, PUBLIC_EVENT_TYPES } from './event-types';

// The checks every service shares (ids, text) and the limits the gateway's schemas share (webhookRules) live in
// @crm/validation; the rules that need this service's catalogue (event names) stay here.

export const { MAX_URL_LENGTH } = webhookRules;

/** Shape of a webhook URL (the address itself is judged separately): absolute http(s), no credentials. */
export function parseWebhookUrl(raw: string | undefined): URL {
  const text = (raw ?? '').trim();
  if (!text) throw invalid('url', 'is required');
  if (text.length > MAX_URL_LENGTH) throw invalid('url', webhookRules.URL_TOO_LONG);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid('url', 'must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('url', 'must be an absolute http or https URL');
  if (!url.hostname) throw invalid('url', 'must name a host');
  // Credentials in a URL end up in logs and screens; receivers authenticate deliveries by signature.
  if (url.username || url.password) throw invalid('url', 'must not contain a user name or password');
  return url;
}

/** A non-empty list of public event names, de-duplicated, in the order given. */
export function validateEvents(events: string[] | undefined): string[] {
  webhookRules.eventCount(events);
  const list = (events ?? []).map((e) => String(e).trim());
  const bad = list.find((e) => !isPublicEventType(e));
  // Echoed in an error that travels as gRPC metadata, which takes printable ASCII only.
  if (bad !== undefined) throw invalid('events', `unknown event "${printable(bad)}"; allowed: ${PUBLIC_EVENT_TYPES.join(', ')}`);
  return [...new Set(list)];
}

const printable = (text: string) => text.slice(0, 100).replace(/[^\x20-\x7e]/g, '?');

/** Public event names given as a filter (`types`): de-duplicated; empty means every type. */
export function validateTypeFilter(types: string[] | undefined, field = 'types'): string[] {
  const list = (types ?? []).map((e) => String(e).trim()).filter((e) => e !== '');
  if (list.length > PUBLIC_EVENT_TYPES.length) throw invalid(field, `must name at most ${PUBLIC_EVENT_TYPES.length} event types`);
  const bad = list.find((e) => !isPublicEventType(e));
  if (bad !== undefined) throw invalid(field, `unknown event type "${printable(bad)}"; allowed: ${PUBLIC_EVENT_TYPES.join(', ')}`);
  return [...new Set(list)];
}
