import type { crm } from '@crm/proto-types';
import { orNull } from '../../http/shape';

/** A custom contact status: no color chosen is null. */
export const statusOut = (st: crm.ContactStatus__Output) => ({ ...st, color: orNull(st.color) });
