import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import pino from 'pino';

export type Logger = pino.Logger;

/**
 * Secrets that may appear in objects we log. Redacting by path keeps a careless `log.info({ body })`
 * from writing a password, token or key to disk.
 */
const REDACT = [
  'password',
  'token',
  'refreshToken',
  'apiKey',
  'secret',
  'sessionData',
  '*.password',
  '*.token',
  '*.refreshToken',
  '*.apiKey',
  '*.secret',
  '*.sessionData',
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
];

const NO_TRACE = Object.freeze({});

/**
 * `traceId` and `spanId` of the span active where the line is written (a gRPC handler, an event being
 * consumed, a gateway request), so a log line leads to its trace and a trace to its lines. Outside any span
 * (start-up, pollers that found nothing) the line has neither.
 */
function traceFields(): object {
  const span = trace.getSpan(context.active());
  if (!span) return NO_TRACE;
  const sc = span.spanContext();
  return isSpanContextValid(sc) ? { traceId: sc.traceId, spanId: sc.spanId } : NO_TRACE;
}

export function createLogger(service: string, level = 'info'): Logger {
  return pino({
    name: service,
    level,
    base: { service },
    redact: { paths: REDACT, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: traceFields,
  });
}
