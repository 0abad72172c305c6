import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Logger } from '@crm/logger';
import { ChildCache, grpcServerDuration, type Metrics } from '@crm/metrics';
import { serveCallBatch, type ServedMethod } from './call-batch';
import { AUTH_METADATA_KEY, CallContext, ORIGIN_METADATA_KEY, orgContext, REQUEST_ID_METADATA_KEY } from './context';
import { AppError, errorMetadata, grpcStatusOf } from './errors';
import type { InternalAuth } from './internal-auth';
import { isOrgFree } from './org-free';
import { loadProto, serviceDefinition } from './proto';
import { Readiness, type ReadinessCheck } from './readiness';
import { contextFromTraceparent, TRACEPARENT, traceparentOfSpan } from './trace-context';
import { GrpcTransport } from './transport';
import type { Handler, ServiceConstructor, TypedHandlers } from './typed';

const tracer = trace.getTracer('@crm/grpc-kit');

/** A handler as the wrapper sees it: the service's types were checked where the handlers were written. */
type AnyMethodHandler = Handler<unknown, unknown, CallContext>;

/**
 * PostgreSQL's refusals of a value the client sent (a NUL byte or an unencodable character in text, a malformed
 * number, uuid or date that slipped past validation) are the client's fault: 400, never an internal error.
 */
const PG_BAD_VALUE = new Set(['22021', '22P05', '22P02', '22007', '22008', '22003']);
function rejectedValue(err: unknown): AppError | undefined {
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== 'string' || !PG_BAD_VALUE.has(code)) return undefined;
  return new AppError('invalid_argument', 'A value in the request is not valid (unsupported character, or a number, id or date out of range)', {
    code: 'invalid_value',
  });
}

/**
 * The database refusing or dropping connections (too many clients, shutting down or starting up, a connection
 * lost, the pool's wait for a free connection timed out) is not a bug of the call: the same call succeeds once
 * the database has room again. UNAVAILABLE (503 with Retry-After at the gateway), not an internal error.
 */
