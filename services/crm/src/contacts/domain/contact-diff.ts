import * as repo from '../db/contacts.repo';

// What a patch changes of a contact and the activity line that says so, for ContactWriter and contact-transfer's
// import. Apart from domain/contacts.ts, which reads ContactsDeps: that names ContactWriter, so the writer importing
// domain/contacts.ts would make the two import each other.

/** API field name of each column a patch can change, for `changes` in contact.updated. */
const FIELD_OF: Record<keyof repo.ContactPatch, string> = {
  name: 'name',
  email: 'email',
  phone: 'phone',
  source: 'source',
  status: 'status',
  statusId: 'statusId',
  assignedUserId: 'assignedUserId',
  notes: 'notes',
  tags: 'tags',
  avatar: 'avatar',
  threadTypes: 'threadTypes',
  dealValue: 'dealValue',
  customFields: 'customFields',
};

/** Only what actually differs is written and reported. */
export function diff(row: repo.ContactRow, patch: repo.ContactPatch): { changed: repo.ContactPatch; changes: string[] } {
  const changed: repo.ContactPatch = {};
  const changes: string[] = [];
  for (const key of Object.keys(patch) as (keyof repo.ContactPatch)[]) {
    const next = patch[key];
    if (next === undefined) continue;
    if (JSON.stringify(next) === JSON.stringify(row[repo.PATCH_COLUMNS[key]])) continue;
    (changed as Record<string, unknown>)[key] = next;
    changes.push(FIELD_OF[key]);
  }
  return { changed, changes };
}

export function describe(before: repo.ContactRow, after: repo.ContactRow, changes: string[]): string {
  const parts = changes.map((field) => {
    if (field === 'status') return `status: ${before.status} → ${after.status}`;
    if (field === 'assignedUserId') return after.assigned_user_id ? `assigned to ${after.assigned_user_id}` : 'unassigned';
    return field;
  });
  return `Changed ${parts.join(', ')}`;
}
