// bench/gateway/floor: the least a service behind a gRPC hop can do for GET /api/v1/profile. A bare @grpc/grpc-js
// server (no credential check, no span, no metrics) answering GetProfile with the same prepared SELECT by key.
// FLOOR_ALS=1: with OpenTelemetry's AsyncLocalStorage context manager enabled and each call run in a context of its
// own, as every service does (@crm/telemetry, grpc-kit's server), to measure what that adds.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import { context, createContextKey } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import pg from 'pg';

const here = path.dirname(fileURLToPath(import.meta.url));
const proto = grpc.loadPackageDefinition(protoLoader.loadSync(path.join(here, 'profile.proto'), { keepCase: false, defaults: true }));
// Idle connections kept: a backend replaced between two runs would take its CPU time out of the figures.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, idleTimeoutMillis: 0 });
const iso = (d) => (d ? d.toISOString() : '');

const als = process.env.FLOOR_ALS === '1';
if (als) context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const CALL = createContextKey('floor call');

const server = new grpc.Server();
server.addService(proto.floor.v1.Floor.service, {
  GetProfiles: getProfiles,
  GetProfile: (call, cb) => (als ? context.with(context.active().setValue(CALL, call), () => getProfile(call, cb)) : getProfile(call, cb)),
});

const asProfile = (u) => ({
  id: u.id,
  email: u.email,
  fullName: u.full_name,
  role: u.role,
  orgId: u.org_id,
  department: u.department ?? '',
  avatar: u.avatar ?? '',
  createdAt: iso(u.created_at),
  lastLogin: iso(u.last_login),
});
// GetProfiles (the front's FLOOR_COALESCE): one SELECT for the batch, each row matched back to its (user, org) pair;
// with FLOOR_PER_ITEM=1 one SELECT per item, as a batch of unary calls (grpc-kit's call-batch.ts) runs them.
const perItem = process.env.FLOOR_PER_ITEM === '1';
const getProfilesPerItem = (call, cb) =>
  Promise.all(call.request.items.map((i) => new Promise((resolve) => getProfile({ request: i }, (err, p) => resolve(err ? {} : p))))).then((items) =>
    cb(null, { items }),
  );
function getProfiles(call, cb) {
  if (perItem) return getProfilesPerItem(call, cb);
  const items = call.request.items;
  pool
    .query({
      name: 'profiles',
      text: 'SELECT id, email, full_name, role, org_id, department, avatar, created_at, last_login FROM users WHERE id = ANY($1::uuid[])',
      values: [items.map((i) => i.userId)],
    })
    .then(({ rows }) => {
      const byId = new Map(rows.map((u) => [u.id, u]));
      cb(null, {
        items: items.map((i) => {
          const u = byId.get(i.userId);
          return u && u.org_id === i.orgId ? asProfile(u) : {};
        }),
      });
    })
    .catch((err) => cb({ code: grpc.status.INTERNAL, details: String(err) }));
}

function getProfile(call, cb) {
  pool
    .query({
      name: 'profile',
      text: 'SELECT id, email, full_name, role, org_id, department, avatar, created_at, last_login FROM users WHERE id = $1 AND org_id = $2',
      values: [call.request.userId, call.request.orgId],
    })
    .then(({ rows: [u] }) => cb(null, asProfile(u)))
    .catch((err) => cb({ code: grpc.status.INTERNAL, details: String(err) }));
}

server.bindAsync(`127.0.0.1:${process.env.GRPC_PORT}`, grpc.ServerCredentials.createInsecure(), (err) => {
  if (err) throw err;
  process.stdout.write('ready\n');
});
