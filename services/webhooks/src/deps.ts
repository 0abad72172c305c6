import type { SecretBox } from '@crm/crypto';
import type { Pool } from '@crm/db';
import type { Logger } from '@crm/logger';
import type { WebhooksConfig } from './config';
import type { WebhookSender } from './delivery/sender';
import type { FeedWaiters } from './feed/feed-waiters';

/** Everything the domain needs, built once at start and passed down (no module-level singletons). */
export interface Deps {
  config: WebhooksConfig;
  pool: Pool;
  log: Logger;
  box: SecretBox;
  sender: WebhookSender;
  /** Long-polling feed readers, woken by appends of their organization (on any instance). */
  feedWaiters: FeedWaiters;
}

/** Additional authenticated data of a webhook's encrypted secret: a ciphertext moved to another row fails. */
export const secretAad = (orgId: string, webhookId: string) => `webhook:${orgId}:${webhookId}`;
