// bench/gateway/floor: the least a gateway can do for GET /api/v1/profile. node:http (no express, no middleware),
// the JWT verified with a KeyObject as the reference does, one @grpc/grpc-js unary call, the answer as JSON.
// FLOOR_EXPRESS=1: the same behind express (one route, res.json), to measure what express alone adds.
import http from 'node:http';
import { createSecretKey } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import express from 'express';
import jwt from 'jsonwebtoken';
import { expressServer } from '../../lib/express-server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const proto = grpc.loadPackageDefinition(protoLoader.loadSync(path.join(here, 'profile.proto'), { keepCase: false, defaults: true }));
const client = new proto.floor.v1.Floor(`127.0.0.1:${process.env.SERVICE_PORT}`, grpc.credentials.createInsecure());
const key = createSecretKey(Buffer.from(process.env.JWT_SECRET, 'utf8'));

const send = (res, status, body) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};

const claimsOf = (req) => {
  try {
    return jwt.verify(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '', key, { algorithms: ['HS256'] });
  } catch {
    return undefined;
  }
};
// FLOOR_COALESCE=1: reads that arrive in the same turn of the event loop go out as one GetProfiles call.
const coalesce = process.env.FLOOR_COALESCE === '1';
let pending = [];
const flush = () => {
  const batch = pending;
  pending = [];
  client.GetProfiles({ items: batch.map((b) => b.item) }, { deadline: Date.now() + 5000 }, (err, r) =>
    batch.forEach((b, i) => (err ? b.answer(503, { error: { code: 'unavailable' } }) : b.answer(200, r.items[i]))),
  );
};
const profile = (claims, answer) =>
  coalesce ? pending.push({ item: { userId: claims.sub, orgId: claims.org }, answer }) === 1 && setImmediate(flush) : profileOne(claims, answer);
const profileOne = (claims, answer) =>
  client.GetProfile({ userId: claims.sub, orgId: claims.org }, { deadline: Date.now() + 5000 }, (err, u) =>
    err ? answer(503, { error: { code: 'unavailable' } }) : answer(200, u),
  );

const port = Number(process.env.PORT);
const listening = () => process.stdout.write('ready\n');
if (process.env.FLOOR_EXPRESS === '1') {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.get('/api/v1/profile', (req, res) => {
    const claims = claimsOf(req);
    if (!claims) return res.status(401).json({ error: { code: 'unauthenticated' } });
    profile(claims, (status, body) => res.status(status).json(body));
  });
  expressServer(app).listen(port, '127.0.0.1', listening);
} else {
  http
    .createServer((req, res) => {
      if (req.method !== 'GET' || req.url !== '/api/v1/profile') return send(res, 404, { error: { code: 'not_found' } });
      const claims = claimsOf(req);
      if (!claims) return send(res, 401, { error: { code: 'unauthenticated' } });
      profile(claims, (status, body) => send(res, status, body));
    })
    .listen(port, '127.0.0.1', listening);
}
