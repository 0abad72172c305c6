import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import type { CallContext, Permission } from '@crm/grpc-kit';
import type { Auth, Method, Operation, OperationSpec, ResponseBody } from '../docs/registry';
import type { Tag } from '../docs/tags';
import type { RouteDeps } from '../routes/deps';
import { requirePermission } from './permission';
import { noScopeNeeded, requireScope } from './scopes';
import { ctxOf } from './principal';
import { body as parseBody, indexedBody, pageParams, pathParam, query as parseQuery } from './validate';

/**
 * One declaration per route (issue #30 item 4): method and path, auth, permission, query, body, the success response's
 * schema and the handler, in one place. The area mounts the handlers on an express router and gives the same
 * declarations to the OpenAPI document (docs/index.ts), so what is served and what is documented cannot drift, and the
 * response schema is the one the mapper is typed by and the one live responses are checked against (RESPONSE_CONTRACT).
 */

type SuccessStatus = 200 | 201 | 202 | 204;
/** A status a route answers with its declared body: a success, or /readyz's 503 (the same body, not ready). */
type AnswerStatus = SuccessStatus | 503;
type Parsed<S> = S extends z.ZodType ? z.infer<S> : undefined;
/** A body the route documents but does not parse: a streamed multipart upload of one file, or raw bytes. */
type StreamedBody = 'file' | 'binary';

/** What `sent()` returns: the handler answered through `res` itself. */
const SENT: unique symbol = Symbol('sent through res');
type Sent = typeof SENT;

/** What a handler gets: the request already validated against the route's declaration. */
export interface RouteInput<Q, B> {
  req: Request;
  res: Response;
  query: Q;
  body: B;
  /**
   * page/limit of a route declared with `paging` (clamped as pageParams does); unread query values otherwise, and for
   * a `limitOnly` (cursor-paged) list, whose handler reads limit and cursor itself (http/cursor.ts publicPage).
   */
  page: { page: number; limit: number };
  /** The verified caller, for the gRPC call. */
  ctx: CallContext;
  /** A `:name` path parameter. */
  param(name: string): string;
  /** Answer with the route's `also` status instead of its own (e.g. 200 for a conversation that already existed). */
  answerWith(status: SuccessStatus): void;
  /**
   * The handler answered through `res` with another representation than the declared one (a browser's page where a
   * mail client gets the JSON): `return sent(res.type('html').send(page))`. Nothing more is sent or checked.
   */
  sent(res: Response): Sent;
  deps: RouteDeps;
}

interface RouteOptions<
  R extends ResponseBody,
  Q extends z.ZodObject | undefined,
  B extends z.ZodType | StreamedBody | undefined,
  A extends z.ZodType | undefined = undefined,
> extends Omit<OperationSpec, 'responses' | 'query' | 'body'> {
  /** Refused with 403 at the edge when the caller's role lacks it (the service checks again). */
  permission?: Permission;
  query?: Q;
  /**
   * The JSON body's schema, parsed before the handler runs (400 naming the field). 'file' or 'binary': a streamed
   * body, documented only; the handler (or the route's middleware) reads the stream itself, so the route is mounted
   * before the JSON parser (a module's `stream` router).
   */
  body?: B;
  /** Name array items by index in a body's 400 (`actions[2].assigneeId`), as rules, macros and API keys do. */
  indexedBody?: boolean;
  /**
   * `query` documents the parameters but the handler parses them itself (from `req`), e.g. after merging a saved
   * view's filters (views.apply.ts) under the request's own; `input.query` is then undefined.
   */
  ownQuery?: true;
  /**
   * Express handlers run before everything else of the route (the area's own first): a credential check for a route
   * mounted before the app's bearer check, a per-IP rate limit, an upload's own parser or size check. Given the deps,
   * as the router is. Not part of the document.
   */
  middleware?: (deps: RouteDeps) => RequestHandler[];
  /**
   * The success status; 200 unless said. Several (`[200, 201]`): each documented with the same response, the first
   * answered unless the handler set another of them with `res.status()` (created the first time, 200 after; /readyz's
   * 503 when not ready). A second answer with its own schema is `also`.
   */
  status?: SuccessStatus | readonly [SuccessStatus, ...AnswerStatus[]];
  /**
   * The success body's schema (null: no body). The handler's return value is checked against it under RESPONSE_CONTRACT.
   * 'csv', 'html', 'gif' or 'binary': the handler answers itself through `res` (a stream, a page, a pixel).
   */
  response: R;
  /**
   * A second success answer the handler may choose with `answerWith(status)` (a send scheduled instead of sent: 202),
   * documented beside the first and checked against its own schema.
   */
  also?: { status: SuccessStatus; response: A };
}

export type RouteSpec<
  R extends ResponseBody,
  Q extends z.ZodObject | undefined,
  B extends z.ZodType | StreamedBody | undefined,
  A extends z.ZodType | undefined = undefined,
> = RouteOptions<R, Q, B, A> &
  (
    | {
        handler(
          input: RouteInput<Parsed<Q>, Parsed<B>>,
        ): Promise<(R extends z.ZodType ? z.input<R> : void) | (A extends z.ZodType ? z.input<A> : never) | Sent>;
      }
    | {
        /**
         * No handler: the route's middleware answers every request itself (a stream proxied untouched to a service),
         * so nothing is parsed or contract-checked here; the declaration documents what passes through.
         */
        handler?: undefined;
        middleware: (deps: RouteDeps) => RequestHandler[];
      }
  );

const NO_PAGING = Object.freeze({ page: 1, limit: 0 });

