// bench/gateway/pipeline.cjs: CPU per request of the gateway's express app alone: no sockets (a sink stream), no
// authentication (a bearer that sets the principal), no gRPC (an identity client that answers at once). What is left is
// express, the gateway's middleware and router, the route's handler and node's HTTP response writing: the part of a read
// that does not depend on the services, measured in microseconds with little noise.
//
// Usage: node bench/gateway/pipeline.cjs [--path <a GET route identity's GetProfile answers: /api/v1/profile>] [--requests 30000] [--objects node|express]
//   --objects node: requests and responses made by node's own constructors (express swaps their prototype as they
//   enter the app, as with http.createServer(app)); express (the default): made with express's prototypes from the
//   start, as the gateway's server makes them (services/gateway/src/http/express-server.ts).
const http = require('node:http');
const path = require('node:path');
const { Duplex } = require('node:stream');
const { parseArgs } = require('node:util');

const { values: args } = parseArgs({
  options: {
    path: { type: 'string', default: '/api/v1/profile' },
    requests: { type: 'string', default: '30000' },
    objects: { type: 'string', default: 'express' },
  },
});
const dist = path.join(__dirname, '..', '..', 'services', 'gateway', 'dist');
const { buildApp } = require(path.join(dist, 'app'));
const { loadConfig } = require(path.join(dist, 'config'));
const { Metrics } = require('@crm/metrics');

const user = {
  id: 'abb7fb56-0ab9-43a2-baae-c3e39094cfd7',
  email: 'b@example.com',
  fullName: 'Ben Ch',
  role: 'owner',
  orgId: 'cba6eb9d-1706-4a41-bf27-cd2f786784c4',
  status: 'active',
  createdAt: '2026-12-05T04:55:42.773Z',
  lastLogin: '2026-12-05T04:55:42.773Z',
  availability: 'offline',
};
const pass = (_req, _res, next) => next();
const bearer = (_req, res, next) => {
  res.locals.principal = { kind: 'user', orgId: user.orgId, userId: user.id, role: 'owner', jti: 'j', exp: 2e9 };
  next();
};
const identity = new Proxy({}, { get: () => async () => user });
const app = buildApp({
  config: loadConfig({ JWT_SECRET: 'pipeline-bench-secret-'.repeat(2), NODE_ENV: 'development', RESPONSE_CONTRACT: 'off' }),
  clients: new Proxy({}, { get: (_t, name) => (name === 'identity' ? identity : undefined) }),
  auth: { bearer, apiKey: pass },
  authLimit: pass,
  linkLimit: pass,
  metrics: new Metrics('gateway'),
  log: {
    info() {},
    warn() {},
    error() {},
    debug() {},
    child() {
      return this;
    },
  },
});

// express: the constructors the gateway's server uses (services/gateway/src/http/express-server.ts).
const { expressObjects } = require(path.join(dist, 'http', 'express-server'));
if (!['node', 'express'].includes(args.objects)) throw new Error('--objects: node or express');
const { IncomingMessage: Request, ServerResponse: Response } = (args.objects === 'express' && expressObjects(app)) || http;

class Sink extends Duplex {
  _read() {}
  _write(_chunk, _encoding, cb) {
    cb();
  }
  _writev(_chunks, cb) {
    cb();
  }
}

function one() {
  return new Promise((resolve, reject) => {
    const socket = new Sink();
    const req = new Request(socket);
    Object.assign(req, { method: 'GET', url: args.path, httpVersionMajor: 1, httpVersionMinor: 1, httpVersion: '1.1', complete: true });
    req.headers = { host: 'localhost:8080', authorization: 'Bearer x' };
    req.rawHeaders = ['host', 'localhost:8080', 'authorization', 'Bearer x'];
    req.push(null);
    const res = new Response(req);
    res.assignSocket(socket);
    res.on('finish', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${args.path} answered ${res.statusCode}`))));
    app(req, res);
  });
}

// 50 requests in flight, as bench/gateway's autocannon keeps.
async function run(n) {
  let started = 0;
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (started++ < n) await one();
    }),
  );
}

(async () => {
  const n = Number(args.requests);
  await run(20_000);
  for (let round = 1; round <= 3; round++) {
    const before = process.cpuUsage();
    await run(n);
    const used = process.cpuUsage(before);
    console.log(`${args.path} (objects: ${args.objects}), round ${round}: ${((used.user + used.system) / n).toFixed(1)} µs CPU per request`);
  }
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
