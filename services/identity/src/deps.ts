import type { Pool } from '@crm/db';
import type { Logger } from '@crm/logger';
import type { RedisClient } from '@crm/redis';
import { authKeys, createTokenSigner } from '@crm/auth';
import type { IdentityConfig } from './config';
import { LoginThrottle } from './domain/login-throttle';
import type { Mailer } from './mail/mailer';

/** Everything the domain needs, built once at start and passed down (no module-level singletons). */
export interface Deps {
  config: IdentityConfig;
  pool: Pool;
  redis: RedisClient;
  log: Logger;
  keys: ReturnType<typeof authKeys>;
  signAccess: ReturnType<typeof createTokenSigner>;
  throttle: LoginThrottle;
  mailer: Mailer;
}
