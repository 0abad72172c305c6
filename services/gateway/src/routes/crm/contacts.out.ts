import { orNull } from '../../http/shape';
import type { AppointmentBrief } from './appointments.out';

// Shapes from crm and their internal and public mappers: one place per audience.

export interface Contact {
  id: string;
  name: string;
  email: string;
  phone: string;
  source: string;
  status: string;
  statusId?: string;
  assignedUserId?: string;
  avatar: string;
  leadScore: number;
  dealValue: number;
  hasChatnet?: boolean;
  chatnetUid?: string;
  threadTypes: string[];
  friends: { chatnetUid: string; displayName: string; accountId: string }[];
  notes: string;
  tags: string[];
  lastActivity: string;
  createdAt: string;
  updatedAt: string;
  /** JSON object text {key: value} (crm.v1.Contact.customFieldsJson). */
  customFieldsJson?: string;
}

/** A contact's custom fields as an object ({} when none is set). */
export function customFieldsOf(c: { customFieldsJson?: string }): Record<string, string | number | boolean> {
  return c.customFieldsJson ? (JSON.parse(c.customFieldsJson) as Record<string, string | number | boolean>) : {};
}

export interface ContactDetail {
  contact: Contact;
  conversations: { id: string; chatnetAccountId: string; messageCount: number; lastMessageAt?: string }[];
  conversationsAvailable: boolean;
  notes: unknown[];
  appointments: AppointmentBrief[];
  activities: unknown[];
}

/**
 * The internal Contact: absent optional values are explicit nulls, never "". hasChatnet is always a boolean
 * (true only with a known chat-network identity; `hasChatnet=unknown` lists those whose phone was never checked).
 */
export function contactOut(c: Contact) {
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

/** Detail: `notes` becomes the array of Note records (newest first); the contact's notes text moves to `notesText`. */
export function detailOut(d: ContactDetail) {
  return {
    ...contactOut(d.contact),
    notesText: orNull(d.contact.notes),
    notes: d.notes,
    conversations: d.conversations.map((c) => ({ ...c, lastMessageAt: c.lastMessageAt ?? null })),
    appointments: d.appointments.map(({ id, title, scheduledAt, status }) => ({ id, title, scheduledAt, status })),
    activities: d.activities,
  };
}

/** Public Contact: the spec's field names (fullName), nothing internal. */
export function publicContactOut(c: Contact) {
  return {
    id: c.id,
    fullName: c.name,
    phone: orNull(c.phone),
    email: orNull(c.email),
    source: c.source,
    status: c.status,
    notes: orNull(c.notes),
    tags: c.tags,
    customFields: customFieldsOf(c),
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };
}
