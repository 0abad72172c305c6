import type { Queryable } from '@crm/db';
import { fieldDefs } from './fields.repo';
import { applyChanges, changesFromJsonText, type CustomFieldChanges, type CustomFields, filterFromText } from './values';

/**
 * What the contacts module asks of custom fields: the org's definitions are read only when a request carries
 * custom field values or filters, so a plain contact write costs nothing more.
 */

/** A new contact's values from `customFieldsJson` (null/"" values are simply not set). */
export async function valuesForNewContact(db: Queryable, orgId: string, json: string | undefined): Promise<CustomFields> {
  if (json === undefined || json === '') return {};
  return applyChanges({}, changesFromJsonText(json, await fieldDefs(db, orgId)));
}

/** The changes an update asks for, validated; undefined when it sends none. */
export async function changesForUpdate(db: Queryable, orgId: string, json: string | undefined): Promise<CustomFieldChanges | undefined> {
  if (json === undefined || json === '') return undefined;
  return changesFromJsonText(json, await fieldDefs(db, orgId));
}

/** cf.<key>=value filters of a contact list, typed by the definitions. */
export async function listFilter(db: Queryable, orgId: string, filters: Record<string, string> | undefined): Promise<CustomFields | undefined> {
  if (!filters || Object.keys(filters).length === 0) return undefined;
  return filterFromText(filters, await fieldDefs(db, orgId));
}

export { applyChanges };
