// bench/gateway/floor: the least a gateway can do for GET /api/v1/profile. node:http (no express, no middleware),
// the JWT verified with a KeyObject as the reference does, one @grpc/grpc-js unary call, the answer as JSON.
import http from 'node:http';
import { createSecretKey } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import jwt from 'jsonwebtoken';

const here = path.dirname(fileURLToPath(import.meta.url));
const proto = grpc.loadPackageDefinition(protoLoader.loadSync(path.join(here, 'profile.proto'), { keepCase: false, defaults: true }));
const client = new proto.floor.v1.Floor(`127.0.0.1:${process.env.SERVICE_PORT}`, grpc.credentials.createInsecure());
const key = createSecretKey(Buffer.from(process.env.JWT_SECRET, 'utf8'));

const send = (res, status, body) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};

http
  .createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/api/v1/profile') return send(res, 404, { error: { code: 'not_found' } });
    let claims;
    try {
      claims = jwt.verify(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '', key, { algorithms: ['HS256'] });
    } catch {
      return send(res, 401, { error: { code: 'unauthenticated' } });
    }
    client.GetProfile({ userId: claims.sub, orgId: claims.org }, { deadline: Date.now() + 5000 }, (err, u) =>
      err ? send(res, 503, { error: { code: 'unavailable' } }) : send(res, 200, u),
    );
  })
  .listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
