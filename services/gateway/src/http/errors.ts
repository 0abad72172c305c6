import type { ErrorRequestHandler, Request, Response } from 'express';
import { z } from 'zod';
import { decodeRemoteError, FieldIssue, INTERNAL_CREDENTIAL_REFUSED, lingeringClose } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';
import { traceFieldsOf } from './tracing';

/** An error raised at the edge (validation, auth) before any service is called. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: FieldIssue[],
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

export const badRequest = (details: FieldIssue[]) =>
  new HttpError(400, 'invalid_argument', details.map((d) => `${d.field}: ${d.message}`).join('; '), details);

export function zodIssues(err: z.ZodError, prefix = ''): FieldIssue[] {
  return err.issues.map((i) => ({ field: [prefix, ...i.path.map(String)].filter(Boolean).join('.') || 'body', message: i.message }));
}

/** The house error body: `{error: {code, message, details?}, requestId}`. */
export function errorBody(res: Response, code: string, message: string, details?: FieldIssue[]) {
  return { error: { code, message, ...(details?.length ? { details } : {}) }, requestId: res.locals.requestId as string };
}

export function sendError(res: Response, status: number, code: string, message: string, details?: FieldIssue[]) {
  if (!hasUnreadBody(res.req)) return void res.status(status).json(errorBody(res, code, message, details));
  // Refused before its body was read (a 401 or 429 on an upload, a 405 with a body): answered, then the connection
  // reads and drops at most grpc-kit's linger bounds of the rest and closes, rather than keeping it open while Node
  // reads an unbounded body to reuse it (and a client that is still sending reads the answer, not a reset).
  const end = lingeringClose(res.req, res);
  const text = JSON.stringify(errorBody(res, code, message, details));
  res.status(status).type('application/json').setHeader('Content-Length', Buffer.byteLength(text));
  res.write(text);
  end();
}

/** A request whose declared body has not all been read (a request without one counts as read, even before its end). */
function hasUnreadBody(req: Request): boolean {
  if (req.complete || req.destroyed) return false;
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

function isGrpcError(err: unknown): err is { code: number; details: string; metadata: any } {
  return typeof err === 'object' && err !== null && 'code' in err && typeof (err as { code: unknown }).code === 'number' && 'metadata' in err;
}

/**
 * The one place an error becomes an HTTP response: `{error: {code, message, details?}, requestId}`.
 * Service errors keep their meaning (gRPC status → HTTP); anything unexpected is a 500 without internals.
 */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err, req: Request, res: Response, _next) => {
    if (res.headersSent) return;
    if (err instanceof HttpError) {
      if (err.retryAfter) res.setHeader('Retry-After', String(err.retryAfter));
      return sendError(res, err.status, err.code, err.message, err.details);
    }
    if (isGrpcError(err)) {
      const e = decodeRemoteError(err);
      if (e.code === INTERNAL_CREDENTIAL_REFUSED) {
        // The service refused the gateway's own credential: the deployment's keys do not match (or an address points
        // at another deployment's service). Not the caller's fault: a 401 here would sign a valid user out.
        log.error(
          { requestId: res.locals.requestId, ...traceFieldsOf(res), path: req.path, reason: e.message },
          "a backend service refused the gateway's internal credential",
        );
        return sendError(res, 502, 'bad_gateway', 'A backend service refused the gateway; the deployment needs attention');
      }
      if (e.retryAfter) res.setHeader('Retry-After', String(e.retryAfter));
      const level = e.httpStatus >= 500 ? 'error' : 'info';
      log[level]({ requestId: res.locals.requestId, ...traceFieldsOf(res), path: req.path, status: e.httpStatus, code: e.code }, e.message);
      return sendError(res, e.httpStatus, e.code, e.message, e.details);
    }
    // body-parser errors: malformed JSON and oversized bodies are the client's fault.
    const status = (err as { status?: number; type?: string }).status;
    if (status === 413) return sendError(res, 413, 'payload_too_large', 'Request body is too large');
    if (status === 400 && (err as { type?: string }).type === 'entity.parse.failed') {
      return sendError(res, 400, 'invalid_json', 'Request body is not valid JSON');
    }
    // The router could not percent-decode a path parameter (`/contacts/%ED%A0%80` is not UTF-8).
    if (status === 400 && err instanceof URIError) return sendError(res, 400, 'invalid_path', 'The path is not valid percent-encoded UTF-8');
    const errorId = res.locals.requestId;
    log.error({ err, requestId: errorId, ...traceFieldsOf(res), path: req.path }, 'unhandled error');
    return sendError(res, 500, 'internal', `Internal error (errorId ${errorId})`);
  };
}
