import type { Agent, ClientRequest } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { TRACEPARENT, type InternalAuth } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';
import { sendError } from './errors';
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
 * Proxy an already authenticated request to a service's HTTP endpoint as a stream, body and response
 * untouched (no body parser runs on these routes), with the verified caller signed for that service.
 * An unreachable service is a 503 with the usual error body.
 */
export function streamProxy(opts: StreamProxyOptions): RequestHandler {
  return createProxyMiddleware<Request, Response>({
    target: opts.target,
    agent: opts.agent,
    xfwd: false,
    proxyTimeout: IDLE_TIMEOUT_MS,
    pathRewrite: (_path, req) => opts.pathOf(req),
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
      error(err, req, res) {
        const response = res as Response;
        if (typeof response.status !== 'function' || response.headersSent) {
          // The answer had started (or the client went away): all that is left is to cut the connection.
          (res as { destroy(): void }).destroy();
          return;
        }
        opts.log.error(
          { err, requestId: response.locals.requestId, ...traceFieldsOf(response), path: (req as Request).originalUrl },
          `proxying to ${opts.serviceName} failed`,
        );
        sendError(response, 503, 'unavailable', `The ${opts.serviceName} service is unavailable; try again shortly`);
      },
    },
  });
}
