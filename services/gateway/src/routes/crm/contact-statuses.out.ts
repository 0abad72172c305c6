import type { crm } from '@crm/proto-types';
import { orNull } from '../../http/shape';

/** A custom contact status: no color chosen is null. */
export function statusOut(st: crm.ContactStatus__Output) {
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
