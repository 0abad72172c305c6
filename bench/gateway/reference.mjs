// The one-process reference for bench/gateway: the same work as GET /api/v1/profile (verify the JWT with a
// KeyObject, one SELECT by primary key through a pg pool) without the gateway → gRPC hop.
import { createSecretKey } from 'node:crypto';
import express from 'express';
import jwt from 'jsonwebtoken';
import pg from 'pg';

const key = createSecretKey(Buffer.from(process.env.JWT_SECRET, 'utf8'));
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = express();
app.get('/api/v1/profile', async (req, res) => {
  const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
  let claims;
  try {
    claims = jwt.verify(m?.[1] ?? '', key, { algorithms: ['HS256'] });
  } catch {
    return res.status(401).json({ error: { code: 'unauthenticated' } });
  }
  const { rows } = await pool.query({ name: 'profile', text: 'SELECT id, email, full_name, role, org_id, department, avatar, created_at, last_login FROM users WHERE id = $1 AND org_id = $2', values: [claims.sub, claims.org] });
  const u = rows[0];
  res.json({ id: u.id, email: u.email, fullName: u.full_name, role: u.role, orgId: u.org_id, department: u.department, avatar: u.avatar, createdAt: u.created_at, lastLogin: u.last_login });
});
app.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
