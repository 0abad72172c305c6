import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import {
  AppError,
  CallContext,
  type GrpcTransport,
  grpcStatusOf,
  httpStatusOf,
  InternalAuth,
  lingeringClose,
  ORIGIN_METADATA_KEY,
  orgContext,
} from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { attachments } from '../attachments';
import { receiveFile } from './multipart';

/** The operations of this HTTP surface, named like gRPC methods so the internal credential's policy covers them. */
export const HTTP_OPERATIONS = {
  upload: 'messaging.v1.Http/UploadAttachment',
  download: 'messaging.v1.Http/DownloadAttachment',
} as const;

/** Multipart framing and form fields around the file never come near this; past it the rest of the body is not parsed. */
const FORM_OVERHEAD_BYTES = 1024 * 1024;
const INLINE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
const ATTACHMENT_PATH = /^\/v1\/attachments\/([^/]+)$/;

export interface RunningHttp {
  port: number;
  stop(): Promise<void>;
}

/**
 * Attachment bytes over HTTP, streamed both ways (a gRPC message would hold a whole file in memory on both
 * sides). Only the gateway calls it, with the caller's context signed for messaging: a request without a valid
 * internal credential is refused before its body is read. With mutual TLS (`transport`) it is HTTPS and a caller
 * without a certificate from the deployment's CA is refused at the handshake, as on the gRPC port.
 *   POST /v1/attachments      multipart/form-data, one file in field `file` → 201 attachment
 *   GET  /v1/attachments/:id  the bytes
 */
export async function startHttpServer(deps: Deps, auth: InternalAuth, transport: GrpcTransport): Promise<RunningHttp> {
  const server = transport.createHttpServer((req, res) => {
    handle(deps, auth, req, res).catch((err) => sendError(deps, req, res, err));
  });
  // The gateway reuses idle keep-alive connections for attachment streams; at Node's default of 5 s a request it
  // sent on a connection this server was closing at that moment failed (ECONNRESET → a 503 for a plain GET).
  // Kept longer than the gateway lets a connection idle in practice, as the gateway does towards its own clients.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(deps.config.HTTP_PORT, deps.config.HTTP_HOST, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // In-flight transfers get a moment to finish, then go: shutdown must not wait on a slow client.
        setTimeout(() => server.closeAllConnections(), 2_000).unref();
      }),
  };
}

async function handle(deps: Deps, auth: InternalAuth, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://messaging');
  if (url.pathname === '/v1/attachments' && req.method === 'POST') return upload(deps, req, res, callerOf(auth, req, HTTP_OPERATIONS.upload));
  const m = ATTACHMENT_PATH.exec(url.pathname);
  if (m && (req.method === 'GET' || req.method === 'HEAD'))
    return download(deps, req, res, callerOf(auth, req, HTTP_OPERATIONS.download), decodeURIComponent(m[1]));
  throw new AppError('not_found', `No route for ${req.method} ${url.pathname}`);
}

function callerOf(auth: InternalAuth, req: IncomingMessage, operation: string): CallContext {
  const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  const requestId = req.headers['x-request-id'];
  const origin = req.headers[ORIGIN_METADATA_KEY];
  return auth.verify(m?.[1], operation, typeof requestId === 'string' ? requestId.slice(0, 200) : '', typeof origin === 'string' ? origin : '');
}

async function upload(deps: Deps, req: IncomingMessage, res: ServerResponse, caller: CallContext) {
  (res as ResponseWithCtx).ctx = caller;
  // The HTTP port's one org check (the gRPC server wrapper makes it for gRPC calls); the error answer still names the request.
  const ctx = orgContext(caller);
  const plan = await attachments.planUpload(deps, ctx);
  let file;
  try {
    file = await receiveFile(req, {
      field: 'file',
      tempPath: plan.tempPath,
      keepBytes: plan.keepBytes,
      hardCapBytes: deps.config.ATTACHMENT_MAX_BYTES + FORM_OVERHEAD_BYTES,
      tooLarge: () => attachments.tooLarge(deps),
    });
  } catch (err) {
    await attachments.abandonUpload(plan);
    throw err;
  }
  const out = await attachments.completeUpload(deps, ctx, plan, file);
  sendJson(req, res, ctx, 201, out);
}

