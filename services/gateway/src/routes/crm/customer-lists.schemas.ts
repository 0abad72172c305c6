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
