import type { z } from 'zod';
import type { crm } from '@crm/proto-types';
import type { CustomerListBrief, CustomerListCreated, CustomerList as CustomerListSchema } from './customer-lists.schemas';
import { orNull } from '../../http/shape';

export type CustomerList = crm.CustomerList__Output;

export function customerListOut(l: CustomerList): z.input<typeof CustomerListSchema> {
  return {
    id: l.id,
    name: l.name,
    description: orNull(l.description),
    status: l.status,
    contactCount: l.contactCount,
    criteria: JSON.parse(l.criteriaJson || '{"filters":[]}') as unknown,
    createdAt: l.createdAt,
    updatedAt: l.updatedAt,
  };
}

/** An entry of GET /customer-lists: the list without its criteria (they can be long), through the one mapper. */
export function customerListBriefOut(l: CustomerList): z.input<typeof CustomerListBrief> {
  const { id, name, description, contactCount, status, createdAt } = customerListOut(l);
  return { id, name, description, contactCount, status, createdAt };
}

/** POST /customer-lists answers what a client needs to follow up: the id, the name, the draft status. */
export function customerListCreatedOut(l: CustomerList): z.input<typeof CustomerListCreated> {
  const { id, name, status, createdAt } = customerListOut(l);
  return { id, name, status, createdAt };
}
