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

/**
 * `traceId` and `spanId` of the span active where the line is written (a gRPC handler, an event being
 * consumed, a gateway request), so a log line leads to its trace and a trace to its lines. Outside any span
 * (start-up, pollers that found nothing) the line has neither. A new object every time: pino merges the
 * line's own fields into what the mixin returns.
 */
function traceFields(): object {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const sc = span.spanContext();
  return isSpanContextValid(sc) ? { traceId: sc.traceId, spanId: sc.spanId } : {};
}

/** A service's logger; `destination` (stdout by default) is for tests that read the lines. */
export function createLogger(service: string, level = 'info', destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    name: service,
    level,
    base: { service },
    redact: { paths: REDACT, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: traceFields,
  };
  return destination ? pino(options, destination) : pino(options);
}
