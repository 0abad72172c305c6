import { z } from 'zod';
import { crmRules as rules } from '@crm/validation';
import { s } from '../../http/validate';
import { text } from './common.schemas';

const MAX = rules.CUSTOMER_LIST_TEXT_MAX;
// Criteria are checked by crm (field by field, naming criteria.filters[i].field|operator|value); here only
// that the body has the right outer shape.
export const NewCustomerList = z.object({ name: s.requiredText(MAX.name), description: text(MAX.description), criteria: z.unknown().optional() });
export const CustomerListPatch = z.object({
  name: s.requiredText(MAX.name).optional(),
  description: text(MAX.description),
  criteria: z.unknown().optional(),
});
export const criteriaJson = (c: unknown) => (c === undefined ? undefined : JSON.stringify(c));

const iso = () => z.string().meta({ description: 'ISO 8601 UTC timestamp' });

/** A customer list with its criteria (customerListOut is typed by it). */
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
/** An entry of GET /customer-lists: the list without its criteria. */
export const CustomerListBrief = CustomerList.pick({ id: true, name: true, description: true, contactCount: true, status: true, createdAt: true });
/** What POST /customer-lists answers. */
export const CustomerListCreated = CustomerList.pick({ id: true, name: true, status: true, createdAt: true });
