import type { Pool } from '@crm/db';
import type { GrantKeeper } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';
import type { Metrics } from '@crm/metrics';
import type { RedisClient } from '@crm/redis';
import type { RemoteClients } from './clients';
import type { MessagingConfig } from './config';
import type { SendGovernor } from './governor';
import type { SenderContacts } from './sender-contacts';
import type { AutoReplyAccounts } from './auto-reply-settings';
import type { KnownThreads } from './known-threads';

/** Everything the domain needs, built once at start and passed down (no module-level singletons). */
export interface Deps {
  config: MessagingConfig;
  pool: Pool;
  redis: RedisClient;
  log: Logger;
  remote: RemoteClients;
  /** The gateway's grant per org, renewed by RenewGrant; remote sends it with the calls messaging makes on its own. */
  grants: GrantKeeper;
  governor: SendGovernor;
  /** This service's Prometheus registry (gRPC, events). */
  metrics: Metrics;
  /** crm contact ids of group senders, remembered a while (sender-contacts/). */
  senderContacts: SenderContacts;
  /** The accounts whose customers get AI answers (issue #32), in memory: the inbound batch looks messages up here. */
  autoReplyAccounts: AutoReplyAccounts;
  /** Threads seen with a conversation (known-threads/): the inbound batch asks the database only about the others. */
  knownThreads: KnownThreads;
}
