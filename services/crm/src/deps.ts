import type { GrantKeeper } from '@crm/grpc-kit';
import type { Pool } from '@crm/db';
import type { Logger } from '@crm/logger';
import type { Metrics } from '@crm/metrics';
import type { BusinessHoursSource, ConversationSource, IdentityChannel, UserDirectory } from './clients';
import type { CrmConfig } from './config';
import type { ContactWriters, TotalCache } from './contacts';

/** Everything the domain needs, built once at start and passed down (no module-level singletons). */
export interface Deps {
  config: CrmConfig;
  pool: Pool;
  log: Logger;
  /** The one client to identity; `users` and the report and analytics lookups use it. */
  identity: IdentityChannel;
  /** The gateway's grant per org, renewed by RenewGrant: the origin of the calls crm makes on its own (#27). */
  grants: GrantKeeper;
  users: UserDirectory;
  conversations: ConversationSource;
  /** messaging's business hours (analytics that count open hours only). */
  businessHours: BusinessHoursSource;
  totals: TotalCache;
  /**
   * Every creation, change and deletion of a contact goes through it (with its activity, event and scoring facts), in
   * the trace of the work it writes for: `deps.contactWriter.inTrace(ctx.traceparent)`.
   */
  contactWriter: ContactWriters;
  /** This service's Prometheus registry (gRPC, events). */
  metrics: Metrics;
}
