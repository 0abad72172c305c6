import type { SecretBox } from '@crm/crypto';
import type { Pool } from '@crm/db';
import type { Logger } from '@crm/logger';
import type { AddressGuard } from '@crm/net-guard';
import type { RedisClient } from '@crm/redis';
import type { AiServiceConfig } from './config';
import type { MessagingGateway } from './domain/conversations';
import type { DailyQuota, DailyTokens } from './domain/quota';

/** Everything the domain needs, built once at start and passed down (no module-level singletons). */
export interface Deps {
  config: AiServiceConfig;
  pool: Pool;
  redis: RedisClient;
  log: Logger;
  box: SecretBox;
  quota: DailyQuota;
  tokens: DailyTokens;
  messaging: MessagingGateway;
  /** The SSRF guard for organizations' own base URLs (AI_ALLOWED_PRIVATE_ADDRESSES). */
  guard: AddressGuard;
}
