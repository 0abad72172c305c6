import type { GrantKeeper } from '@crm/grpc-kit';
import type { SecretBox } from '@crm/crypto';
import type { Pool } from '@crm/db';
import type { Logger } from '@crm/logger';
import type { AddressGuard } from '@crm/net-guard';
import type { ConnectorConfig } from './config';
import type { ChatnetDriver, SandboxLive, SandboxNetwork } from './drivers';
import type { MessagingFiles } from './files';
import type { OwnerDirectory } from './owners';
import type { Leases, Peers, SessionPool } from './pool';
import type { ConnectorRedis } from './redis';

/** Everything the domain needs, built once at start and passed down (no module-level singletons). */
export interface Deps {
  config: ConnectorConfig;
  pool: Pool;
  redis: ConnectorRedis;
  log: Logger;
  box: SecretBox;
  driver: ChatnetDriver;
  /**
   * The sandbox network for its control RPCs: set only with CHATNET_DRIVER=sandbox outside production. `network` reads
   * and writes what the network stores (in Redis, shared with a standalone network process); `live` reaches its live
   * connections and offline store: this process's own network, or the standalone one (CHATNET_SANDBOX_URL).
   */
  sandbox?: { network: SandboxNetwork; live: SandboxLive };
  leases: Leases;
  peers: Peers;
  sessions: SessionPool;
  owners: OwnerDirectory;
  /** messaging's attachments HTTP port: files both ways. */
  files: MessagingFiles;
  /** The SSRF guard for accounts' proxies (CONNECTOR_ALLOWED_PRIVATE_ADDRESSES). */
  guard: AddressGuard;
  /** The gateway's grant per org, renewed by RenewGrant: the origin of the received files it stores (issue #27). */
  grants: GrantKeeper;
}
