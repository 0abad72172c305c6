import { z } from 'zod';
import { API_KEY_SCOPE_DESCRIPTIONS, API_KEY_SCOPES } from '@crm/auth';
import { shownSchema, type Operation, type ResponseBody } from './registry';
import { ErrorBody } from '../routes/common.schemas';
import { TAGS } from './tags';
import { WEBHOOK_EVENTS } from './webhook-events';

type Json = Record<string, unknown>;

const ERROR_TEXT: Record<number, string> = {
  400: 'A parameter or body field is missing or invalid (details name each field)',
  401: 'Missing, invalid or expired credential',
  403: 'The caller’s role lacks the permission this action needs',
  404: 'Not found in the caller’s organization',
  409: 'Conflicts with the current state or an existing record',
  410: 'Gone for good: it existed and was deleted (e.g. an attachment past its retention)',
  413: 'The body is too large',
  422: 'The request is understood but cannot be carried out now (e.g. the account is not connected)',
  429: 'Rate limit or quota reached; see Retry-After',
  502: 'An upstream provider failed',
  503: 'A service or provider did not answer in time; retry later',
};
const SUCCESS_TEXT: Record<number, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No content', 302: 'Redirect', 503: 'Not ready' };
type Media = Exclude<ResponseBody, z.ZodType | null> | 'file';
const MEDIA: Record<Media, [string, Json]> = {
  binary: ['application/octet-stream', { type: 'string', contentMediaType: 'application/octet-stream' }],
  csv: ['text/csv', { type: 'string' }],
  html: ['text/html', { type: 'string' }],
  file: [
    'multipart/form-data',
    {
      type: 'object',
      required: ['file'],
      properties: { file: { type: 'string', contentMediaType: 'application/octet-stream', description: 'the one file of the form' } },
    },
  ],
  gif: ['image/gif', { type: 'string', contentMediaType: 'image/gif' }],
};

/** JSON Schema 2020-12 (what OpenAPI 3.1 speaks) for a zod schema; requests as the client sends them. */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const out = z.toJSONSchema(shownSchema(schema), { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
  delete out.$schema;
  return tidy(out) as Json;
}

/** Drop zod's ±MAX_SAFE_INTEGER bounds on every integer: they say nothing a reader needs. */
function tidy(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(tidy);
  if (!v || typeof v !== 'object') return v;
  const o: Json = {};
  for (const [k, x] of Object.entries(v)) {
    if ((k === 'minimum' && x === Number.MIN_SAFE_INTEGER) || (k === 'maximum' && x === Number.MAX_SAFE_INTEGER)) continue;
    o[k] = tidy(x);
  }
  return o;
}

export const openApiPath = (expressPath: string) => expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
const pathParams = (expressPath: string) => [...expressPath.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);

/** The error statuses an operation can answer: derived from its spec, plus its own. */
export function errorStatuses(op: Operation): number[] {
  const s = new Set<number>(op.errors ?? []);
  if (op.query || op.paging || (op.body && op.body !== 'binary')) s.add(400);
  if (op.auth !== 'none') [401, 429].forEach((x) => s.add(x));
  if (op.auth === 'bearer') s.add(403);
  if (pathParams(op.path).length) s.add(404);
  for (const x of op.noErrors ?? []) s.delete(x);
  return [...s].sort((a, b) => a - b);
}

function parameters(op: Operation): Json[] {
  const out: Json[] = pathParams(op.path).map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  if (op.paging) {
    if (!op.paging.limitOnly) out.push({ name: 'page', in: 'query', required: false, schema: { type: 'integer', minimum: 1, default: 1 } });
    out.push({
      name: 'limit',
      in: 'query',
      required: false,
      description: `default ${op.paging.limit}, at most ${op.paging.max}`,
      schema: { type: 'integer', minimum: 1, maximum: op.paging.max, default: op.paging.limit },
    });
    if (op.paging.cursor) {
      const at = op.paging.cursor;
      out.push({
        name: 'cursor',
        in: 'query',
        required: false,
        description: 'nextCursor of the previous page, passed back exactly; omit for the first page',
        schema: { type: 'string' },
      });
      out.push({
        name: 'updatedSince',
        in: 'query',
        required: false,
        description: `only records whose ${at} is at or after this ISO 8601 time; the list is then ordered by ${at} ascending, then id`,
        schema: { type: 'string', format: 'date-time' },
      });
    }
  }
  if (op.query) {
    const q = jsonSchema(op.query, 'input') as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, schema] of Object.entries(q.properties ?? {})) {
      if (op.paging && (name === 'page' || name === 'limit')) continue;
      const { description, ...rest } = schema;
      out.push({ name, in: 'query', required: (q.required ?? []).includes(name), ...(description ? { description } : {}), schema: rest });
    }
  }
  for (const h of op.headers ?? []) out.push({ name: h.name, in: 'header', required: false, description: h.description, schema: { type: 'string' } });
  return out;
}

function content(body: z.ZodType | Media, io: 'input' | 'output'): Json {
  if (typeof body === 'string') {
    const [type, schema] = MEDIA[body];
    return { [type]: { schema } };
  }
  return { 'application/json': { schema: jsonSchema(body, io) } };
}

