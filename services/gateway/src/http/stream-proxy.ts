import type { Agent, ClientRequest, IncomingMessage } from 'node:http';
import { finished } from 'node:stream';
import type { Request, RequestHandler, Response } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { lingeringClose, TRACEPARENT, type InternalAuth } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';
import { errorBody } from './errors';
import { ctxOf } from './principal';
import { traceFieldsOf } from './tracing';

export interface StreamProxyOptions {
  /** Base URL of the service's HTTP endpoint, e.g. messaging's MESSAGING_HTTP_URL. */
  target: string;
  /** The operation the signed credential is for (the service checks it against its policy), per request. */
  operationOf(req: Request): string;
  /** Path on the target for this request (the gateway's own path never leaks through). */
  pathOf(req: Request): string;
  auth: InternalAuth;
  /** A keep-alive agent: a new connection per upload cost most of the proxy's time in the bench. */
  agent: Agent;
  log: Logger;
  /** Human name in the 503 message. */
  serviceName: string;
}

/** Headers that carry the client's own credentials: the service gets the signed context instead. */
const CLIENT_CREDENTIALS = ['authorization', 'x-api-key', 'cookie', 'proxy-authorization'];

/** A socket idle this long while proxying (no byte either way) ends the transfer. */
const IDLE_TIMEOUT_MS = 60_000;

/**
 * Hop-by-hop headers (RFC 9110 §7.6.1): they describe the service's connection to the gateway, not the gateway's to its
 * client. The service's `Connection: close` after an upload it cut off closed the client's keep-alive connection too.
 */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

/** Responses the service's answer is being passed on to, and whether all of it was. */
const answers = new WeakMap<Response, { whole: boolean }>();

/**
 * Proxy an already authenticated request to a service's HTTP endpoint as a stream, body and response
 * untouched (no body parser runs on these routes), with the verified caller signed for that service.
 * An unreachable service is a 503 with the usual error body; once the service has answered, its answer is the one
 * the client gets.
 */
export function streamProxy(opts: StreamProxyOptions): RequestHandler {
  return createProxyMiddleware<Request, Response>({
    target: opts.target,
    agent: opts.agent,
    xfwd: false,
    proxyTimeout: IDLE_TIMEOUT_MS,
    pathRewrite: (_path, req) => opts.pathOf(req),
    // The answer is passed on by passOn, not by http-proxy: it may have to end only after the client's body (see there).
    selfHandleResponse: true,
    on: {
      proxyReq(proxyReq: ClientRequest, req, res) {
        for (const h of CLIENT_CREDENTIALS) proxyReq.removeHeader(h);
        const ctx = ctxOf(req, res);
        proxyReq.setHeader('authorization', `Bearer ${opts.auth.sign(ctx, opts.operationOf(req as Request))}`);
        proxyReq.setHeader('x-request-id', ctx.requestId);
        // The client's own traceparent is replaced by the gateway request span's (a child of it).
        const traceparent = ctx.traceparent;
        if (traceparent) proxyReq.setHeader(TRACEPARENT, traceparent);
        else proxyReq.removeHeader(TRACEPARENT);
      },
      proxyRes(proxyRes, req, res) {
        passOn(proxyRes, req as Request, res as Response);
      },
      error(err, req, res) {
        const response = res as Response;
        const answer = answers.get(response);
        // The service's whole answer is on its way to the client: what failed after it (the rest of a body no one
        // reads any more, written to a connection the service closed) changes nothing.
        if (answer?.whole) return;
        if (answer || typeof response.status !== 'function' || response.headersSent) {
          // The answer had started (or the client went away): all that is left is to cut the connection.
          (res as { destroy(): void }).destroy();
          return;
        }
        opts.log.error(
          { err, requestId: response.locals.requestId, ...traceFieldsOf(response), path: (req as Request).originalUrl },
          `proxying to ${opts.serviceName} failed`,
        );
        const text = JSON.stringify(errorBody(response, 'unavailable', `The ${opts.serviceName} service is unavailable; try again shortly`));
        const end = endAfterBody(req as Request, response);
        response.status(503).set({ 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(text)) });
        response.write(text);
        end();
      },
    },
  });
}

/**
 * The service's answer, as it came: status, end-to-end headers, body streamed. When the client is still sending its
 * body (the service answered early: past its hard cap, or refusing it unread), the rest of that body is no longer sent
 * to the service, and the request to it, never finished, is destroyed once its answer is in: the agent never reuses a
 * socket with half a request on it.
 */
function passOn(proxyRes: IncomingMessage, req: Request, res: Response) {
  const answer = { whole: false };
  answers.set(res, answer);
  res.statusCode = proxyRes.statusCode ?? 502;
  if (proxyRes.statusMessage) res.statusMessage = proxyRes.statusMessage;
  for (const [name, value] of Object.entries(proxyRes.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) res.setHeader(name, value);
  const end = endAfterBody(req, res);
  const toService = (proxyRes as IncomingMessage & { req: ClientRequest }).req;
  proxyRes.pipe(res, { end: false });
  proxyRes.once('end', () => (answer.whole = true));
  finished(proxyRes, (err) => {
    if (!toService.writableFinished) toService.destroy();
    // The service's answer broke off midway: so does this one.
    if (err && !answer.whole) return void res.destroy();
    end();
  });
}

/**
 * How an answer ends: at once when the request's body was all read, else after a bounded linger while the client
 * finishes sending, so that it reads the answer rather than a reset (grpc-kit's lingeringClose). Call before the
 * answer's headers go out.
 */
function endAfterBody(req: Request, res: Response): () => void {
  return req.complete ? () => res.end() : lingeringClose(req, res);
}
