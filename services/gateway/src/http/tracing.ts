import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context } from '@opentelemetry/api';
import type { RequestHandler, Response } from 'express';
import { contextFromTraceparent, traceparentOfSpan } from '@crm/grpc-kit';

const tracer = trace.getTracer('@crm/gateway');

/**
 * Every request runs in a server span: the child of the client's `traceparent` header when it sent a valid
 * one (its trace id then reaches every service, event and webhook the request causes), else the root of a
 * new trace. The span's `traceparent` is kept in `res.locals.traceparent`, and the gateway passes it explicitly
 * in each gRPC call's context (principal.ts ctxOf): it does not depend on the span being active, so the gateway
 * runs without AsyncLocalStorage when nothing is exported (see @crm/telemetry's `activeContext`). When spans are
 * exported (a recording span), the span is also made active for the rest of the chain and ended with the
 * response's route and status. A manual span, not the http/express instrumentation: two ids and an object per request.
 */
export const traceRequests: RequestHandler = (req, res, next) => {
  const parent = contextFromTraceparent(req.headers.traceparent);
  const span = tracer.startSpan(req.method, { kind: SpanKind.SERVER }, parent);
  const ctx = trace.setSpan(parent, span);
  res.locals.traceContext = ctx;
  res.locals.traceparent = traceparentOfSpan(span.spanContext());
  if (span.isRecording()) {
    span.setAttribute('http.request.method', req.method);
    res.once('close', () => {
      // The matched route (`/api/public/contacts/:id`), not the path, so names group requests of one route.
      const route = req.route?.path;
      if (typeof route === 'string') span.updateName(`${req.method} ${req.baseUrl}${route}`);
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
  }
  // Without a context manager (nothing exported) this is a plain call.
  context.with(ctx, next);
};

/**
 * The body parser calls `next` from the request stream's events, which run outside the context entered
 * above; this re-enters the request's span after it.
 */
export const resumeTrace: RequestHandler = (_req, res, next) => {
  const ctx = res.locals.traceContext as Context | undefined;
  if (ctx) context.with(ctx, next);
  else next();
};

/**
 * `traceId` and `spanId` of the request's span for a log line written on its behalf: the logger finds them in the
 * active span only when there is a context manager, which the gateway goes without when nothing is exported.
 */
export function traceFieldsOf(res: Response): { traceId?: string; spanId?: string } {
  const sc = trace.getSpanContext((res.locals.traceContext as Context | undefined) ?? ROOT_CONTEXT);
  return sc ? { traceId: sc.traceId, spanId: sc.spanId } : {};
}
