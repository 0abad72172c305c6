import type { z } from 'zod';
import type { crm } from '@crm/proto-types';
import type { ContactField } from './contact-fields.schemas';

/** A custom contact field's definition; options is [] for every type but select. */
export function contactFieldOut(f: crm.ContactField__Output): z.input<typeof ContactField> {
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
