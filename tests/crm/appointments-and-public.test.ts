import { randomUUID } from 'node:crypto';
import { Client } from '../support/http';
import { CrmStack, Org, publicClient, startCrmStack } from './crm-support';

// Appointments (internal) and the public contacts/appointments API with an API key.
describe('appointments and the public API', () => {
  let crm: CrmStack;
  let acme: Org;
  let globex: Org;
  let owner: Client;
  let contactId: string;
  let theirContactId: string;

  beforeAll(async () => {
    crm = await startCrmStack();
    acme = await crm.newOrg('Acme');
    globex = await crm.newOrg('Globex');
    owner = acme.owner;
    contactId = (await owner.post('/api/v1/contacts', { name: 'Ann Appointment', phone: '0911 000 111', email: 'ann@example.test' })).body.id;
    theirContactId = (await globex.owner.post('/api/v1/contacts', { name: 'Globex Guy' })).body.id;
  });
  afterAll(() => crm.stop());

  describe('internal /api/v1/appointments', () => {
    let appointmentId: string;

    it('POST creates a scheduled appointment (201)', async () => {
      const res = await owner.post('/api/v1/appointments', {
        contactId,
        title: 'Demo',
        description: 'Product demo',
        scheduledAt: '2031-03-10T09:30:00Z',
        duration: 45,
        type: 'meeting',
        location: 'Office',
        assignedUserId: acme.user.id,
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        contactId,
        contactName: 'Ann Appointment',
        title: 'Demo',
        description: 'Product demo',
        scheduledAt: '2031-03-10T09:30:00.000Z',
        duration: 45,
        type: 'meeting',
        location: 'Office',
        assignedUserId: acme.user.id,
        status: 'scheduled',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      appointmentId = res.body.id;
    });

    it('POST is 400 naming missing or bad fields', async () => {
      const missing = await owner.post('/api/v1/appointments', { description: 'x' });
      expect(missing.status).toBe(400);
      expect(missing.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['contactId', 'scheduledAt', 'title']);
      const bad = await owner.post('/api/v1/appointments', { contactId, title: 'T', scheduledAt: 'soon', duration: -5 });
      expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['duration', 'scheduledAt']);
      const stranger = await owner.post('/api/v1/appointments', {
        contactId,
        title: 'T',
        scheduledAt: '2031-01-01T00:00:00Z',
        assignedUserId: globex.user.id,
      });
      expect(stranger.status).toBe(400);
      expect(stranger.body.error.details[0].field).toBe('assignedUserId');
    });

    it('POST is 404 for an unknown, malformed or other-org contact', async () => {
      for (const id of [randomUUID(), 'nope', theirContactId]) {
        const res = await owner.post('/api/v1/appointments', { contactId: id, title: 'T', scheduledAt: '2031-01-01T00:00:00Z' });
        expect(res.status).toBe(404);
        expect(res.body.error.message).toBe('Contact not found');
      }
    });

    it('GET /:id shows it; another org gets 404', async () => {
      expect((await owner.get(`/api/v1/appointments/${appointmentId}`)).body.title).toBe('Demo');
      expect((await globex.owner.get(`/api/v1/appointments/${appointmentId}`)).status).toBe(404);
      expect((await owner.get('/api/v1/appointments/not-a-uuid')).status).toBe(404);
    });

    it('PUT reschedules and completes; completed is final (422); another org gets 404', async () => {
      const moved = await owner.put(`/api/v1/appointments/${appointmentId}`, { scheduledAt: '2031-03-11T10:00:00Z', location: 'Online' });
      expect(moved.status).toBe(200);
      expect(moved.body).toEqual(
        expect.objectContaining({ scheduledAt: '2031-03-11T10:00:00.000Z', location: 'Online', title: 'Demo', status: 'scheduled' }),
      );
      expect((await globex.owner.put(`/api/v1/appointments/${appointmentId}`, { status: 'cancelled' })).status).toBe(404);
      const done = await owner.put(`/api/v1/appointments/${appointmentId}`, { status: 'completed' });
      expect(done.body.status).toBe('completed');
      const back = await owner.put(`/api/v1/appointments/${appointmentId}`, { status: 'cancelled' });
      expect(back.status).toBe(422);
      expect(back.body.error.code).toBe('invalid_transition');
      const late = await owner.put(`/api/v1/appointments/${appointmentId}`, { scheduledAt: '2031-04-01T10:00:00Z' });
      expect(late.status).toBe(422);
      expect((await owner.put(`/api/v1/appointments/${appointmentId}`, { status: 'postponed' })).body.error.details[0].field).toBe('status');
      expect((await owner.put(`/api/v1/appointments/${randomUUID()}`, { title: 'x' })).status).toBe(404);
    });

    it('PUT cancels a scheduled appointment; cancelled cannot be completed', async () => {
      const a = await owner.post('/api/v1/appointments', { contactId, title: 'Call', scheduledAt: '2031-05-01T08:00:00Z', type: 'call' });
      const cancelled = await owner.put(`/api/v1/appointments/${a.body.id}`, { status: 'cancelled' });
      expect(cancelled.body.status).toBe('cancelled');
      expect((await owner.put(`/api/v1/appointments/${a.body.id}`, { status: 'completed' })).status).toBe(422);
    });

    it('GET lists with status, contactId and date filters and pagination; other orgs never see them', async () => {
      const other = (await owner.post('/api/v1/contacts', { name: 'Bob Other' })).body.id;
      await owner.post('/api/v1/appointments', { contactId: other, title: 'Bob visit', scheduledAt: '2031-03-10T15:00:00Z' });
      const all = await owner.get('/api/v1/appointments');
      expect(all.status).toBe(200);
      expect(all.body.pagination).toEqual({ total: 3, page: 1, limit: 50, pages: 1 });
      expect(all.body.data.map((a: { title: string }) => a.title)).toEqual(['Bob visit', 'Demo', 'Call']);
      expect(all.body.data[0]).toEqual(expect.objectContaining({ contactId: other, contactName: 'Bob Other', status: 'scheduled' }));
      const titles = async (qs: string) => (await owner.get(`/api/v1/appointments?${qs}`)).body.data.map((a: { title: string }) => a.title);
      expect(await titles('status=completed')).toEqual(['Demo']);
      expect(await titles('status=cancelled')).toEqual(['Call']);
      expect(await titles('status=scheduled')).toEqual(['Bob visit']);
      expect(await titles(`contactId=${contactId}`)).toEqual(['Demo', 'Call']);
      expect(await titles('dateFrom=2031-03-10&dateTo=2031-03-10')).toEqual(['Bob visit']);
      expect(await titles('dateFrom=2031-03-11&dateTo=2031-04-30')).toEqual(['Demo']);
      expect(await titles('dateFrom=2031-03-10T15:00:00Z&dateTo=2031-03-11T10:00:00Z')).toEqual(['Bob visit', 'Demo']);
      const page2 = await owner.get('/api/v1/appointments?limit=2&page=2');
      expect(page2.body.pagination).toEqual({ total: 3, page: 2, limit: 2, pages: 2 });
      expect(page2.body.data).toHaveLength(1);
      expect((await owner.get('/api/v1/appointments?limit=999')).body.pagination.limit).toBe(100);
      expect((await globex.owner.get('/api/v1/appointments')).body.data).toEqual([]);
      expect((await globex.owner.get(`/api/v1/appointments?contactId=${contactId}`)).body.data).toEqual([]);
    });

    it('GET is 400 naming a bad filter', async () => {
      for (const [qs, field] of [
        ['status=late', 'status'],
        ['contactId=abc', 'contactId'],
        ['dateFrom=someday', 'dateFrom'],
        ['limit=x', 'limit'],
      ]) {
        const res = await owner.get(`/api/v1/appointments?${qs}`);
        expect(res.status).toBe(400);
        expect(res.body.error.details[0].field).toBe(field);
      }
    });

    it('the contact detail lists its appointments (latest first) and the activity', async () => {
      const d = await owner.get(`/api/v1/contacts/${contactId}`);
      expect(d.body.appointments).toEqual([
        { id: expect.any(String), title: 'Call', scheduledAt: '2031-05-01T08:00:00.000Z', status: 'cancelled' },
        { id: appointmentId, title: 'Demo', scheduledAt: '2031-03-11T10:00:00.000Z', status: 'completed' },
      ]);
      const types = d.body.activities.map((a: { type: string }) => a.type);
      expect(types).toEqual(expect.arrayContaining(['appointment_created', 'appointment_updated']));
    });
  });

  describe('public API /api/public (X-API-Key)', () => {
    let pub: Client;
    let theirs: Client;

    beforeAll(async () => {
      pub = await publicClient(crm.api, owner);
      theirs = await publicClient(crm.api, globex.owner);
    });

    it('is 401 without a key or with a wrong key', async () => {
      expect((await crm.api.get('/api/public/contacts')).status).toBe(401);
      expect((await crm.api.withKey('crm_live_wrongwrongwrongwrongwrongwrongwr').get('/api/public/contacts')).status).toBe(401);
      expect((await crm.api.post('/api/public/appointments', {})).status).toBe(401);
    });

    let pubId: string;
    it('POST /contacts creates a contact (201) in the public shape', async () => {
      const res = await pub.post('/api/public/contacts', {
        fullName: 'Paula Public',
        phone: '+84 90 222 3333',
        email: 'paula@example.test',
        tags: ['web'],
        notes: 'from form',
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        fullName: 'Paula Public',
        phone: '+84902223333',
        email: 'paula@example.test',
        source: 'api',
        status: 'new',
        notes: 'from form',
        tags: ['web'],
        customFields: {},
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      pubId = res.body.id;
      // It is an ordinary contact of the organization.
      expect((await owner.get(`/api/v1/contacts/${pubId}`)).body.name).toBe('Paula Public');
      const phoneOnly = await pub.post('/api/public/contacts', { phone: '0902 444 555', source: 'website', status: 'lead' });
      expect(phoneOnly.status).toBe(201);
      expect(phoneOnly.body).toEqual(expect.objectContaining({ fullName: '', phone: '+84902444555', source: 'website', status: 'lead' }));
    });

    it('POST /contacts is 400 unless fullName or phone is given, and 400 naming bad fields', async () => {
      const res = await pub.post('/api/public/contacts', { email: 'only@example.test' });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([{ field: 'fullName', message: 'fullName or phone is required' }]);
      const bad = await pub.post('/api/public/contacts', { fullName: 'X', status: 'vip', tags: [1] });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['status', 'tags.0']);
    });

    it('POST /contacts with a known phone number (any spelling) is 409 naming the existing contact: no duplicate', async () => {
      const res = await pub.post('/api/public/contacts', { fullName: 'Paula Again', phone: '0902223333' });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('duplicate_phone');
      expect(res.body.error.details[0]).toEqual({ field: 'phone', message: `already belongs to contact ${pubId}` });
      const list = await pub.get('/api/public/contacts?search=0902223333');
      expect(list.body.contacts).toHaveLength(1);
    });

    it('PUT /contacts/:id updates only the sent fields', async () => {
      const res = await pub.put(`/api/public/contacts/${pubId}`, { status: 'customer' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          id: pubId,
          fullName: 'Paula Public',
          phone: '+84902223333',
          email: 'paula@example.test',
          status: 'customer',
          notes: 'from form',
          tags: ['web'],
        }),
      );
      const renamed = await pub.put(`/api/public/contacts/${pubId}`, { fullName: 'Paula P.', tags: [] });
      expect(renamed.body).toEqual(expect.objectContaining({ fullName: 'Paula P.', status: 'customer', tags: [] }));
    });

    it('GET /contacts lists {contacts} with search and status; limit default 20, max 100', async () => {
      await Promise.all(Array.from({ length: 22 }, (_, i) => pub.post('/api/public/contacts', { fullName: `Lead Number ${i}` })));
      const def = await pub.get('/api/public/contacts');
      expect(def.status).toBe(200);
      expect(Object.keys(def.body)).toEqual(['contacts', 'nextCursor']);
      expect(def.body.contacts).toHaveLength(20);
      expect(def.body.contacts[0]).toEqual({
        // The newest: a lead created with a name only, so its absent phone, email and notes are null.
        id: expect.any(String),
        fullName: expect.any(String),
        phone: null,
        email: null,
        source: expect.any(String),
        status: expect.any(String),
        notes: null,
        tags: expect.any(Array),
        customFields: {},
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect((await pub.get('/api/public/contacts?limit=5')).body.contacts).toHaveLength(5);
      expect((await pub.get('/api/public/contacts?limit=1000')).body.contacts.length).toBeLessThanOrEqual(100);
      expect((await pub.get('/api/public/contacts?limit=1000')).body.contacts.length).toBe(26);
      expect((await pub.get('/api/public/contacts?limit=abc')).status).toBe(400);
      expect((await pub.get('/api/public/contacts?search=lead number 1&limit=100')).body.contacts).toHaveLength(1 + 10);
      expect((await pub.get('/api/public/contacts?status=customer')).body.contacts.map((c: { id: string }) => c.id)).toEqual([pubId]);
      expect((await pub.get('/api/public/contacts?status=nope')).body.error.details[0].field).toBe('status');
    });

    it('GET /contacts/:id is 404 for unknown, malformed or other-org ids; PUT likewise', async () => {
      for (const id of [randomUUID(), 'abc', theirContactId]) {
        expect((await pub.get(`/api/public/contacts/${id}`)).status).toBe(404);
        expect((await pub.put(`/api/public/contacts/${id}`, { fullName: 'x' })).status).toBe(404);
      }
      expect((await theirs.get(`/api/public/contacts/${pubId}`)).status).toBe(404);
      expect((await theirs.get('/api/public/contacts?limit=100')).body.contacts.map((c: { id: string }) => c.id)).not.toContain(pubId);
    });

    it('POST /appointments creates one (201) from date and time; 400 for missing or bad fields; 404 for unknown contacts', async () => {
      const res = await pub.post('/api/public/appointments', {
        contactId: pubId,
        appointmentDate: '2031-06-01',
        appointmentTime: '14:30',
        type: 'call',
        notes: 'call back',
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        contactId: pubId,
        appointmentDate: '2031-06-01',
        appointmentTime: '14:30',
        type: 'call',
        notes: 'call back',
        status: 'scheduled',
        title: '',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        contact: { id: pubId, fullName: 'Paula P.', phone: '+84902223333', email: 'paula@example.test' },
      });
      const missing = await pub.post('/api/public/appointments', { notes: 'x' });
      expect(missing.status).toBe(400);
      expect(missing.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['appointmentDate', 'contactId']);
      const bad = await pub.post('/api/public/appointments', { contactId: pubId, appointmentDate: '2031-02-30', appointmentTime: '25:00' });
      expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['appointmentDate', 'appointmentTime']);
      for (const id of [randomUUID(), 'abc', theirContactId]) {
        expect((await pub.post('/api/public/appointments', { contactId: id, appointmentDate: '2031-06-01' })).status).toBe(404);
      }
    });

    it('GET /contacts/:id adds the 5 most recent appointments and the conversation count (null while messaging is down)', async () => {
      for (let d = 2; d <= 7; d++) await pub.post('/api/public/appointments', { contactId: pubId, appointmentDate: `2031-06-0${d}` });
      const res = await pub.get(`/api/public/contacts/${pubId}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expect.objectContaining({ id: pubId, fullName: 'Paula P.', conversationCount: null }));
      expect(res.body.appointments.map((a: { appointmentDate: string }) => a.appointmentDate)).toEqual([
        '2031-06-07',
        '2031-06-06',
        '2031-06-05',
        '2031-06-04',
        '2031-06-03',
      ]);
      expect(res.body.appointments[0]).toEqual(expect.objectContaining({ appointmentTime: '00:00', status: 'scheduled', type: 'meeting' }));
    });

    it('GET /appointments filters on appointmentDate (from/to inclusive), includes the contact, at most 100', async () => {
      const list = await pub.get('/api/public/appointments?from=2031-06-02&to=2031-06-03');
      expect(list.status).toBe(200);
      expect(list.body.appointments.map((a: { appointmentDate: string }) => a.appointmentDate)).toEqual(['2031-06-02', '2031-06-03']);
      expect(list.body.appointments[0].contact).toEqual({ id: pubId, fullName: 'Paula P.', phone: '+84902223333', email: 'paula@example.test' });
      const from = await pub.get('/api/public/appointments?from=2031-06-07');
      expect(from.body.appointments.map((a: { appointmentDate: string }) => a.appointmentDate)).toEqual(['2031-06-07']);
      expect((await pub.get('/api/public/appointments?from=June')).body.error.details[0].field).toBe('from');
      expect((await pub.get('/api/public/appointments?from=2031-06-05&to=2031-06-01')).body.error.details[0].field).toBe('to');
      expect((await theirs.get('/api/public/appointments')).body.appointments).toEqual([]);

      await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          pub.post('/api/public/appointments', {
            contactId: pubId,
            appointmentDate: '2032-01-01',
            appointmentTime: `${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}`,
          }),
        ),
      );
      const capped = await pub.get('/api/public/appointments');
      expect(capped.body.appointments).toHaveLength(100);
    });
  });
});
