import type { crm } from '@crm/proto-types';
import { orNull } from '../../http/shape';

export type CustomerList = crm.CustomerList__Output;

export function customerListOut(l: CustomerList) {
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
export function customerListBriefOut(l: CustomerList) {
  const { id, name, description, contactCount, status, createdAt } = customerListOut(l);
  return { id, name, description, contactCount, status, createdAt };
}

/** POST /customer-lists answers what a client needs to follow up: the id, the name, the draft status. */
export function customerListCreatedOut(l: CustomerList) {
  const { id, name, status, createdAt } = customerListOut(l);
  return { id, name, status, createdAt };
}
