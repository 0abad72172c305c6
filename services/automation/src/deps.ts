import type { GrantKeeper } from '@crm/grpc-kit';
import type { SecretBox } from '@crm/crypto';
import type { Pool } from '@crm/db';
import type { Logger } from '@crm/logger';
import type { MailSender } from '@crm/mail';
import type { AddressGuard } from '@crm/net-guard';
import type { AutomationConfig } from './config';
import type { LinkSigner } from './email-links';
import type { HttpStepClient } from './http-step';
import type { RuleCache } from './rule-definitions';
import type { Remote } from './remote';

/** Everything the domain needs, built once at start and passed down (no module-level singletons). */
export interface Deps {
  config: AutomationConfig;
  pool: Pool;
  log: Logger;
  remote: Remote;
  /** The gateway's grant per org, renewed by RenewGrant; remote.actingFor sends it with automation's own calls. */
  grants: GrantKeeper;
  /** Alert emails; `enabled` is false without SMTP_URL. */
  mail: MailSender;
  /** Organizations' SMTP passwords at rest. */
  box: SecretBox;
  /** The SSRF guard for organizations' SMTP hosts (EMAIL_ALLOWED_PRIVATE_ADDRESSES). */
  emailGuard: AddressGuard;
  /** Signs and checks the unsubscribe and open-pixel links of campaign emails. */
  links: LinkSigner;
  /** The orgs' active rules, per trigger, held in memory for the trigger consumer. */
  rules: RuleCache;
  /** http_request steps, through the SSRF guard (AUTOMATION_ALLOWED_PRIVATE_ADDRESSES). */
  httpSteps: HttpStepClient;
}
