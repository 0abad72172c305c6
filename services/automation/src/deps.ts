import type { Pool } from '@crm/db';
import type { Logger } from '@crm/logger';
import type { MailSender } from '@crm/mail';
import type { AutomationConfig } from './config';
import type { Remote } from './remote';

/** Everything the domain needs, built once at start and passed down (no module-level singletons). */
export interface Deps {
  config: AutomationConfig;
  pool: Pool;
  log: Logger;
  remote: Remote;
  /** Alert emails; `enabled` is false without SMTP_URL. */
  mail: MailSender;
}
