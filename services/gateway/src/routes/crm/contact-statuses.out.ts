import type { z } from 'zod';
import type { crm } from '@crm/proto-types';
import type { Status } from './contact-statuses.schemas';
import { orNull } from '../../http/shape';

/** A custom contact status: no color chosen is null. */
export function statusOut(st: crm.ContactStatus__Output): z.input<typeof Status> {
  return {
    id: st.id,
    name: st.name,
    color: orNull(st.color),
    position: st.position,
    contactCount: st.contactCount,
    createdAt: st.createdAt,
    updatedAt: st.updatedAt,
  };
}
