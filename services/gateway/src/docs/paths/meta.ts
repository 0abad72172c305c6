import { z } from 'zod';
import { area, EDGE_REFUSALS } from '../registry';

/** Health probes and the documents themselves (no credential). */
const Readiness = z.object({ status: z.enum(['ready', 'not_ready', 'draining']), checks: z.record(z.string(), z.boolean()) });
const health = area({ prefix: '', auth: 'none', tag: 'Health' });
health.op('GET /healthz', { summary: 'The process is up', responses: { 200: z.object({ status: z.literal('ok') }) }, errors: EDGE_REFUSALS });
health.op('GET /readyz', {
  summary: 'Redis and every configured service answer, and the gateway is not shutting down',
  description:
    '`checks` names Redis and each service; a service is `false` when it does not answer or cannot reach its own PostgreSQL, RabbitMQ or Redis. 503 with status `not_ready` (a failed check) or `draining` (shutting down).',
  responses: { 200: Readiness, 503: Readiness },
  errors: EDGE_REFUSALS,
});

const docs = area({ prefix: '', auth: 'none', tag: 'Documentation' });
const OpenApi = z.looseObject({
  openapi: z.literal('3.1.0'),
  info: z.looseObject({}),
  paths: z.record(z.string(), z.unknown()),
  components: z.looseObject({}),
});
docs.op('GET /openapi.json', {
  summary: 'This document: every route the gateway serves (OpenAPI 3.1)',
  responses: { 200: OpenApi },
  errors: EDGE_REFUSALS,
});
docs.op('GET /api/public/openapi.json', {
  summary: 'The public API only (OpenAPI 3.1), generated from the same operations',
  responses: { 200: OpenApi },
  errors: EDGE_REFUSALS,
});

export const metaOps = [...health.ops, ...docs.ops];
