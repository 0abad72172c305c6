import { context, SpanKind, SpanStatusCode, trace, type Context } from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import { contextFromTraceparent } from '@crm/grpc-kit';

const tracer = trace.getTracer('@crm/gateway');

/**
 * Every request runs in a server span: the child of the client's `traceparent` header when it sent a valid
 * one (its trace id then reaches every service, event and webhook the request causes), else the root of a
 * new trace. The span is active for the rest of the chain, so gRPC calls carry it (grpc-kit's client) and
 * log lines name it. A manual span, not the http/express instrumentation: two ids and an object per request.
 */
export const traceRequests: RequestHandler = (req, res, next) => {
  const parent = contextFromTraceparent(req.headers.traceparent);
  const span = tracer.startSpan(req.method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } }, parent);
  const ctx = trace.setSpan(parent, span);
  res.locals.traceContext = ctx;
  res.once('close', () => {
    // The matched route (`/api/public/contacts/:id`), not the path, so names group requests of one route.
    const route = req.route?.path;
    if (typeof route === 'string') span.updateName(`${req.method} ${req.baseUrl}${route}`);
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
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
