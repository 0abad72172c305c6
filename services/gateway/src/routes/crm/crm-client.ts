import type { ClientFor } from '@crm/grpc-kit';

/** The crm routes' client, typed by crm.v1.CrmService's generated messages (requests checked, answers decoded). */
export type CrmClient = ClientFor<'crm.v1.CrmService'>;
