import type { crm } from '@crm/proto-types';

/** A custom contact field's definition; options is [] for every type but select. */
export function contactFieldOut(f: crm.ContactField__Output) {
  return {
    id: f.id,
    key: f.key,
    label: f.label,
    type: f.type,
    options: f.options,
    position: f.position,
    createdAt: f.createdAt,
    updatedAt: f.updatedAt,
  };
}
