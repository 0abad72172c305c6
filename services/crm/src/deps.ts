import type { Pool } from '@crm/db';
import type { Logger } from '@crm/logger';
import type { Metrics } from '@crm/metrics';
import type { ConversationSource, IdentityChannel, OpenTimeSource, UserDirectory } from './clients';
import type { CrmConfig } from './config';
import type { ContactWriter, TotalCache } from './contacts';

/** Everything the domain needs, built once at start and passed down (no module-level singletons). */
export interface Deps {
  config: CrmConfig;
  pool: Pool;
  log: Logger;
  /** The one client to identity; `users` and the report and analytics lookups use it. */
  identity: IdentityChannel;
  users: UserDirectory;
  conversations: ConversationSource;
  /** messaging's business hours: open time inside intervals (response-time analytics with businessHours=true). */
  openTime: OpenTimeSource;
  totals: TotalCache;
  /** Every creation, change and deletion of a contact goes through it (with its activity, event and scoring facts). */
  contactWriter: ContactWriter;
  /** This service's Prometheus registry (gRPC, events). */
  metrics: Metrics;
}