const PG_UNAVAILABLE = new Set(['53300', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006']);
const NODE_CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
const POOL_MESSAGES = /^(timeout exceeded when trying to connect|Connection terminated( unexpectedly| due to connection timeout)?)$/;
function databaseUnavailable(err: unknown): AppError | undefined {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  const refused = typeof code === 'string' && (PG_UNAVAILABLE.has(code) || NODE_CONNECTION_ERRORS.has(code));
  if (!refused && !(typeof message === 'string' && POOL_MESSAGES.test(message))) return undefined;
  return new AppError('unavailable', 'The service cannot reach its database right now; retry shortly', { code: 'unavailable', retryAfter: 1 });
}

/** The request id the caller sent beside its token (it labels logs; it is not part of the credential). */
function requestIdOf(md: grpc.Metadata): string {
  const value = md.get(REQUEST_ID_METADATA_KEY)[0];
  return typeof value === 'string' ? value.slice(0, 200) : '';
}

/** The token from `authorization: Bearer <token>` metadata, if any. */
function tokenOf(md: grpc.Metadata): string | undefined {
  const value = md.get(AUTH_METADATA_KEY)[0];
  if (typeof value !== 'string') return undefined;
  return /^Bearer (.+)$/.exec(value)?.[1];
}

/** The call's origin (a token vouching for its org, forwarded by a service serving another call), if any. */
function originOf(md: grpc.Metadata): string {
  const value = md.get(ORIGIN_METADATA_KEY)[0];
  return typeof value === 'string' ? value : '';
}

/**
 * Wrap a handler so the call is authenticated before anything else (the internal credential, checked against
 * `fullMethod`, then the org it names, unless the method is org-free), and errors keep their meaning across the wire: AppError → its status and code, anything else →
 * INTERNAL with an errorId that is logged here and shown to the client, never the stack.
 */
function wrap(
  fullMethod: string,
  handler: AnyMethodHandler,
  log: Logger,
  auth: InternalAuth,
  done: CallTimer,
): grpc.handleUnaryCall<unknown, unknown> {
  const name = fullMethod.slice(fullMethod.indexOf('/') + 1);
  const needsOrg = !isOrgFree(fullMethod);
  return (call, cb) => {
    const started = performance.now();
    const callback = (err: grpc.ServiceError | Partial<grpc.StatusObject> | null, res?: unknown) => {
      done(err?.code ?? grpc.status.OK, performance.now() - started);
      cb(err, res);
    };
    // The handler runs inside a server span whose parent is the caller's `traceparent` (a new trace without
    // one), so what it logs, calls and enqueues carries the caller's trace id: through the active context where
    // the process keeps one, and explicitly, for a process that does without (@crm/telemetry's `activeContext`),
    // as the handler's `ctx.traceparent` and the trace fields of the lines logged here.
    const parent = contextFromTraceparent(call.metadata.get(TRACEPARENT)[0]);
    const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes: { 'rpc.system': 'grpc', 'rpc.method': name } }, parent);
    context.with(trace.setSpan(parent, span), () => serve(call, callback, span, traceparentOfSpan(span.spanContext())));
  };

  function serve(
    call: grpc.ServerUnaryCall<unknown, unknown>,
    callback: grpc.sendUnaryData<unknown>,
    span: Span,
    traceparent: string | undefined,
  ): void {
    let ctx: CallContext = { orgId: '', userId: '', role: '', requestId: '', clientIp: '' };
    const { traceId, spanId } = span.spanContext();
    // Promise.resolve().then: a handler (or the credential check) that throws synchronously is mapped like a rejected one.
    Promise.resolve()
      .then(() => {
        ctx = auth.verify(tokenOf(call.metadata), fullMethod, requestIdOf(call.metadata), originOf(call.metadata));
        ctx.traceparent = traceparent;
        // The one org check for the call: handlers of methods that act inside an org receive an OrgContext.
        return handler(call.request, needsOrg ? orgContext(ctx) : ctx);
      })
      .then(
        (res) => {
          span.end();
          callback(null, res ?? {});
        },
        (err: unknown) => {
          span.end();
          if (err instanceof AppError) {
            log.info({ method: name, requestId: ctx.requestId, code: err.code, traceId, spanId }, err.message);
            callback({ code: grpcStatusOf(err.kind), details: err.message, metadata: errorMetadata(err) });
            return;
          }
          const rejected = rejectedValue(err);
          if (rejected) {
            log.info({ method: name, requestId: ctx.requestId, pgCode: (err as { code?: string }).code, traceId, spanId }, rejected.message);
            callback({ code: grpcStatusOf(rejected.kind), details: rejected.message, metadata: errorMetadata(rejected) });
            return;
          }
          const unavailable = databaseUnavailable(err);
          if (unavailable) {
            log.warn({ err, method: name, requestId: ctx.requestId, traceId, spanId }, 'gRPC handler: database unavailable');
            callback({ code: grpcStatusOf(unavailable.kind), details: unavailable.message, metadata: errorMetadata(unavailable) });
            return;
          }
          const errorId = randomUUID();
          span.setStatus({ code: SpanStatusCode.ERROR, message: `errorId ${errorId}` });
          log.error({ err, method: name, requestId: ctx.requestId, errorId, traceId, spanId }, 'unhandled error in gRPC handler');
          const md = new grpc.Metadata();
          md.set('x-error-code', 'internal');
          md.set('x-error-id', errorId);
          callback({ code: grpc.status.INTERNAL, details: `Internal error (errorId ${errorId})`, metadata: md });
        },
      );
  }
}

/** The health service name that answers for the process alone, without the readiness checks. */
export const LIVENESS_SERVICE = 'liveness';

/** Records one finished call: its status code and how long it took (ms). */
type CallTimer = (code: grpc.status, ms: number) => void;

export class GrpcServer {
  private readonly server = new grpc.Server({
    'grpc.max_receive_message_length': 32 * 1024 * 1024,
    // Clients reconnect (after their calls finish) every few minutes and resolve the name again on the way,
    // so round-robin callers pick up pods added by a scale-up instead of keeping the addresses they started with.
    'grpc.max_connection_age_ms': 5 * 60_000,
  });
  private serving = true;
  private readonly readinessChecks: Readiness;
  /** Every unary method added, by path: what a batch of calls (call-batch.ts) runs. */
  private readonly served = new Map<string, ServedMethod>();

