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
