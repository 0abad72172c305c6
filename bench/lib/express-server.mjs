// An HTTP server for an express app whose requests and responses are made with express's prototypes, as the gateway
// makes its own (services/gateway/src/http/express-server.ts): express then has no prototype to swap as they enter the
// app, which V8 would pay for on every later access. The references and the floor use it so that they are measured
// with the same technique as the product (as they verify JWTs with a KeyObject, as the gateway does).
import http from 'node:http';

export function expressServer(app) {
  function Request(socket) {
    http.IncomingMessage.call(this, socket);
  }
  Request.prototype = app.request;
  function Response(req, options) {
    http.ServerResponse.call(this, req, options);
  }
  Response.prototype = app.response;
  return http.createServer({ IncomingMessage: Request, ServerResponse: Response }, app);
}
