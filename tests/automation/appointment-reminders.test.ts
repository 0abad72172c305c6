import { Client as PgClient } from 'pg';
import { eventually } from '@crm/testing';
import { client, type Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { eventBus, member, org } from './support';
import { connectPatiently } from '../support/patient-client';

// Appointment reminders with the real crm: appointments made through the gateway reach automation as events, and
// at scheduledAt - reminderMinutesBefore the contact's assigned user gets one `appointment.reminder` notification
// (and its notification.created event, which the gateway pushes to their socket).
describe('appointment reminders', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let pushed: Array<{ id: string; type: string; orgId: string; data: any }>;
  let db: PgClient;
  let owner: Client;
  let agent: Awaited<ReturnType<typeof member>>;
  let admin: Awaited<ReturnType<typeof member>>;
  let assignedContact: string;
  let markerContact: string;

  const inMinutes = (m: number) => new Date(Date.now() + m * 60_000).toISOString();
  const remindersOf = async (as: Client) =>
    (await as.get('/api/v1/notifications?limit=100')).body.data.filter((n: any) => n.type === 'appointment.reminder');
  const appointment = async (as: Client, contactId: string, title: string, scheduledAt: string) => {
    const res = await as.post('/api/v1/appointments', { contactId, title, scheduledAt });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  /** automation's copy of the appointment, once its latest event was applied (behind the API: nothing shows it). */
  const reminderRow = (id: string, pred: (r: any) => boolean = () => true) =>
    eventually(async () => {
      const { rows } = await db.query('SELECT * FROM appointment_reminders WHERE appointment_id = $1', [id]);
      return rows[0] && pred(rows[0]) ? rows[0] : undefined;
    });
  /**
   * Resolves once the reminder timer has claimed after this call began and holds none of `ids`: the marker for "the
   * timer had its chance to remind them". An appointment made now inside the window (of a contact nobody is assigned
   * to, so nobody is notified) is handled (sent_at) only by a claim made after it was written, and a claim takes every
   * reminder then due; one of `ids` taken in error keeps its lease until its work is done.
   */
  const timerPassed = async (ids: string[]) => {
    const marker = await appointment(owner, markerContact, 'Marker', inMinutes(29));
    await reminderRow(marker, (r) => r.sent_at !== null);
    for (const id of ids) await reminderRow(id, (r) => r.lease_until === null);
  };

  beforeAll(async () => {
    stack = await startStack({ services: ['crm', 'automation'] });
    bus = await eventBus(stack);
    pushed = await bus.subscribe('notification.created');
    db = await connectPatiently(stack.databaseUrl('automation'));
    const a = await org(stack, 'Remind Acme');
    owner = a.owner;
    agent = await member(stack, owner, 'agent');
    admin = await member(stack, owner, 'admin');
    assignedContact = (await owner.post('/api/v1/contacts', { name: 'Rita Remind', assignedUserId: agent.id })).body.id;
    markerContact = (await owner.post('/api/v1/contacts', { name: 'Mark Marker' })).body.id;
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await bus?.close();
    await stack?.stop();
  });

  describe('GET/PUT /api/v1/settings/appointments', () => {
    it('reads 30 minutes until set, for anyone in the org', async () => {
      for (const as of [owner, agent.api]) {
        const res = await as.get('/api/v1/settings/appointments');
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ reminderMinutesBefore: 30 });
      }
    });

    it('is 401 without a token, 403 for an agent', async () => {
      expect((await client(stack.url).get('/api/v1/settings/appointments')).status).toBe(401);
      expect((await client(stack.url).put('/api/v1/settings/appointments', { reminderMinutesBefore: 5 })).status).toBe(401);
      const res = await agent.api.put('/api/v1/settings/appointments', { reminderMinutesBefore: 5 });
      expect(res.status).toBe(403);
      expect((await owner.get('/api/v1/settings/appointments')).body.reminderMinutesBefore).toBe(30);
    });

    it('is 400 naming reminderMinutesBefore for a missing, negative, fractional, too large or non-numeric value', async () => {
      for (const body of [
        {},
        { reminderMinutesBefore: -1 },
        { reminderMinutesBefore: 1.5 },
        { reminderMinutesBefore: 10_081 },
        { reminderMinutesBefore: '30' },
        { reminderMinutesBefore: null },
      ]) {
        const res = await owner.put('/api/v1/settings/appointments', body);
        expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
        expect(res.body.error.details[0].field).toBe('reminderMinutesBefore');
      }
    });

    it('an admin changes it (200); another org keeps its own', async () => {
      const res = await admin.api.put('/api/v1/settings/appointments', { reminderMinutesBefore: 45 });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ reminderMinutesBefore: 45 });
      expect((await agent.api.get('/api/v1/settings/appointments')).body).toEqual({ reminderMinutesBefore: 45 });
      const other = await org(stack, 'Remind Globex');
      expect((await other.owner.get('/api/v1/settings/appointments')).body).toEqual({ reminderMinutesBefore: 30 });
      expect((await owner.put('/api/v1/settings/appointments', { reminderMinutesBefore: 30 })).status).toBe(200);
    });
  });

  it('an appointment already inside the window is reminded at once to the contact’s assigned user, once, even across a restart', async () => {
    const id = await appointment(owner, assignedContact, 'Contract signing', inMinutes(10));
    const [n] = await eventually(async () => {
      const got = (await remindersOf(agent.api)).filter((x: any) => x.resourceId === id);
      return got.length ? got : undefined;
    });
    expect(n).toEqual({
      id: expect.any(String),
      type: 'appointment.reminder',
      title: 'Upcoming appointment with Rita Remind',
      message: expect.stringMatching(/^Contract signing starts at \d{4}-\d\d-\d\d \d\d:\d\d UTC, in (9|10) minutes\.$/),
      resourceId: id,
      read: false,
      createdAt: expect.any(String),
    });
    // Announced for the socket push to the agent's own room.
    const ev = await eventually(async () => pushed.find((e) => e.data.id === n.id));
    expect(ev.data).toEqual(expect.objectContaining({ userId: agent.id, type: 'appointment.reminder', resourceId: id }));
    // Nobody else hears of it.
    expect((await remindersOf(owner)).filter((x: any) => x.resourceId === id)).toEqual([]);

    const before = await reminderRow(id, (r) => r.sent_at !== null);
    await stack.restart('automation');
    // An edit that does not move it is no reason to remind again.
    expect((await owner.put(`/api/v1/appointments/${id}`, { location: 'Room 2' })).status).toBe(200);
    const after = await reminderRow(id, (r) => r.version > before.version);
    expect(after.sent_at).toEqual(before.sent_at);
    await timerPassed([id]);
    expect((await reminderRow(id)).sent_at).toEqual(before.sent_at);
    expect((await remindersOf(agent.api)).filter((x: any) => x.resourceId === id)).toHaveLength(1);
    expect(pushed.filter((e) => e.data.resourceId === id)).toHaveLength(1);
  });

  it('a far appointment is not reminded; rescheduled into the window, it is', async () => {
    const id = await appointment(owner, assignedContact, 'Quarterly review', inMinutes(180));
    await reminderRow(id);
    await timerPassed([id]);
    expect((await reminderRow(id)).sent_at).toBeNull();
    expect((await remindersOf(agent.api)).filter((x: any) => x.resourceId === id)).toEqual([]);

    expect((await owner.put(`/api/v1/appointments/${id}`, { scheduledAt: inMinutes(20) })).status).toBe(200);
    const n = await eventually(async () => (await remindersOf(agent.api)).find((x: any) => x.resourceId === id));
    expect(n.message).toMatch(/^Quarterly review starts at .*, in (19|20) minutes\.$/);
  });

  it('no reminder when the contact has no assigned user, or the appointment has already begun', async () => {
    const nobody = (await owner.post('/api/v1/contacts', { name: 'Una Unassigned' })).body.id;
    const unassigned = await appointment(owner, nobody, 'Walk-in', inMinutes(5));
    const past = await appointment(owner, assignedContact, 'Yesterday', inMinutes(-24 * 60));
    for (const id of [unassigned, past]) {
      const row = await reminderRow(id, (r) => r.sent_at !== null);
      expect(row.assigned_user_id).toBeNull();
      for (const as of [owner, agent.api, admin.api]) expect((await remindersOf(as)).filter((x: any) => x.resourceId === id)).toEqual([]);
    }
  });

  it('deleted and cancelled appointments are dropped; the rest follow a longer lead time at once', async () => {
    const other = await org(stack, 'Remind Initech');
    const rep = await member(stack, other.owner, 'agent');
    const contact = (await other.owner.post('/api/v1/contacts', { name: 'Dora Drop', assignedUserId: rep.id })).body.id;
    const deleted = await appointment(other.owner, contact, 'Deleted one', inMinutes(2 * 24 * 60));
    const cancelled = await appointment(other.owner, contact, 'Cancelled one', inMinutes(2 * 24 * 60));
    const kept = await appointment(other.owner, contact, 'Kept one', inMinutes(2 * 24 * 60));
    expect((await other.owner.del(`/api/v1/appointments/${deleted}`)).status).toBe(204);
    expect((await other.owner.put(`/api/v1/appointments/${cancelled}`, { status: 'cancelled' })).status).toBe(200);
    await reminderRow(deleted, (r) => r.status === 'deleted');
    await reminderRow(cancelled, (r) => r.status === 'cancelled');
    await reminderRow(kept);

    // A week's lead time puts all three inside the window: only the one still scheduled is reminded.
    expect((await other.owner.put('/api/v1/settings/appointments', { reminderMinutesBefore: 10_080 })).status).toBe(200);
    const n = await eventually(async () => (await remindersOf(rep.api)).find((x: any) => x.resourceId === kept));
    expect(n.title).toBe('Upcoming appointment with Dora Drop');
    await timerPassed([deleted, cancelled]);
    expect((await remindersOf(rep.api)).map((x: any) => x.resourceId)).toEqual([kept]);
  });
});
