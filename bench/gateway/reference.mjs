// The one-process reference for bench/gateway: the same work as the gateway paths measured, without the gateway →
// gRPC hop. Verify the JWT with a KeyObject, then:
// - GET /api/v1/profile: one SELECT of the user by primary key (identity's database);
// - GET /api/v1/contacts/:id: crm's contact detail reads (the contact row, then its friends, notes, appointments and
//   activities in parallel, each filtered by org), on crm's database, with the same named prepared statements, and
//   the contact's conversations on messaging's database (what crm asks messaging for).
import { createSecretKey } from 'node:crypto';
import express from 'express';
import jwt from 'jsonwebtoken';
import pg from 'pg';
import { expressServer } from '../lib/express-server.mjs';

const key = createSecretKey(Buffer.from(process.env.JWT_SECRET, 'utf8'));
const identity = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const crm = new pg.Pool({ connectionString: process.env.CRM_DATABASE_URL, max: 10 });
const messaging = new pg.Pool({ connectionString: process.env.MESSAGING_DATABASE_URL, max: 10 });
const app = express();
app.disable('x-powered-by');
app.set('etag', false);

function claimsOf(req, res) {
  const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
  try {
    return jwt.verify(m?.[1] ?? '', key, { algorithms: ['HS256'] });
  } catch {
    res.status(401).json({ error: { code: 'unauthenticated' } });
    return undefined;
  }
}

app.get('/api/v1/profile', async (req, res) => {
  const claims = claimsOf(req, res);
  if (!claims) return;
  const { rows } = await identity.query({
    name: 'profile',
    text: 'SELECT id, email, full_name, role, org_id, department, avatar, created_at, last_login FROM users WHERE id = $1 AND org_id = $2',
    values: [claims.sub, claims.org],
  });
  const u = rows[0];
  res.json({
    id: u.id,
    email: u.email,
    fullName: u.full_name,
    role: u.role,
    orgId: u.org_id,
    department: u.department,
    avatar: u.avatar,
    createdAt: u.created_at,
    lastLogin: u.last_login,
  });
});

app.get('/api/v1/contacts/:id', async (req, res) => {
  const claims = claimsOf(req, res);
  if (!claims) return;
  const org = claims.org;
  const { rows } = await crm.query({ name: 'contact', text: 'SELECT * FROM contacts WHERE id = $1 AND org_id = $2', values: [req.params.id, org] });
  const c = rows[0];
  if (!c) return res.status(404).json({ error: { code: 'not_found' } });
  const [friends, notes, appointments, activities, conversations] = await Promise.all([
    crm.query({
      name: 'friends',
      text: 'SELECT contact_id, chatnet_uid, display_name, account_id FROM contact_friends WHERE org_id = $1 AND contact_id = ANY($2::uuid[]) ORDER BY added_at, id',
      values: [org, [c.id]],
    }),
    crm.query({
      name: 'notes',
      text: 'SELECT id, contact_id, content, created_by, created_at FROM contact_notes WHERE org_id = $1 AND contact_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3',
      values: [org, c.id, 100],
    }),
    crm.query({
      name: 'appointments',
      text: 'SELECT id, title, scheduled_at, status, type, notes, created_at, updated_at FROM appointments WHERE org_id = $1 AND contact_id = $2 ORDER BY scheduled_at DESC, id DESC LIMIT $3',
      values: [org, c.id, 50],
    }),
    crm.query({
      name: 'activities',
      text: 'SELECT type, occurred_at, data FROM contact_activities WHERE org_id = $1 AND contact_id = $2 ORDER BY occurred_at DESC, id DESC LIMIT $3',
      values: [org, c.id, 50],
    }),
    messaging.query({
      name: 'conversations',
      text: 'SELECT id, chatnet_account_id, message_count, last_message_at FROM conversations WHERE org_id = $1 AND contact_id = $2 ORDER BY last_message_at DESC NULLS LAST, id DESC',
      values: [org, c.id],
    }),
  ]);
  res.json({
    id: c.id,
    name: c.name,
    fullName: c.name,
    email: c.email,
    phone: c.phone,
    status: c.status,
    tags: c.tags,
    leadScore: c.lead_score,
    createdAt: c.created_at,
    updatedAt: c.updated_at,
    friends: friends.rows,
    notes: notes.rows,
    conversations: conversations.rows,
    appointments: appointments.rows,
    activities: activities.rows,
  });
});
// Made as the gateway makes its server (express's own request and response objects).
expressServer(app).listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
