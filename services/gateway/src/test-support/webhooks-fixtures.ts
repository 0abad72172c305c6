// Sample webhooks answers for the mapper tests (not part of the build).
import type { webhooks } from '@crm/proto-types';
import { AT, ID, OTHER_ID } from './crm-fixtures';

export function webhook(over: Partial<webhooks.Webhook__Output> = {}): webhooks.Webhook__Output {
  return { id: ID, url: 'https://hooks.example.com/x', events: ['contact.created'], active: true, createdAt: AT, updatedAt: AT, ...over };
}

/** An attempt that got no answer: no status code, no body. */
export function attempt(over: Partial<webhooks.Attempt__Output> = {}): webhooks.Attempt__Output {
  return {
    attempt: 1,
    trigger: 'auto',
    startedAt: AT,
    durationMs: 12,
    ok: false,
    error: 'ENOTFOUND',
    responseBody: '',
    responseBodyTruncated: false,
    ...over,
  };
}

/** A pending delivery with one failed attempt, not a replay. */
export function delivery(over: Partial<webhooks.Delivery__Output> = {}): webhooks.Delivery__Output {
  return {
    id: ID,
    webhookId: OTHER_ID,
    eventId: 'e1',
    eventType: 'contact.created',
    status: 'pending',
    attemptCount: 1,
    nextAttemptAt: AT,
    createdAt: AT,
    attempts: [attempt()],
    replay: false,
    ...over,
  };
}
