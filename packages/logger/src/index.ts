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

export function createLogger(service: string, level = 'info'): Logger {
  return pino({
    name: service,
    level,
    base: { service },
    redact: { paths: REDACT, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
