import { orNull } from '../../http/shape';

export interface CustomerList {
  id: string;
  name: string;
  description: string;
  status: string;
  contactCount: number;
  criteriaJson: string;
  createdAt: string;
  updatedAt: string;
}

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
