import http from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

/**
 * An HTTP server for `app` whose requests and responses are made as express's own objects from the start.
 *
 * Express gives each request and response its prototype as they enter the app (`Object.setPrototypeOf(req,
 * app.request)`, the same for `res`). V8 handles an object whose prototype changed after it was made on slow paths
 * from then on, in node's HTTP code as in express's: measured without sockets (bench/gateway/pipeline.cjs), the
 * gateway's app took ~130 µs per read, ~30 µs when the objects were born with express's prototypes; with the whole
 * stack running, the gateway's CPU per GET /api/v1/profile fell by about a fifth. Made with that prototype, express's
 * swap is a no-op (the object already has it), and nothing else changes: the objects are node's IncomingMessage and
 * ServerResponse, built by their own constructors, with express's request and response methods on the way up.
 */
export function expressServer(app: Express): http.Server {
  const objects = expressObjects(app);
  return objects ? http.createServer(objects, app) : http.createServer(app);
}

/**
 * The request and response constructors expressServer gives node's HTTP server (bench/gateway/pipeline.cjs makes its
 * objects with them too): node's own constructors called on an object made by `new` on a function whose prototype is
 * express's. (Reflect.construct with express's prototype as new.target made objects that were slower still, ~200 µs
 * per read.) Node 20's IncomingMessage and ServerResponse are plain functions; were they ever classes, which cannot be
 * called so, there are none (undefined) and the server is made as before.
 */
export function expressObjects(
  app: Express,
): { IncomingMessage: typeof http.IncomingMessage; ServerResponse: typeof http.ServerResponse } | undefined {
  if (isClass(http.IncomingMessage) || isClass(http.ServerResponse)) return undefined;
  const incoming = http.IncomingMessage as unknown as (this: object, socket: Socket) => void;
  const outgoing = http.ServerResponse as unknown as (this: object, req: http.IncomingMessage, options?: object) => void;
  function Request(this: object, socket: Socket) {
    incoming.call(this, socket);
  }
  Request.prototype = app.request;
  function Response(this: object, req: http.IncomingMessage, options?: object) {
    outgoing.call(this, req, options);
  }
  Response.prototype = app.response;
  return {
    IncomingMessage: Request as unknown as typeof http.IncomingMessage,
    ServerResponse: Response as unknown as typeof http.ServerResponse,
  };
}

const isClass = (f: unknown) => typeof f === 'function' && /^class\b/.test(Function.prototype.toString.call(f));
