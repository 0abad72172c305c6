import { eventCatalogue } from '@crm/events';

/**
 * Webhook events, generated from the event schemas of @crm/events (the event catalogue): the OpenAPI documents'
 * `webhooks` (each event's version and the JSON Schema of its `data`) and the settings page list them; a test checks
 * them against what the webhooks service accepts.
 */
export const WEBHOOK_EVENTS: { name: string; version: number; description: string; schema: Record<string, unknown>; example: unknown }[] =
  eventCatalogue()
    .filter((e) => e.public)
    .map((e) => ({ name: e.type, version: e.version, description: e.description, schema: e.schema, example: e.example }));