async function download(deps: Deps, req: IncomingMessage, res: ServerResponse, caller: CallContext, id: string) {
  (res as ResponseWithCtx).ctx = caller;
  // The HTTP port's one org check (the gRPC server wrapper makes it for gRPC calls); the error answer still names the request.
  const ctx = orgContext(caller);
  const { row, location, size } = await attachments.locate(deps, ctx, id);
  const inline = INLINE_TYPES.has(row.content_type);
  res.writeHead(200, {
    'Content-Type': row.content_type,
    'Content-Length': String(size),
    // Anything but a plain image is a download, so an uploaded HTML or SVG file never runs in our origin.
    'Content-Disposition': contentDisposition(inline ? 'inline' : 'attachment', row.filename),
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'private, max-age=300',
    ...(row.sha256 ? { ETag: `"${row.sha256}"` } : {}),
    ...(ctx.requestId ? { 'x-request-id': ctx.requestId } : {}),
  });
  if (req.method === 'HEAD') return void res.end();
  await pipeline(createReadStream(location), res).catch((err) => {
    // Headers are gone: the client sees a cut transfer (shorter than Content-Length), never a wrong file.
    if ((err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE')
      deps.log.warn({ err, attachmentId: id }, 'attachment download failed midway');
    res.destroy();
  });
}

/** A header value that cannot break out of its quotes, plus the exact name for clients that read filename*. */
export function contentDisposition(kind: 'inline' | 'attachment', filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/**
 * Answers only this port gives: HTTP has a status for a file that existed and is gone for good (410), which gRPC (and
 * so the kind's mapping) has not.
 */
const STATUS_OF_CODE: Record<string, number> = { [attachments.ATTACHMENT_EXPIRED]: 410 };

type ResponseWithCtx = ServerResponse & { ctx?: CallContext };

function requestIdOf(req: IncomingMessage, res: ServerResponse): string {
  const fromCtx = (res as ResponseWithCtx).ctx?.requestId;
  const header = req.headers['x-request-id'];
  return fromCtx || (typeof header === 'string' && header.length <= 200 ? header : randomUUID());
}

function sendJson(req: IncomingMessage, res: ServerResponse, ctx: CallContext | undefined, status: number, body: unknown) {
  const text = JSON.stringify(body);
  // Answered before the body was all read (past the hard cap, or refused before reading it): the connection closes,
  // but only once the client stopped sending (bounded), so it reads this answer rather than a reset (lingeringClose).
  const end = req.complete ? undefined : lingeringClose(req, res);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
    ...(ctx?.requestId ? { 'x-request-id': ctx.requestId } : {}),
  });
  if (!end) return void res.end(text);
  res.write(text);
  end();
}

/** The house error body; unexpected errors are a 500 with an errorId and no internals. */
function sendError(deps: Deps, req: IncomingMessage, res: ServerResponse, err: unknown) {
  const requestId = requestIdOf(req, res);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err instanceof AppError) {
    const status = STATUS_OF_CODE[err.code] ?? httpStatusOf(grpcStatusOf(err.kind));
    deps.log.info({ requestId, path: req.url, status, code: err.code }, err.message);
    const body = { error: { code: err.code, message: err.message, ...(err.details?.length ? { details: err.details } : {}) }, requestId };
    return sendJson(req, res, { requestId } as CallContext, status, body);
  }
  deps.log.error({ err, requestId, path: req.url }, 'unhandled error in the attachments HTTP server');
  sendJson(req, res, { requestId } as CallContext, 500, { error: { code: 'internal', message: `Internal error (errorId ${requestId})` }, requestId });
}
