import { randomUUID } from 'node:crypto';
import type { PoolClient } from '@crm/db';
import { AppError, invalid } from '@crm/grpc-kit';
import { contactIdsByPhone, type ContactWriter, normalisePhone, touchLastActivity } from '../../contacts';
import { optionalEmail, optionalText, rules } from '../../shared';
import type { SocialnetLead } from './driver';
import { insertLink, linkedLeadIds, SkippedLead } from './syncs.repo';

/** Every contact made from a lead gets this source and starts in the `lead` stage of the pipeline. */
export const LEAD_SOURCE = 'socialnet';
const LEAD_STATUS = 'lead';
const NOTES_MAX = 10_000;

export interface ImportTarget {
  orgId: string;
  syncId: string;
  pageId: string;
  formId: string;
  formName: string;
  phoneCountry: string;
  /** The contact writer: a lead's contact is made as every other is. */
  contacts: ContactWriter;
}

export interface ImportCounts {
  created: number;
  linked: number;
  existing: number;
  skipped: SkippedLead[];
}

/** The contact fields a lead gives, validated like any contact; a bad row is an invalid_argument AppError naming the field. */
export function leadContactFields(lead: SocialnetLead, phoneCountry: string) {
  const name = optionalText(lead.fullName, 'fullName', rules.CONTACT_TEXT_MAX.name);
  const phone = normalisePhone(lead.phone, phoneCountry, 'phone');
  const email = optionalEmail(lead.email, 'email');
  // A lead form entry with neither is nobody we could call back (the public API asks the same of integrators).
  if (!name && !phone) throw invalid('fullName', 'a lead needs a full name or a phone number');
  return { name, phone, email };
}

/** The form's other answers, kept in the contact's notes so the salesperson sees what the lead asked for. */
export function leadNotes(lead: SocialnetLead, formName: string): string {
  const lines = [`Lead ${lead.id} from form "${formName}" (${lead.createdAt.toISOString()})`];
  for (const [question, answer] of Object.entries(lead.fields)) lines.push(`${question}: ${answer}`);
  const text = lines.join('\n');
  return text.length > NOTES_MAX ? `${text.slice(0, NOTES_MAX - 1)}…` : text;
}

/** Another transaction created a contact with the lead's phone meanwhile: the page is imported again and links to it. */
export function isPhoneConflict(err: unknown): boolean {
  const e = (err ?? {}) as { code?: string; constraint?: string };
  return e.code === '23505' && e.constraint === 'contacts_phone_uq';
}

type Valid = { lead: SocialnetLead; fields: ReturnType<typeof leadContactFields> };

/** Valid rows to import; rows imported before, repeated in the page or invalid are counted here. */
function triage(leads: SocialnetLead[], imported: Set<string>, phoneCountry: string, out: ImportCounts): Valid[] {
  const valid: Valid[] = [];
  const seen = new Set<string>();
  for (const lead of leads) {
    if (imported.has(lead.id) || seen.has(lead.id)) {
      out.existing++;
      continue;
    }
    seen.add(lead.id);
    try {
      valid.push({ lead, fields: leadContactFields(lead, phoneCountry) });
    } catch (err) {
      if (!(err instanceof AppError) || err.kind !== 'invalid_argument') throw err;
      out.skipped.push({ leadId: lead.id, reason: err.message });
    }
  }
  return valid;
}

/**
 * A page of leads, in the caller's transaction. Each lead is first claimed by its link row (primary key on
 * org and lead id, so a lead is imported at most once, even by two syncs at the same time); then a lead
 * whose phone belongs to a contact already is linked to it (the contact is left as the team keeps it), and
 * any other becomes a contact exactly as the contacts API makes one: same validation, same duplicate-phone
 * index, a `created` activity and contact.created in the outbox. Invalid rows are skipped with their reason.
 */
export async function importLeads(tx: PoolClient, t: ImportTarget, leads: SocialnetLead[]): Promise<ImportCounts> {
  const out: ImportCounts = { created: 0, linked: 0, existing: 0, skipped: [] };
  const imported = await linkedLeadIds(
    tx,
    t.orgId,
    leads.map((l) => l.id),
  );
  const valid = triage(leads, imported, t.phoneCountry, out);
  const byPhone = await contactIdsByPhone(tx, t.orgId, valid.map((v) => v.fields.phone).filter(Boolean));
  for (const { lead, fields } of valid) {
    const link = { orgId: t.orgId, leadId: lead.id, pageId: t.pageId, formId: t.formId, syncId: t.syncId };
    const existingId = fields.phone ? byPhone.get(fields.phone) : undefined;
    if (existingId) {
      if (!(await insertLink(tx, { ...link, contactId: existingId, outcome: 'linked' }))) {
        out.existing++;
        continue;
      }
      // Filling in a lead form is something the contact did: lastActivity only moves forward.
      await touchLastActivity(tx, t.orgId, existingId, lead.createdAt);
      out.linked++;
      continue;
    }
    const id = randomUUID();
    if (!(await insertLink(tx, { ...link, contactId: id, outcome: 'created' }))) {
      out.existing++;
      continue;
    }
    const row = await t.contacts.create(
      tx,
      {
        id,
        orgId: t.orgId,
        ...fields,
        source: LEAD_SOURCE,
        status: LEAD_STATUS,
        statusId: null,
        assignedUserId: null,
        notes: leadNotes(lead, t.formName),
        tags: [],
      },
      `Created (source ${LEAD_SOURCE}, lead ${lead.id}, form "${t.formName}")`,
    );
    // A later lead of the same person in this page links to the contact just made.
    if (fields.phone) byPhone.set(fields.phone, row.id);
    out.created++;
  }
  return out;
}
