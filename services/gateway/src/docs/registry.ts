import type { z } from 'zod';
import type { ApiKeyScope } from '@crm/auth';
import type { Tag } from './tags';

/**
 * An operation: what the OpenAPI document (/openapi.json, /api/public/openapi.json), /docs and the settings page's
 * documentation block say of a route. Each is the declaration that also mounts the route (http/route-area.ts), so
 * what is served is what is documented.
 */
export type Auth = 'bearer' | 'apiKey' | 'none';
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A response body: a zod schema for JSON, or a non-JSON media type; `null` for no body (204, redirects). */
export type ResponseBody = z.ZodType | 'binary' | 'csv' | 'html' | 'gif' | null;

export interface Operation {
  method: Method;
  /** The express pattern, in full (`/api/v1/contacts/:id`); `:name` becomes the path parameter `{name}`. */
  path: string;
  summary: string;
  description?: string;
  /** Declared with their descriptions in tags.ts. */
  tags: Tag[];
  auth: Auth;
  /**
   * For an API-key route: the scope a key needs (the route's requireScope, http/scopes.ts), or 'none' (noScopeNeeded).
   * Listed in the operation's security requirement, OAuth-style.
   */
  scope?: ApiKeyScope | 'none';
  /** Only mounted (and so only documented) when that network's sandbox control routes are on. */
  sandbox?: 'chatnet' | 'socialnet';
  /** The same zod object the handler passes to `query(req, schema)`. */
  query?: z.ZodObject;
  /** `pageParams(req, default, max)`: page and limit query parameters (`limitOnly`: the route reads only limit). */
  /**
   * page/limit query parameters; `cursor`: the list also pages by opaque cursor and takes `updatedSince`, which
   * filters and orders on the named field (http/cursor.ts).
   */
  paging?: { limit: number; max: number; limitOnly?: boolean; cursor?: 'updatedAt' | 'sentAt' };
  /**
   * The same zod schema the handler passes to `body(req, schema)`; 'binary' for a streamed upload, 'file' for a
   * streamed multipart/form-data upload of one file in the form field `file`.
   */
  body?: z.ZodType | 'binary' | 'file';
  /** A JSON body's route also takes a multipart/form-data upload of one file in the form field `file`. */
  orFile?: true;
  /** Request headers the route reads (e.g. Idempotency-Key). */
  headers?: { name: string; description: string }[];
  /** Success statuses and their bodies. */
  responses: Partial<Record<number, ResponseBody>>;
  /**
   * Error statuses beyond the ones derived from the rest of the spec (400 with a query/body/paging, 401, 403
   * and 429 with a credential, 404 with a path parameter).
   */
  errors?: number[];
  /** Statuses the derived set would add but the route cannot answer (e.g. 404 on a path that only lists). */
  noErrors?: number[];
}

/**
 * What any route can answer before it runs, whatever it reads: the edge refuses with 400 a query value holding NUL
 * or an unpaired surrogate (http/text-guard.ts) and a JSON body that does not parse. Listed on the routes that would
 * otherwise document no client error (no credential, parameter or body of their own).
 */
export const EDGE_REFUSALS = [400];

const shownAs = new WeakMap<z.ZodType, z.ZodType>();

/**
 * `schema`, shown in the document as `doc`: for a recursive request schema (a rule's if steps hold steps), whose JSON
 * Schema refers to itself through `$defs` that no operation schema of the document can resolve. The route parses with
 * `schema`; a flatter `doc` describes it.
 */
export function documentedAs<S extends z.ZodType>(schema: S, doc: z.ZodType): S {
  shownAs.set(schema, doc);
  return schema;
}

/** The schema the document shows for `schema` (itself unless documentedAs said otherwise). */
export const shownSchema = (schema: z.ZodType): z.ZodType => shownAs.get(schema) ?? schema;

export type OperationSpec = Omit<Operation, 'method' | 'path' | 'tags' | 'auth'> & { tags?: Tag[]; auth?: Auth };
