import { z } from 'zod';
import { Changes, CustomFields, Id, Instant, Ref } from './common';
import { defineEvent } from './define';

/** The contact as crm's events carry it: the internal shape (crm's toEventContact), custom fields as an object. */
export const EventContact = z.object({
  id: Id,
  name: z.string(),
  email: z.string(),
  phone: z.string(),
  source: z.string(),
  status: z.string(),
  statusId: Ref.nullable(),
  assignedUserId: Ref.nullable(),
  avatar: z.string(),
  leadScore: z.number(),
  hasChatnet: z.boolean(),
  chatnetUid: z.string().nullable(),
  threadTypes: z.array(z.string()),
  notes: z.string(),
  tags: z.array(z.string()),
  lastActivity: Instant,
  createdAt: Instant,
  updatedAt: Instant,
  dealValue: z.number(),
  customFields: CustomFields,
});
export type EventContact = z.infer<typeof EventContact>;

/**
 * The contact of the public REST API (GET /api/public/contacts/:id without its appointments and conversationCount):
 * what webhook subscribers get. An empty phone, email or notes is null there, as in the API.
 */
export const PublicContact = z.object({
  id: Id,
  fullName: z.string(),
  phone: z.string().nullable(),
  email: z.string().nullable(),
  source: z.string(),
  status: z.string(),
  notes: z.string().nullable(),
  tags: z.array(z.string()),
  customFields: CustomFields,
  createdAt: Instant,
  updatedAt: Instant,
});
export type PublicContact = z.infer<typeof PublicContact>;

const orNull = (v: string) => (v === '' ? null : v);

/** What the public contact is made from: an event's contact, or (in the gateway) crm's answer with its custom fields parsed. */
export type PublicContactSource = Pick<
  EventContact,
  'id' | 'name' | 'phone' | 'email' | 'source' | 'status' | 'notes' | 'tags' | 'customFields' | 'createdAt' | 'updatedAt'
>;

/** The one public contact mapper: webhook payloads and the gateway's public API both answer through it. */
export function toPublicContact(c: PublicContactSource): PublicContact {
  return {
    id: c.id,
    fullName: c.name,
    phone: orNull(c.phone),
    email: orNull(c.email),
    source: c.source,
    status: c.status,
    notes: orNull(c.notes),
    tags: c.tags,
    customFields: c.customFields,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };
}

/** Changed-field names as the public API calls them (`name` is `fullName` there). */
const publicChanges = (changes: string[]) => changes.map((f) => (f === 'name' ? 'fullName' : f));

const ContactData = z.object({ contact: EventContact });
const PublicContactData = z.object({ contact: PublicContact });

export const contactCreated = defineEvent({
  type: 'contact.created',
  version: 1,
  producers: ['crm'],
  description: 'A contact was created (UI, public API, chat network, CSV import or lead sync).',
  data: ContactData,
  webhook: { data: PublicContactData, from: (d) => ({ contact: toPublicContact(d.contact) }) },
});

/** The routing key of a contact.updated whose only change is `leadScore` (see contactUpdated's routingKeys). */
export const SCORE_ONLY_CONTACT_UPDATE = 'contact.updated.lead_score';

export const contactUpdated = defineEvent({
  type: 'contact.updated',
  version: 1,
  producers: ['crm'],
  description: 'A contact changed; data.changes lists the fields (public names: fullName for the name; leadScore when only its score moved).',
  // highValueThreshold: the org's threshold when lead scoring published the change (automation's high-value alert).
  data: z.object({ contact: EventContact, changes: Changes, highValueThreshold: z.number().optional() }),
  webhook: {
    data: z.object({ contact: PublicContact, changes: Changes }),
    from: (d) => ({ contact: toPublicContact(d.contact), changes: publicChanges(d.changes) }),
  },
  // Lead scoring's announcements of a new score: crm's own analytics uses none of them and excludes this key.
  routingKeys: { [SCORE_ONLY_CONTACT_UPDATE]: (d) => d.changes.length > 0 && d.changes.every((c) => c === 'leadScore') },
});

export const contactDeleted = defineEvent({
  type: 'contact.deleted',
  version: 1,
  producers: ['crm'],
  description: 'A contact was deleted; data.id is its id.',
  data: z.object({ id: Id }),
  webhook: 'same',
});

const MergeData = z.object({ mergeId: Id, targetId: Id, sourceId: Id, target: EventContact, source: EventContact });
const PublicMergeData = z.object({ mergeId: Id, targetId: Id, sourceId: Id, target: PublicContact, source: PublicContact });
const publicMerge = (d: z.infer<typeof MergeData>) => ({ ...d, target: toPublicContact(d.target), source: toPublicContact(d.source) });

export const contactMerged = defineEvent({
  type: 'contact.merged',
  version: 1,
  producers: ['crm'],
  description:
    'A duplicate contact was merged into another; data: mergeId, targetId (the contact kept), sourceId (gone since; its id answers 404), target and source (the contacts, the source as it was).',
  data: MergeData,
  webhook: { data: PublicMergeData, from: publicMerge },
});

export const contactMergeUndone = defineEvent({
  type: 'contact.merge_undone',
  version: 1,
  producers: ['crm'],
  description: 'A merge was undone; data: mergeId, targetId, sourceId, target and source (both as they are now).',
  data: MergeData,
  webhook: { data: PublicMergeData, from: publicMerge },
});

const NoteData = z.object({
  contactId: Id,
  note: z.object({ id: Id, contactId: Id, content: z.string(), createdBy: Ref, createdAt: Instant }),
  /** The user who acted, or null (an API key, the system). */
  by: Ref.nullable(),
});

export const contactNoteCreated = defineEvent({
  type: 'contact.note_created',
  version: 1,
  producers: ['crm'],
  description: 'A note was added to a contact; data: contactId, note {id, contactId, content, createdBy, createdAt}, by (the user, or null).',
  data: NoteData,
  webhook: 'same',
});

export const contactNoteUpdated = defineEvent({
  type: 'contact.note_updated',
  version: 1,
  producers: ['crm'],
  description: 'A contact’s note was edited; data as contact.note_created, note holding the new content.',
  data: NoteData,
  webhook: 'same',
});

export const contactNoteDeleted = defineEvent({
  type: 'contact.note_deleted',
  version: 1,
  producers: ['crm'],
  description: 'A contact’s note was deleted; data as contact.note_created, note as it was.',
  data: NoteData,
  webhook: 'same',
});

export const contactEvents = [
  contactCreated,
  contactUpdated,
  contactDeleted,
  contactMerged,
  contactMergeUndone,
  contactNoteCreated,
  contactNoteUpdated,
  contactNoteDeleted,
];