const operationId = (op: Operation) =>
  op.method.toLowerCase() +
  op.path
    .replace(/^\/api\/(v1|public)/, (_m, s: string) => (s === 'public' ? '/public' : ''))
    .split(/[/\-_.]/)
    .filter(Boolean)
    .map((p) => (p.startsWith(':') ? `By${p.charAt(1).toUpperCase()}${p.slice(2)}` : p.charAt(0).toUpperCase() + p.slice(1)))
    .join('');

function operation(op: Operation): Json {
  const responses: Json = {};
  for (const [status, body] of Object.entries(op.responses)) {
    responses[status] = { description: SUCCESS_TEXT[Number(status)] ?? 'OK', ...(body ? { content: content(body, 'output') } : {}) };
  }
  for (const status of errorStatuses(op)) {
    responses[String(status)] = {
      description: ERROR_TEXT[status] ?? 'Error',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  const params = parameters(op);
  return {
    operationId: operationId(op),
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: op.tags,
    security: securityOf(op),
    ...(params.length ? { parameters: params } : {}),
    ...(op.body
      ? { requestBody: { required: true, content: { ...content(op.body, 'input'), ...(op.orFile ? content('file', 'input') : {}) } } }
      : {}),
    responses,
  };
}

/** `contact.status_changed` → `webhookContactStatusChanged`: the webhook's operationId, unique as event names are. */
export const webhookOperationId = (event: string) =>
  'webhook' +
  event
    .split(/[._-]/)
    .filter(Boolean)
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');

/** Who may call: nothing for an open route; for an API-key route the scope it needs, as OAuth scopes are named. */
function securityOf(op: Operation): Json[] {
  if (op.auth === 'none') return [];
  if (op.auth === 'apiKey' && op.scope && op.scope !== 'none') return [{ apiKey: [op.scope] }];
  return [{ [op.auth]: [] }];
}

const SCOPE_LIST = API_KEY_SCOPES.map((s) => `- \`${s}\`: ${API_KEY_SCOPE_DESCRIPTIONS[s]}`).join('\n');

/** The schemes a document declares: only those its operations use (a scheme nothing uses only misleads a reader). */
const SECURITY_SCHEMES: Record<Exclude<Operation['auth'], 'none'>, Json> = {
  bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
  apiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description:
      'The organization’s key holds every scope; a named key (POST /api/v1/api-keys) only those it was given, and one ' +
      'bound to a user acts with that user’s role and visibility. Each operation lists the scope it needs; a key ' +
      `without it gets 403 insufficient_scope. Scopes:\n${SCOPE_LIST}`,
    'x-scopes': API_KEY_SCOPE_DESCRIPTIONS,
  },
};

/**
 * The product's own terms: the code is not published under an open licence, so the document names none
 * (`LicenseRef-` is SPDX's form for a licence outside its list).
 */
const LICENSE = { name: 'Proprietary: all rights reserved', identifier: 'LicenseRef-Proprietary' };

export interface DocumentOptions {
  title: string;
  description: string;
  serverUrl: string;
}

/** A type, not an interface: it is checked against the served schema (docs.routes.ts), whose objects are open. */
export type OpenApiDocument = {
  openapi: '3.1.0';
  info: Json;
  servers: Json[];
  components: Json;
  tags: Json[];
  paths: Record<string, Json>;
  webhooks: Json;
};

/** An OpenAPI 3.1 document for `ops`, with the security schemes and tags they use, and the webhook events. */
export function openApiDocument(ops: Operation[], opts: DocumentOptions): OpenApiDocument {
  const paths: Record<string, Json> = {};
  for (const op of ops) {
    const p = openApiPath(op.path);
    paths[p] ??= {};
    paths[p][op.method.toLowerCase()] = operation(op);
  }
  return {
    openapi: '3.1.0',
    info: { title: opts.title, version: '1.0.0', description: opts.description, license: LICENSE },
    servers: [{ url: opts.serverUrl }],
    components: {
      securitySchemes: Object.fromEntries(Object.entries(SECURITY_SCHEMES).filter(([name]) => ops.some((o) => o.auth === name))),
      schemas: { Error: jsonSchema(ErrorBody, 'output') },
    },
    tags: [...new Set(ops.flatMap((o) => o.tags))].map((name) => ({ name, description: TAGS[name] })),
    paths,
    webhooks: Object.fromEntries(
      WEBHOOK_EVENTS.map((w) => [
        w.name,
        {
          post: {
            operationId: webhookOperationId(w.name),
            summary: w.description,
            // Deliveries carry no credential of the receiver's: they are signed (see the document's description).
            security: [],
            // The event catalogue: which version of the event this describes, and its data's JSON Schema.
            'x-event-version': w.version,
            requestBody: {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['type', 'timestamp', 'data'],
                    properties: { type: { type: 'string', const: w.name }, timestamp: { type: 'string', format: 'date-time' }, data: w.schema },
                  },
                  example: { type: w.name, timestamp: '2024-05-01T10:00:00.000Z', data: w.example },
                },
              },
            },
            responses: { '200': { description: 'Any 2xx acknowledges the delivery' } },
          },
        },
      ]),
    ),
  };
}
