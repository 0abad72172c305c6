import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import type { Client } from '../support/http';
import { addUser, CrmStack, listenEvents, Org, publicClient, publishEvent, startCrmStack } from './crm-support';

// Contact notes edited and deleted (by their author, or a team lead and above) and appointments deleted, through
// the gateway; each change leaves an activity and an outbox event (contact.note_*, appointment.updated/deleted).
describe('contact notes and appointments: edit and delete', () => {
  let crm: CrmStack;
  let acme: Org;
  let globex: Org;
  let owner: Client;
  let author: Awaited<ReturnType<typeof addUser>>;
  let other: Awaited<ReturnType<typeof addUser>>;
  let lead: Awaited<ReturnType<typeof addUser>>;
  let events: Awaited<ReturnType<typeof listenEvents>>;
  // Assigned to `author`, so it stays visible to them under "assigned" inbox visibility; `hidden` does not.
  let contactId: string;
  let hiddenId: string;
  let otherContactId: string;

  const addNote = async (as: Client, cid: string, content: string) => {
    const res = await as.post(`/api/v1/contacts/${cid}/notes`, { content });
    expect(res.status).toBe(201);
    return res.body as { id: string; contactId: string; content: string; createdBy: string; createdAt: string };
  };
  const activityTypes = async (cid: string) => (await owner.get(`/api/v1/contacts/${cid}`)).body.activities.map((a: { type: string }) => a.type);
  const eventOf = (type: string, pred: (d: any) => boolean) =>
    eventually(async () => events.find((e) => e.type === type && e.orgId === acme.orgId && pred(e.data)));

  beforeAll(async () => {
    crm = await startCrmStack();
    events = await listenEvents(crm.exchange, ['contact.*', 'appointment.*']);
    acme = await crm.newOrg('Notes Acme');
    globex = await crm.newOrg('Notes Globex');
    owner = acme.owner;
    author = await addUser(crm.api, owner, 'agent');
    other = await addUser(crm.api, owner, 'agent');
    lead = await addUser(crm.api, owner, 'team_lead');
    contactId = (await owner.post('/api/v1/contacts', { name: 'Nora Notes', assignedUserId: author.id })).body.id;
    hiddenId = (await owner.post('/api/v1/contacts', { name: 'Hana Hidden' })).body.id;
    otherContactId = (await owner.post('/api/v1/contacts', { name: 'Olga Other', assignedUserId: author.id })).body.id;
  }, 60_000);
  afterAll(async () => {
    await events?.close();
    await crm?.stop();
  });

  describe('PUT /api/v1/contacts/:id/notes/:noteId', () => {
    it('the author edits their note (200): the detail shows the new text, an activity and contact.note_updated record it', async () => {
      const note = await addNote(author.as, contactId, 'Call back on Monday');
      const created = await eventOf('contact.note_created', (d) => d.note.id === note.id);
      expect(created.data).toEqual({ contactId, note, by: author.id });

      const res = await author.as.put(`/api/v1/contacts/${contactId}/notes/${note.id}`, { content: 'Call back on Tuesday' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...note, content: 'Call back on Tuesday' });
      const detail = await owner.get(`/api/v1/contacts/${contactId}`);
      expect(detail.body.notes.find((n: { id: string }) => n.id === note.id).content).toBe('Call back on Tuesday');
      expect(await activityTypes(contactId)).toEqual(expect.arrayContaining(['note_added', 'note_updated']));
      const updated = await eventOf('contact.note_updated', (d) => d.note.id === note.id);
      expect(updated.data).toEqual({ contactId, note: res.body, by: author.id });
    });

    it('a team lead and the owner edit anyone’s note; another agent is 403 and the note is unchanged', async () => {
      const note = await addNote(author.as, contactId, 'Prefers email');
      const denied = await other.as.put(`/api/v1/contacts/${contactId}/notes/${note.id}`, { content: 'hijacked' });
      expect(denied.status).toBe(403);
      expect(denied.body.error.code).toBe('forbidden');
      expect((await lead.as.put(`/api/v1/contacts/${contactId}/notes/${note.id}`, { content: 'Prefers email (lead)' })).status).toBe(200);
      const byOwner = await owner.put(`/api/v1/contacts/${contactId}/notes/${note.id}`, { content: 'Prefers email (owner)' });
      expect(byOwner.status).toBe(200);
      expect(byOwner.body).toEqual(expect.objectContaining({ id: note.id, content: 'Prefers email (owner)', createdBy: author.id }));
    });

    it('is 400 naming content when it is missing, empty or too long', async () => {
      const note = await addNote(author.as, contactId, 'Short');
      for (const body of [{}, { content: '   ' }, { content: 'x'.repeat(10_001) }, { content: 5 }]) {
        const res = await author.as.put(`/api/v1/contacts/${contactId}/notes/${note.id}`, body);
        expect(res.status).toBe(400);
        expect(res.body.error.details[0].field).toBe('content');
      }
    });

    it('is 401 without a token', async () => {
      const note = await addNote(owner, contactId, 'Anon check');
      expect((await crm.api.put(`/api/v1/contacts/${contactId}/notes/${note.id}`, { content: 'x' })).status).toBe(401);
      expect((await crm.api.del(`/api/v1/contacts/${contactId}/notes/${note.id}`)).status).toBe(401);
    });

    it('is 404 for another org, an unknown or malformed note, and a note of another contact', async () => {
      const note = await addNote(owner, contactId, 'Org secret');
      const cases: [Client, string][] = [
        [globex.owner, `/api/v1/contacts/${contactId}/notes/${note.id}`],
        [owner, `/api/v1/contacts/${contactId}/notes/${randomUUID()}`],
        [owner, `/api/v1/contacts/${contactId}/notes/not-a-uuid`],
        [owner, `/api/v1/contacts/${otherContactId}/notes/${note.id}`],
        [owner, `/api/v1/contacts/not-a-uuid/notes/${note.id}`],
      ];
      for (const [as, path] of cases) {
        const put = await as.put(path, { content: 'changed' });
        expect([path, put.status]).toEqual([path, 404]);
        expect([path, (await as.del(path)).status]).toEqual([path, 404]);
      }
      const detail = await owner.get(`/api/v1/contacts/${contactId}`);
      expect(detail.body.notes.find((n: { id: string }) => n.id === note.id).content).toBe('Org secret');
    });
  });

  describe('DELETE /api/v1/contacts/:id/notes/:noteId', () => {
    it('the author deletes their note (204): gone from the detail, an activity and contact.note_deleted record it; again is 404', async () => {
      const note = await addNote(author.as, contactId, 'Obsolete');
      const res = await author.as.del(`/api/v1/contacts/${contactId}/notes/${note.id}`);
      expect(res.status).toBe(204);
      const detail = await owner.get(`/api/v1/contacts/${contactId}`);
      expect(detail.body.notes.map((n: { id: string }) => n.id)).not.toContain(note.id);
      expect(await activityTypes(contactId)).toContain('note_deleted');
      const deleted = await eventOf('contact.note_deleted', (d) => d.note.id === note.id);
      expect(deleted.data).toEqual({ contactId, note, by: author.id });
      expect((await author.as.del(`/api/v1/contacts/${contactId}/notes/${note.id}`)).status).toBe(404);
    });

    it('another agent is 403; a team lead may delete it', async () => {
      const note = await addNote(author.as, contactId, 'Lead will remove');
      expect((await other.as.del(`/api/v1/contacts/${contactId}/notes/${note.id}`)).status).toBe(403);
      expect((await lead.as.del(`/api/v1/contacts/${contactId}/notes/${note.id}`)).status).toBe(204);
    });
  });

  describe('appointments', () => {
    const newAppointment = async (cid: string, title: string) => {
      const res = await owner.post('/api/v1/appointments', { contactId: cid, title, scheduledAt: '2031-06-01T09:00:00Z' });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };

    it('PUT announces appointment.updated with the changed fields; a PUT that changes nothing announces nothing', async () => {
      const id = await newAppointment(contactId, 'Fitting');
      const res = await owner.put(`/api/v1/appointments/${id}`, { scheduledAt: '2031-06-02T09:00:00Z', location: 'Shop' });
      expect(res.status).toBe(200);
      const ev = await eventOf('appointment.updated', (d) => d.appointment.id === id);
      expect(ev.data.changes.sort()).toEqual(['location', 'scheduledAt']);
      expect(ev.data.appointment).toEqual(
        expect.objectContaining({ id, contactId, scheduledAt: '2031-06-02T09:00:00.000Z', location: 'Shop', status: 'scheduled' }),
      );
      await owner.put(`/api/v1/appointments/${id}`, { location: 'Shop' });
      await owner.put(`/api/v1/appointments/${id}`, { status: 'cancelled' });
      const cancelled = await eventOf('appointment.updated', (d) => d.appointment.id === id && d.changes.includes('status'));
      expect(cancelled.data.changes).toEqual(['status']);
      expect(events.seen.filter((e) => e.type === 'appointment.updated' && e.data.appointment.id === id)).toHaveLength(2);
    });

    it('DELETE removes it (204): GET is 404, an activity and appointment.deleted (the appointment as it was) record it', async () => {
      const id = await newAppointment(contactId, 'To drop');
      const res = await author.as.del(`/api/v1/appointments/${id}`);
      expect(res.status).toBe(204);
      expect((await owner.get(`/api/v1/appointments/${id}`)).status).toBe(404);
      expect((await owner.del(`/api/v1/appointments/${id}`)).status).toBe(404);
      expect(await activityTypes(contactId)).toContain('appointment_deleted');
      const ev = await eventOf('appointment.deleted', (d) => d.appointment.id === id);
      expect(ev.data.appointment).toEqual(expect.objectContaining({ id, contactId, title: 'To drop', status: 'scheduled' }));
    });

    it('DELETE is 404 for another org, an unknown or malformed id; 401 without a token', async () => {
      const id = await newAppointment(contactId, 'Kept');
      expect((await globex.owner.del(`/api/v1/appointments/${id}`)).status).toBe(404);
      expect((await owner.del(`/api/v1/appointments/${randomUUID()}`)).status).toBe(404);
      expect((await owner.del('/api/v1/appointments/nope')).status).toBe(404);
      expect((await crm.api.del(`/api/v1/appointments/${id}`)).status).toBe(401);
      expect((await owner.get(`/api/v1/appointments/${id}`)).status).toBe(200);
    });

    it('the public appointments API still lists and creates; a deleted appointment leaves its list', async () => {
      const pub = await publicClient(crm.api, owner);
      const id = await newAppointment(contactId, 'Public view');
      const listed = async () =>
        (await pub.get('/api/public/appointments?from=2031-06-01&to=2031-06-01')).body.appointments.map((a: { id: string }) => a.id);
      expect(await listed()).toContain(id);
      await owner.del(`/api/v1/appointments/${id}`);
      expect(await listed()).not.toContain(id);
      const made = await pub.post('/api/public/appointments', { contactId, appointmentDate: '2031-06-01', appointmentTime: '11:00' });
      expect(made.status).toBe(201);
      expect(await listed()).toContain(made.body.id);
    });
  });

  // Last: it switches the org to "assigned" visibility.
  it('under "assigned" visibility an agent gets 404 for notes and appointments of a contact hidden from them', async () => {
    const hiddenNote = await addNote(owner, hiddenId, 'Owner only');
    const visibleNote = await addNote(author.as, contactId, 'Mine');
    const hiddenAppointment = (
      await owner.post('/api/v1/appointments', { contactId: hiddenId, title: 'Hidden', scheduledAt: '2031-07-01T09:00:00Z' })
    ).body.id;
    await publishEvent(crm.exchange, 'inbox_settings.updated', acme.orgId, { agentVisibility: 'assigned' });
    await eventually(async () => ((await author.as.get(`/api/v1/contacts/${hiddenId}`)).status === 404 ? true : undefined));

    expect((await author.as.put(`/api/v1/contacts/${hiddenId}/notes/${hiddenNote.id}`, { content: 'x' })).status).toBe(404);
    expect((await author.as.del(`/api/v1/contacts/${hiddenId}/notes/${hiddenNote.id}`)).status).toBe(404);
    expect((await author.as.del(`/api/v1/appointments/${hiddenAppointment}`)).status).toBe(404);
    // Their own contact's note still works, and the team lead still sees everything.
    expect((await author.as.put(`/api/v1/contacts/${contactId}/notes/${visibleNote.id}`, { content: 'Still mine' })).status).toBe(200);
    expect((await lead.as.del(`/api/v1/appointments/${hiddenAppointment}`)).status).toBe(204);
    expect((await owner.get(`/api/v1/contacts/${hiddenId}`)).body.notes.map((n: { content: string }) => n.content)).toEqual(['Owner only']);
  });
});