/** Checks a success body against its declared schema (of `status`, else the first); a mismatch is a defect of the gateway, answered 500. */
export type ResponseContract = (op: Operation, body: unknown, status?: number) => void;

export function successStatusOf(op: Operation): number {
  return Number(Object.keys(op.responses).find((st) => Number(st) >= 200 && Number(st) < 300) ?? 200);
}

/**
 * Routes with static segments before routes with a parameter in the same place, so `/tasks/due` is never taken
 * for `/tasks/:id` whatever order the file declares them in.
 */
function bySpecificity(a: Operation, b: Operation): number {
  const as = a.path.split('/');
  const bs = b.path.split('/');
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    const ap = as[i].startsWith(':') || as[i].startsWith('*');
    const bp = bs[i].startsWith(':') || bs[i].startsWith('*');
    if (ap !== bp) return ap ? 1 : -1;
  }
  return 0;
}

/** A group of routes sharing a path prefix, an auth scheme and a documentation tag: `area.route('GET /tasks', {...})`. */
export function routeArea(defaults: {
  prefix: string;
  auth: Auth;
  tag: Tag;
  middleware?: (deps: RouteDeps) => RequestHandler[];
  /** Only mounted (and so only documented) when that network's sandbox control routes are on. */
  sandbox?: Operation['sandbox'];
}) {
  const declared: {
    op: Operation;
    spec: RouteSpec<ResponseBody, z.ZodObject | undefined, z.ZodType | StreamedBody | undefined, z.ZodType | undefined>;
  }[] = [];

  return {
    route<
      R extends ResponseBody,
      Q extends z.ZodObject | undefined = undefined,
      B extends z.ZodType | StreamedBody | undefined = undefined,
      A extends z.ZodType | undefined = undefined,
    >(key: `${Method} /${string}`, spec: RouteSpec<R, Q, B, A>): void {
      const [method, path] = key.split(' ') as [Method, string];
      const { permission: _p, status = 200, response, also, handler: _h, query, body, indexedBody: _i, ownQuery: _o, middleware: _m, ...doc } = spec;
      if (defaults.auth === 'apiKey' && !doc.scope) throw new Error(`${key}: an API-key route declares its scope (or 'none')`);
      const statuses: readonly number[] = typeof status === 'number' ? [status] : status;
      const op: Operation = {
        tags: [defaults.tag],
        auth: defaults.auth,
        ...(defaults.sandbox ? { sandbox: defaults.sandbox } : {}),
        ...doc,
        ...(query ? { query } : {}),
        ...(body ? { body } : {}),
        responses: { ...Object.fromEntries(statuses.map((st) => [st, response])), ...(also ? { [also.status]: also.response } : {}) },
        method,
        path: defaults.prefix + path,
      };
      declared.push({ op, spec: spec as unknown as (typeof declared)[number]['spec'] });
    },

    /** The declared operations, for the OpenAPI document. */
    get ops(): Operation[] {
      return declared.map((d) => d.op);
    },

    /** An express router serving the declared routes (paths relative to the prefix), most specific first. */
    router(deps: RouteDeps, contract?: ResponseContract): Router {
      const r = Router();
      for (const { op, spec } of [...declared].sort((a, b) => bySpecificity(a.op, b.op))) {
        const handlers: RequestHandler[] = [...(defaults.middleware?.(deps) ?? []), ...(spec.middleware?.(deps) ?? [])];
        // An API-key route's scope as the middleware public-route-scopes.test.ts reads off the router (op.scope documents it).
        if (op.scope) handlers.push(op.scope === 'none' ? noScopeNeeded : requireScope(op.scope));
        if (spec.permission) handlers.push(requirePermission(spec.permission));
        const path = op.path.slice(defaults.prefix.length);
        const mount = (...last: RequestHandler[]) =>
          r[op.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'](path, ...handlers, ...last);
        const handler = spec.handler;
        if (!handler) {
          // The middleware answers; a request it passes on is a defect of the route, not a 404.
          mount(() => {
            throw new Error(`${op.method} ${op.path}: its middleware answered nothing`);
          });
          continue;
        }
        const body = typeof spec.body === 'object' ? spec.body : undefined;
        const statuses: readonly number[] = typeof spec.status === 'object' ? spec.status : [spec.status ?? 200];
        mount(async (req, res) => {
          let chosen: number | undefined;
          const input: RouteInput<unknown, unknown> = {
            req,
            res,
            query: spec.query && !spec.ownQuery ? parseQuery(req, spec.query) : undefined,
            body: body ? (spec.indexedBody ? indexedBody : parseBody)(req, body) : undefined,
            page: spec.paging && !spec.paging.limitOnly ? pageParams(req, spec.paging.limit, spec.paging.max) : NO_PAGING,
            ctx: ctxOf(req, res),
            param: (name) => pathParam(req, name),
            answerWith: (answer) => {
              if (answer !== spec.also?.status) throw new Error(`${op.method} ${op.path}: ${answer} is not a declared answer`);
              chosen = answer;
            },
            sent: () => SENT,
            deps,
          };
          if (statuses.length > 1) res.status(statuses[0]);
          const out = await handler(input as never);
          if (res.headersSent || res.destroyed) return;
          if (out === SENT) throw new Error(`${op.method} ${op.path}: said it answered, and sent nothing`);
          const status = chosen ?? (statuses.includes(res.statusCode) ? res.statusCode : statuses[0]);
          if (spec.response === null) return void res.status(status).end();
          if (typeof spec.response === 'string') throw new Error(`${op.method} ${op.path}: declared ${spec.response}, answered nothing`);
          contract?.(op, out, status);
          res.status(status).json(out);
        });
      }
      return r;
    },
  };
}
