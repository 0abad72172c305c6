import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import pino from 'pino';

export type Logger = pino.Logger;

/**
 * Secrets that may appear in objects we log. Redacting by path keeps a careless `log.info({ body })`
 * from writing a password, token or key to disk.
 */
const SECRET_FIELDS = [
  'password',
  'token',
  'refreshToken',
  'accessToken',
  'userAccessToken',
  'apiKey',
  'secret',
  'sessionData',
  'proxyUrl',
  'cookie',
  'cookies',
];
const REDACT = [
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((f) => `*.${f}`),
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
];

/**
 * Secrets inside text, wherever a URL or an error message carries them: credentials in a URL
 * (`http://user:pass@proxy`), secret query parameters, and cookie strings (the chat library's errors quote its
 * requests, cookies included).
 */
const TEXT_SECRETS: Array<[RegExp, string]> = [
  [/(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/@"']+@/gi, '$1[redacted]@'],
  [/([?&;](?:access_?token|token|api_?key|key|secret|signature|sig|password|zpw_sek|zpw_enk)=)[^&\s"';]+/gi, '$1[redacted]'],
  [/((?:set-)?cookie["']?\s*[:=]\s*)("[^"]*"|'[^']*'|[^\n,}]+)/gi, '$1[redacted]'],
];

export function scrubText(text: string): string {
  let out = text;
  for (const [pattern, replacement] of TEXT_SECRETS) out = out.replace(pattern, replacement);
  return out;
}

/** A line's string fields and error messages with secrets in their text removed (one level deep: what we log). */
function scrubLine(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) {
    if (typeof value === 'string') out[key] = scrubText(value);
    else if (value instanceof Error) {
      const e = pino.stdSerializers.err(value);
      out[key] = { ...e, message: scrubText(e.message ?? ''), stack: scrubText(e.stack ?? '') };
    } else out[key] = value;
  }
  return out;
}

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
    formatters: { log: scrubLine },
    hooks: {
      // The message text too: `log.warn(\`proxy ${url} failed\`)`.
      logMethod(args, method) {
        const i = typeof args[0] === 'string' ? 0 : typeof args[1] === 'string' ? 1 : -1;
        if (i >= 0) args[i] = scrubText(args[i] as string);
        return method.apply(this, args as Parameters<typeof method>);
      },
    },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: traceFields,
  };
  return destination ? pino(options, destination) : pino(options);
}
