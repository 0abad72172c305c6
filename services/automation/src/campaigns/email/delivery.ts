import { createSmtpClient, smtpFailureOf, SmtpFailure } from '@crm/mail';
import type { Deps } from '../../deps';
import type { CampaignRow, Outcome, RecordDetail } from '../campaigns.repo';
import { type RecipientRow, sendKeyContactOf } from '../recipients.repo';
import { isSuppressed } from './email-suppressions.repo';
import { ChannelProblem, channelFor, ResolvedChannel, scrub, validEmail } from '../../email-channel';
import { composeEmail } from './compose';
import { pixelUrl, unsubscribeUrl } from '../../email-links';

/** What the campaign sender lends one email send: its outcome records, its pacing, its pause. */
export interface SendHooks {
  record(outcome: Outcome, detail: RecordDetail): Promise<void>;
  /** Try this recipient again at `at` (counted as an attempt or not). */
  defer(at: Date, reason: string, countAttempt: boolean): Promise<void>;
  /** Wait for this send's slot at the campaign's pace; false: not now (the recipient stays pending). */
  takeSlot(): Promise<boolean>;
  /** Pause the whole campaign with a reason its creator is told: no recipient could be sent to. */
  pause(reason: string): Promise<void>;
  nextSendAt(): Date;
}

/** The same shape as a broadcast send's result: did it cost a send slot, is the mail server unreachable? */
export interface EmailDelivery {
  attempted: boolean;
  serviceDown?: string;
}

export const NO_EMAIL = 'The contact has no email address';
export const SUPPRESSED = 'The address unsubscribed (it is on the suppression list)';

/** Connection-level failures: the server cannot be reached now, so the whole campaign backs off, nobody's attempts count. */
const UNREACHABLE = new Set([
  'ECONNECTION',
  'ETIMEDOUT',
  'ESOCKET',
  'EDNS',
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

type Verdict = 'channel' | 'recipient' | 'transient' | 'unreachable';

/**
 * What an SMTP failure means for the campaign. A refused login or TLS problem affects every recipient (the
 * campaign pauses); a 5xx reply is this recipient's final answer (failed); a 4xx reply (421 busy, 450
 * mailbox busy, greylisting) is retried on CAMPAIGN_RETRY_SCHEDULE; no connection at all backs the campaign off.
 */
export function verdictOf(f: SmtpFailure): Verdict {
  if (f.code === 'EAUTH' || f.code === 'ETLS' || f.code === 'ENOAUTH' || f.responseCode === 530 || f.responseCode === 534 || f.responseCode === 535)
    return 'channel';
  if (f.responseCode !== undefined && f.responseCode >= 500) return 'recipient';
  if (f.responseCode !== undefined && f.responseCode >= 400) return 'transient';
  if (f.code && UNREACHABLE.has(f.code)) return 'unreachable';
  return 'recipient';
}

/**
 * One email recipient: skipped without a usable address or when suppressed; otherwise rendered, paced like
 * every campaign send and handed to the channel's SMTP server. SMTP has no idempotency key: a crash between
 * the server's acceptance and the outcome's record can send a recipient twice (the window is one statement).
 */
export async function deliverEmail(deps: Deps, c: CampaignRow, rec: RecipientRow, hooks: SendHooks): Promise<EmailDelivery> {
  const address = rec.email.trim();
  if (!address || !validEmail(address)) {
    await hooks.record('skipped', { error: address ? `${NO_EMAIL} (not a valid address: ${address.slice(0, 80)})` : NO_EMAIL, attempted: false });
    return { attempted: false };
  }
  if (await isSuppressed(deps.pool, c.org_id, address)) {
    await hooks.record('skipped', { error: SUPPRESSED, attempted: false });
    return { attempted: false };
  }
  let channel: ResolvedChannel | undefined;
  try {
    channel = await channelFor(deps, c.org_id);
  } catch (err) {
    if (err instanceof ChannelProblem) {
      await hooks.pause(err.message);
      return { attempted: false };
    }
    return { attempted: false, serviceDown: `Email channel: ${(err as Error).message}` };
  }
  if (!channel) {
    await hooks.pause('No email channel is configured any more (organization SMTP settings or the server SMTP_URL)');
    return { attempted: false };
  }
  const subject = { orgId: c.org_id, email: address, campaignId: c.id, contactId: sendKeyContactOf(rec) };
  const mail = composeEmail(
    { subject: c.subject, content: c.content ?? '', variables: c.variables },
    { name: rec.name, phone: rec.phone, email: address, status: rec.contact_status, tags: rec.tags, chatnetUid: rec.chatnet_uid },
    {
      unsubscribeUrl: unsubscribeUrl(deps.config.PUBLIC_URL, deps.links.sign('unsubscribe', subject)),
      pixelUrl: pixelUrl(deps.config.PUBLIC_URL, deps.links.sign('open', subject)),
    },
  );
  if (!(await hooks.takeSlot())) return { attempted: false };
  const client = createSmtpClient(channel.target, deps.config.SMTP_TIMEOUT_MS);
  try {
    await client.send({ from: channel.from, to: address, ...mail });
  } catch (err) {
    return failed(deps, rec, hooks, smtpFailureOf(err), channel.secrets);
  } finally {
    client.close();
  }
  await hooks.record('sent', { sentAt: new Date(), attempted: true, nextSendAt: hooks.nextSendAt() });
  return { attempted: true };
}

async function failed(deps: Deps, rec: RecipientRow, hooks: SendHooks, f: SmtpFailure, secrets: string[]): Promise<EmailDelivery> {
  const reason = `SMTP: ${scrub(f.message, secrets)}`;
  switch (verdictOf(f)) {
    case 'channel':
      await hooks.pause(`The mail server refused the channel (${reason}); fix the email settings and activate the campaign again`);
      return { attempted: true };
    case 'unreachable':
      return { attempted: true, serviceDown: reason };
    case 'transient': {
      const wait = deps.config.CAMPAIGN_RETRY_SCHEDULE[rec.attempts];
      if (wait === undefined) break;
      await hooks.defer(new Date(Date.now() + wait), reason, true);
      return { attempted: true };
    }
    case 'recipient':
      break;
  }
  await hooks.record('failed', { error: reason, attempted: true });
  return { attempted: true };
}
