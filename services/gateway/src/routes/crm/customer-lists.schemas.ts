import { z } from 'zod';
import { s } from '../../http/validate';
import { text } from './common.schemas';

// Criteria are checked by crm (field by field, naming criteria.filters[i].field|operator|value); here only
// that the body has the right outer shape.
export const NewCustomerList = z.object({ name: s.requiredText(200), description: text(2000), criteria: z.unknown().optional() });
export const CustomerListPatch = z.object({ name: s.requiredText(200).optional(), description: text(2000), criteria: z.unknown().optional() });
export const criteriaJson = (c: unknown) => (c === undefined ? undefined : JSON.stringify(c));
