import { toPublicContact } from '@crm/events';
import type { z } from 'zod';
import type { crm } from '@crm/proto-types';
import type { Contact as ContactSchema, ContactDetail as ContactDetailSchema, Friend, MemberContact, PublicContact } from './contacts.schemas';
import { answered, orNull } from '../../http/shape';
import { noteOut } from './notes.out';

// crm's answers (the generated types) and their internal and public mappers: one place per audience.

export type Contact = crm.Contact__Output;
type ContactDetail = crm.ContactDetail__Output;

/** A contact's custom fields as an object ({} when none is set). */
export function customFieldsOf(c: { customFieldsJson?: string }): Record<string, string | number | boolean> {
  return c.customFieldsJson ? (JSON.parse(c.customFieldsJson) as Record<string, string | number | boolean>) : {};
}

/**
 * The internal Contact: absent optional values are explicit nulls, never "". hasChatnet is always a boolean
 * (true only with a known chat-network identity; `hasChatnet=unknown` lists those whose phone was never checked).
 */
export function contactOut(c: Contact): z.input<typeof ContactSchema> {
  return {
    id: c.id,
    name: c.name,
    email: orNull(c.email),
    phone: orNull(c.phone),
    source: c.source,
    status: c.status,
    statusId: c.statusId ?? null,
    assignedUserId: c.assignedUserId ?? null,
    avatar: orNull(c.avatar),
    leadScore: c.leadScore,
    dealValue: c.dealValue ?? 0,
    hasChatnet: c.hasChatnet === true,
    chatnetUid: c.chatnetUid ?? null,
    threadTypes: c.threadTypes,
    friends: c.friends,
    notes: orNull(c.notes),
    tags: c.tags,
    customFields: customFieldsOf(c),
    lastActivity: c.lastActivity,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };
}

/** A customer list's member: the internal Contact without friends (a list can be long). */
export function memberOut(c: Contact): z.input<typeof MemberContact> {
  const { friends: _friends, ...member } = contactOut(c);
  return member;
}

/** Detail: `notes` becomes the array of Note records (newest first); the contact's notes text moves to `notesText`. */
export function detailOut(d: ContactDetail): z.input<typeof ContactDetailSchema> {
  const contact = answered(d.contact, 'crm GetContact: contact');
  return {
    ...contactOut(contact),
    notesText: orNull(contact.notes),
    notes: d.notes.map(noteOut),
    conversations: d.conversations.map((c) => ({ ...c, lastMessageAt: c.lastMessageAt ?? null })),
    appointments: d.appointments.map(({ id, title, scheduledAt, status }) => ({ id, title, scheduledAt, status })),
    activities: d.activities.map((a) => ({ ...a })),
  };
}

/** Public Contact: the spec's field names (fullName), nothing internal; the same mapper as the webhooks' contact. */
export function publicContactOut(c: Contact): z.input<typeof PublicContact> {
  const p = toPublicContact({ ...c, customFields: customFieldsOf(c) });
  return { ...p, status: p.status as z.input<typeof PublicContact>['status'] };
}

type FriendRecord = crm.FriendRecord__Output;

/** A chat-network friend record of a contact (GET /contacts/:id/friends): a name the network did not give is null. */
export function friendOut(f: FriendRecord): z.input<typeof Friend> {
  return {
    id: f.id,
    chatnetUid: f.chatnetUid,
    displayName: orNull(f.displayName),
    accountId: f.accountId,
    relationshipKind: f.relationshipKind,
    addedAt: f.addedAt,
  };
}
