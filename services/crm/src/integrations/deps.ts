import type { Pool } from '@crm/db';
import type { Logger } from '@crm/logger';
import type { CrmConfig } from '../config';
import type { SocialnetDriver } from './socialnet/driver';
import type { TokenBox } from './socialnet/page-access';
import type { SandboxSocialnet } from './socialnet/sandbox.driver';

/** What the integrations feature needs, built once at start by createIntegrations. */
export interface IntegrationDeps {
  config: CrmConfig;
  pool: Pool;
  log: Logger;
  driver: SocialnetDriver;
  box: TokenBox;
  /** Present only with SOCIALNET_DRIVER=sandbox: its control API needs the simulated network. */
  sandbox?: SandboxSocialnet;
}
