import { orNull } from '../../http/shape';

export interface ContactStatus {
  id: string;
  color: string;
  [field: string]: unknown;
}

/** A custom contact status: no color chosen is null. */
export const statusOut = (st: ContactStatus) => ({ ...st, color: orNull(st.color) });
