import { z } from 'zod';
import { crmRules as rules } from '@crm/validation';
import type {
  appointmentOut,
  contactOut,
  customerListBriefOut,
  customerListCreatedOut,
  customerListOut,
  detailOut,
  friendOut,
  memberOut,
  noteOut,
  publicAppointmentOut,
  publicContactOut,
} from '../../routes/crm';
import { proto } from '../proto-schema';
import { keysMatch } from './check';

const CRM = 'crm/v1/crm.proto';
const iso = () => z.string().meta({ description: 'ISO 8601 UTC timestamp' });
/** {key: value} of the organization's custom fields (GET /contact-fields): typed values, {} when none is set. */
export const CustomFieldValues = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
  .meta({ description: 'custom field values by key: numbers and booleans as JSON values; text, select and date (YYYY-MM-DD) as strings' });

/** The internal contact (routes/crm contactOut): absent values as explicit nulls, never "". */
export const Contact = z.object({
  id: z.string(),
  name: z.string(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  source: z.string(),
  status: z.string(),
  statusId: z.string().nullable(),
  assignedUserId: z.string().nullable(),
  avatar: z.string().nullable(),
  leadScore: z.number().int(),
  dealValue: z.number(),
  hasChatnet: z.boolean().meta({
    description:
      'true with a known chat-network identity (or a phone the network knows); false otherwise, manual contacts included. The filter hasChatnet=unknown lists contacts whose phone was never checked',
  }),
  chatnetUid: z.string().nullable(),
  threadTypes: z.array(z.string()),
  friends: z.array(z.object({ chatnetUid: z.string(), displayName: z.string(), accountId: z.string() })),
  notes: z.string().nullable(),
  tags: z.array(z.string()),
  customFields: CustomFieldValues,
  lastActivity: z.string(),
  createdAt: iso(),
  updatedAt: iso(),
});
keysMatch<z.infer<typeof Contact>, ReturnType<typeof contactOut>>(true);

/** A note on a contact (routes/crm noteOut). */
export const Note = z.object({
  id: z.string(),
  contactId: z.string(),
  content: z.string(),
  createdBy: z.string().nullable().meta({ description: 'the author; null when no signed-in user wrote it' }),
  createdAt: iso(),
});
keysMatch<z.infer<typeof Note>, ReturnType<typeof noteOut>>(true);

export const Friend = z.object({
  id: z.string(),
  chatnetUid: z.string(),
  displayName: z.string().nullable().meta({ description: 'the name the chat network gave; null when it gave none' }),
  accountId: z.string().meta({ description: 'the chat-network account the friendship is on' }),
  relationshipKind: z.string(),
  addedAt: iso(),
});
keysMatch<z.infer<typeof Friend>, ReturnType<typeof friendOut>>(true);

export const ContactDetail = Contact.extend({
  notesText: z.string().nullable().meta({ description: 'the contact’s own notes text' }),
  notes: z.array(Note).meta({ description: 'note records, newest first' }),
  conversations: z.array(
    z.object({ id: z.string(), chatnetAccountId: z.string(), messageCount: z.number().int(), lastMessageAt: z.string().nullable() }),
  ),
  appointments: z.array(z.object({ id: z.string(), title: z.string(), scheduledAt: iso(), status: z.string() })),
  activities: z.array(z.looseObject({})),
});
keysMatch<z.infer<typeof ContactDetail>, ReturnType<typeof detailOut>>(true);

export const MemberContact = Contact.omit({ friends: true });
keysMatch<z.infer<typeof MemberContact>, ReturnType<typeof memberOut>>(true);

export const Appointment = z.object({
  id: z.string(),
  contactId: z.string(),
  contactName: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  scheduledAt: iso(),
  duration: z.number().int().meta({ description: 'minutes' }),
  type: z.string(),
  location: z.string().nullable(),
  assignedUserId: z.string().nullable(),
  status: z.enum(rules.APPOINTMENT_STATUSES),
  createdAt: iso(),
  updatedAt: iso(),
});
keysMatch<z.infer<typeof Appointment>, ReturnType<typeof appointmentOut>>(true);

export const CustomerList = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  status: z.string(),
  contactCount: z.number().int(),
  criteria: z.unknown().meta({ description: '{filters: [{field, operator, value}]}' }),
  createdAt: iso(),
  updatedAt: iso(),
});
keysMatch<z.infer<typeof CustomerList>, ReturnType<typeof customerListOut>>(true);
export const CustomerListBrief = CustomerList.pick({ id: true, name: true, description: true, contactCount: true, status: true, createdAt: true });
export const CustomerListCreated = CustomerList.pick({ id: true, name: true, status: true, createdAt: true });
keysMatch<z.infer<typeof CustomerListBrief>, ReturnType<typeof customerListBriefOut>>(true);
keysMatch<z.infer<typeof CustomerListCreated>, ReturnType<typeof customerListCreatedOut>>(true);

/** `{updated, failed: [{id, code}]}`: ids that were not changed, each with why. */
export const BulkResult = proto(CRM, 'crm.v1.BulkResult');

// ------------------------------------------------------------------------------------------- public API

/** The public contact (routes/crm publicContactOut): the spec's field names, nothing internal. */
export const PublicContact = z.object({
  id: z.string(),
  fullName: z.string(),
  phone: z.string().nullable(),
  email: z.string().nullable(),
  source: z.string().meta({ description: 'chatnet, socialnet, manual, api' }),
  status: z.enum(rules.CONTACT_STATUSES),
  notes: z.string().nullable(),
  tags: z.array(z.string()),
  customFields: CustomFieldValues,
  createdAt: iso(),
  updatedAt: iso(),
});
keysMatch<z.infer<typeof PublicContact>, ReturnType<typeof publicContactOut>>(true);

/** A public appointment (routes/crm publicAppointmentOut): day and time (UTC) as they were created. */
export const PublicAppointment = z.object({
  id: z.string(),
  contactId: z.string().optional().meta({ description: 'absent inside a contact’s detail' }),
  appointmentDate: z.string().meta({ description: 'YYYY-MM-DD' }),
  appointmentTime: z.string().meta({ description: 'HH:MM (UTC)' }),
  type: z.string(),
  notes: z.string().nullable(),
  status: z.enum(rules.APPOINTMENT_STATUSES),
  title: z.string(),
  createdAt: iso(),
  updatedAt: iso(),
  contact: z.object({ id: z.string(), fullName: z.string(), phone: z.string().nullable(), email: z.string().nullable() }).optional(),
});
keysMatch<z.infer<typeof PublicAppointment>, ReturnType<typeof publicAppointmentOut>>(true);

export const PublicContactDetail = PublicContact.extend({
  appointments: z.array(PublicAppointment).meta({ description: 'the 5 most recent' }),
  conversationCount: z.number().int().nullable().meta({ description: 'null when messaging could not be asked' }),
});