  /** `metrics`: every call's duration goes to `grpc_server_duration_seconds` {grpc_service, grpc_method, grpc_code}. */
  constructor(
    private readonly log: Logger,
    private readonly auth: InternalAuth,
    private readonly metrics?: Metrics,
  ) {
    this.readinessChecks = new Readiness({ log });
    // Calls a client made together arrive as one; each runs through its method's handler below, credential first.
    serveCallBatch(this.server, this.served);
    // The standard health service, so the gateway's /readyz and orchestrators can probe every server. It tells
    // nothing but "serving" (which dependency failed is logged here, not told), so it is the one service open
    // without a credential.
    const health = serviceDefinition(loadProto('grpc/health/v1/health.proto'), 'grpc.health.v1.Health');
    this.server.addService(health.service, {
      Check: (call: grpc.ServerUnaryCall<{ service?: string }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        // A readiness report that fails is an answer too: not serving (never an unanswered call).
        this.healthStatus(call.request?.service ?? '').then(
          (status) => cb(null, { status }),
          () => cb(null, { status: 'NOT_SERVING' }),
        );
      },
    });
  }

  /**
   * Dependencies the server needs to serve (`{ postgres, rabbitmq, redis }`): each health check runs them (bounded,
   * cached for a second) and answers NOT_SERVING while one fails, so /readyz shows a service that is up but cannot
   * reach its database, broker or Redis.
   */
  readiness(checks: Record<string, ReadinessCheck>): this {
    for (const [name, check] of Object.entries(checks)) this.readinessChecks.add(name, check);
    return this;
  }

  /**
   * `liveness` (the name Kubernetes' liveness and startup probes ask for): the process serves, whatever its
   * dependencies do; restarting every pod because the database is away would not bring it back. Any other name
   * (the empty one of the gateway and readiness probes): the readiness checks too.
   */
  private async healthStatus(service: string): Promise<'SERVING' | 'NOT_SERVING'> {
    if (!this.serving) return 'NOT_SERVING';
    if (service === LIVENESS_SERVICE || this.readinessChecks.size === 0) return 'SERVING';
    return (await this.readinessChecks.report()).ready ? 'SERVING' : 'NOT_SERVING';
  }

  /** Serve `ctor`'s service with one handler per method, each typed by the method's generated messages. */
  add<S>(ctor: ServiceConstructor<S>, handlers: TypedHandlers<S>): this {
    const impl: grpc.UntypedServiceImplementation = {};
    // Looked up by the method names the loader found at run time (the same proto the types were generated from).
    const byName = handlers as unknown as Record<string, AnyMethodHandler | undefined>;
    for (const method of Object.keys(ctor.service)) {
      const handler = byName[method];
      if (!handler) throw new Error(`No handler for ${ctor.serviceName}.${method}`);
      const fullMethod = ctor.service[method].path.slice(1); // crm.v1.CrmService/CreateContact
      const def = ctor.service[method];
      impl[method] = wrap(fullMethod, handler, this.log, this.auth, this.timer(fullMethod.slice(0, fullMethod.indexOf('/')), method));
      this.served.set(def.path, {
        handler: impl[method] as grpc.handleUnaryCall<unknown, unknown>,
        requestDeserialize: def.requestDeserialize,
        responseSerialize: def.responseSerialize,
      });
    }
    this.server.addService(ctor.service, impl);
    return this;
  }

  private timer(service: string, method: string): CallTimer {
    if (!this.metrics) return () => undefined;
    const histogram = grpcServerDuration(this.metrics);
    // One child per status code, made on first use; codes are the fixed gRPC set, named (NOT_FOUND) for readability.
    const byCode = new ChildCache((code: string) => histogram.labels(service, method, code));
    return (code, ms) => byCode.get(grpc.status[code] ?? String(code)).observe(ms / 1000);
  }

  /**
   * Bind and start; port 0 picks a free port. Returns the bound port. `transport`: plaintext, or mutual TLS (every
   * client must present a certificate from the deployment's CA; the health service too is behind it).
   */
  listen(host: string, port: number, transport: GrpcTransport = GrpcTransport.plaintext): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.bindAsync(`${host}:${port}`, transport.serverCredentials(), (err, bound) => {
        if (err) reject(err);
        else resolve(bound);
      });
    });
  }

  /** Stop taking new calls, let in-flight ones finish, force after `graceMs`. */
  stop(graceMs = 5000): Promise<void> {
    this.serving = false;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, graceMs);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
