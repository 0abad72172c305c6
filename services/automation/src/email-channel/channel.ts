import { withTransaction } from '@crm/db';
import { recordAudit } from '@crm/events';
import { AppError, invalid, notFound, requireCan, requireUser, traceFields, OrgContext } from '@crm/grpc-kit';
import { automationRules as rules } from '@crm/validation';
import { createSmtpClient, smtpFailureOf, SmtpTarget } from '@crm/mail';
import { canonicalHost, isIpLiteral } from '@crm/net-guard';
import type { Deps } from '../deps';
import * as repo from './email-channels.repo';

/**
 * The org's email channel: its own SMTP server (email_channels), else the deployment's SMTP_URL, else none.
 * The password is encrypted at rest and only decrypted to send; the host is judged by the SSRF guard when it
 * is saved and again before every connection, which dials the very address judged.
 */

export type ChannelSource = 'organization' | 'server';

/** A channel ready to send through. */
export interface ResolvedChannel {
  source: ChannelSource;
  target: SmtpTarget;
  from: string | { name: string; address: string };
  /** Stripped from error messages before they are stored or shown (a server may echo what it was sent). */
  secrets: string[];
}

/** The problem that stops every send of the channel (not one recipient's): the campaign pauses with it. */
export class ChannelProblem extends Error {}

export const aad = (orgId: string) => `email-channel:${orgId}`;
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;
const EMAIL = /^[^\s@<>()",;:\\[\]]+@[^\s@<>()",;:\\[\]]+\.[^\s@<>()",;:\\[\]]+$/;
const CONTROL = /[\u0000-\u001f\u007f]/;
const RESOLVE_TIMEOUT_MS = 3_000;

export const channelUnavailable = (field = 'type') =>
  new AppError(
    'failed_precondition',
    `${field}: no email channel is configured: set the organization's SMTP server (PUT /api/v1/settings/email) or the server's SMTP_URL, or use type broadcast`,
    {
      code: 'channel_unavailable',
      details: [{ field, message: 'no email channel is configured (organization SMTP settings or the server SMTP_URL)' }],
    },
  );

export function validEmail(v: string): boolean {
  return v.length <= 320 && EMAIL.test(v);
}

/** Whether the org can send email at all (its own channel or SMTP_URL), without decrypting or dialling anything. */
export async function hasChannel(deps: Deps, orgId: string): Promise<boolean> {
  return Boolean(deps.config.SMTP_URL) || (await repo.getChannel(deps.pool, orgId)) !== undefined;
}

/**
 * The channel to send through now, or undefined when there is none. Throws ChannelProblem when the org's
 * channel cannot be used as it is (its host is refused, its password no longer decrypts); errors of DNS are
 * passed on as they are (passing, like a connection error).
 */
export async function channelFor(deps: Deps, orgId: string): Promise<ResolvedChannel | undefined> {
  const row = await repo.getChannel(deps.pool, orgId);
  if (!row)
    return deps.config.SMTP_URL ? { source: 'server', target: { url: deps.config.SMTP_URL }, from: deps.config.MAIL_FROM, secrets: [] } : undefined;
  let password = '';
  if (row.password_enc) {
    try {
      password = deps.box.decrypt(row.password_enc, aad(orgId));
    } catch {
      throw new ChannelProblem('The stored SMTP password cannot be decrypted (the encryption key changed); save the email settings again');
    }
  }
  // A channel saved before the port list (or with a port since removed from it) is not dialled.
  if (!deps.config.SMTP_ALLOWED_PORTS.includes(row.port))
    throw new ChannelProblem(
      `Port ${row.port} is not an SMTP port this server allows; save the email settings with one of ${deps.config.SMTP_ALLOWED_PORTS.join(', ')}`,
    );
  let address: string;
  try {
    [{ address }] = await deps.emailGuard.resolveAllowed(row.host);
  } catch (err) {
    if ((err as { code?: string }).code === 'EADDRESSREFUSED') throw new ChannelProblem((err as Error).message);
    throw err;
  }
  const host = canonicalHost(row.host);
  return {
    source: 'organization',
    target: {
      host: address,
      port: row.port,
      secure: row.secure,
      servername: isIpLiteral(host) ? undefined : host,
      user: row.username || undefined,
      password,
    },
    from: row.from_name ? { name: row.from_name, address: row.from_address } : row.from_address,
    secrets: [password, row.username].filter((s) => s.length >= 3),
  };
}

export function scrub(message: string, secrets: string[]): string {
  return secrets.reduce((m, s) => m.split(s).join('••••'), message).slice(0, 500);
}

function view(row: repo.EmailChannelRow | undefined, deps: Deps) {
  if (!row) {
    return {
      source: deps.config.SMTP_URL ? 'server' : 'none',
      host: '',
      port: 0,
      secure: false,
      user: '',
      passwordSet: false,
      fromAddress: '',
      fromName: '',
    };
  }
  return {
    source: 'organization',
    host: row.host,
    port: row.port,
    secure: row.secure,
    user: row.username,
    passwordSet: row.password_enc !== null,
    fromAddress: row.from_address,
    fromName: row.from_name,
    updatedAt: row.updated_at.toISOString(),
  };
}

/** GET /settings/email: campaign managers (team_lead and up) see whether and how the org sends email. */
export async function getChannel(deps: Deps, ctx: OrgContext) {
  requireCan(ctx, 'campaigns:manage');
  const { orgId } = requireUser(ctx);
  return view(await repo.getChannel(deps.pool, orgId), deps);
}

export interface ChannelInput {
  host?: string;
  port?: number;
  secure?: boolean;
  user?: string;
  password?: string;
  fromAddress?: string;
  fromName?: string;
}

function text(field: string, v: string | undefined, max: number, required = false): string {
  const s = (v ?? '').trim();
  if (required && !s) throw invalid(field, 'is required');
  if (s.length > max) throw invalid(field, `must be at most ${max} characters`);
  if (CONTROL.test(s)) throw invalid(field, 'must not contain control characters or line breaks');
  return s;
}

const AUDITED = { host: 'host', port: 'port', secure: 'secure', user: 'username', fromAddress: 'from_address', fromName: 'from_name' } as const;

/** PUT /settings/email: admins and owners. The whole channel is given; an omitted password keeps the stored one. */
export async function updateChannel(deps: Deps, ctx: OrgContext, input: ChannelInput) {
  requireCan(ctx, 'settings:edit');
  const { orgId, userId } = requireUser(ctx);
  const host = text('host', input.host, rules.SMTP_HOST_MAX, true).toLowerCase();
  const bare = host.replace(/^\[|\]$/g, '');
  if (!isIpLiteral(bare) && !HOST_NAME.test(host)) throw invalid('host', 'must be a host name or IP address, without scheme or port');
  const port = input.port ?? (input.secure ? 465 : 587);
  rules.smtpPort(port);
  if (!deps.config.SMTP_ALLOWED_PORTS.includes(port)) throw invalid('port', `must be an SMTP port: ${deps.config.SMTP_ALLOWED_PORTS.join(', ')}`);
  const secure = input.secure ?? port === 465;
  const username = text('user', input.user, rules.SMTP_USER_MAX);
  const fromAddress = text('fromAddress', input.fromAddress, rules.SMTP_FROM_ADDRESS_MAX, true);
  if (!validEmail(fromAddress)) throw invalid('fromAddress', 'must be an email address');
  const fromName = text('fromName', input.fromName, rules.SMTP_FROM_NAME_MAX);
  if (input.password !== undefined && input.password.length > rules.SMTP_PASSWORD_MAX)
    throw invalid('password', `must be at most ${rules.SMTP_PASSWORD_MAX} characters`);
  if (input.password !== undefined && CONTROL.test(input.password)) throw invalid('password', 'must not contain control characters or line breaks');

  const check = await deps.emailGuard.checkOnSave(host, RESOLVE_TIMEOUT_MS);
  if ('refused' in check) throw invalid('host', check.refused);
  if ('unresolved' in check) deps.log.info({ host, err: check.unresolved, ...traceFields(ctx) }, 'email channel host does not resolve now; accepted');

  const row = await withTransaction(deps.pool, async (db) => {
    const before = await repo.getChannel(db, orgId);
    // A stored password goes only to the host it was entered for: a new host without a password has none.
    let passwordEnc: string | null;
    if (input.password !== undefined) passwordEnc = input.password ? deps.box.encrypt(input.password, aad(orgId)) : null;
    else passwordEnc = before && before.host === host ? before.password_enc : null;
    const saved = await repo.saveChannel(db, orgId, { host, port, secure, username, passwordEnc, fromAddress, fromName }, userId || null);
    // Which settings changed, by their API names; the password only as "changed", never a value.
    const changed = Object.entries(AUDITED)
      .filter(([, column]) => !before || before[column] !== saved[column])
      .map(([field]) => field);
    await recordAudit(db, ctx, {
      action: 'settings.email_updated',
      resourceType: 'email_channel',
      resourceId: null,
      details: { changed, passwordChanged: (before?.password_enc ?? null) !== passwordEnc },
    });
    return saved;
  });
  return view(row, deps);
}

/** DELETE /settings/email: the org falls back to SMTP_URL (or has no email channel). */
export async function deleteChannel(deps: Deps, ctx: OrgContext) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = requireUser(ctx);
  const deleted = await withTransaction(deps.pool, async (db) => {
    if (!(await repo.deleteChannel(db, orgId))) return false;
    await recordAudit(db, ctx, { action: 'settings.email_cleared', resourceType: 'email_channel', resourceId: null });
    return true;
  });
  if (!deleted) throw notFound('Email channel');
  return { ok: true, message: 'Email channel removed' };
}

/**
 * What the settings test says of a failure: a sentence of ours for its kind (with the server's reply code where it
 * gave one), never the server's own text. A test an admin can aim at any host must not read banners or replies back
 * to them.
 */
export function classifySmtpFailure(err: unknown): string {
  const f = smtpFailureOf(err);
  const reply = f.responseCode ? ` (${f.responseCode})` : '';
  if (f.code === 'EAUTH' || (f.responseCode !== undefined && [530, 534, 535].includes(f.responseCode)))
    return `The mail server refused the sign-in${reply}: check the user name and password`;
  if (/certificate|ssl|tls/i.test(f.message) || f.code === 'ETLS')
    return 'No secure connection to the mail server could be made: check the port and the secure setting';
  if (f.code === 'ETIMEDOUT' || /timeout/i.test(f.message)) return 'The mail server did not answer in time';
  if (f.code === 'ECONNECTION' || f.code === 'ECONNREFUSED' || f.code === 'ESOCKET' || f.code === 'EDNS')
    return 'The mail server could not be reached: check the host and port';
  if (f.responseCode !== undefined && f.responseCode >= 500)
    return `The mail server refused the message${reply}: check the sender address and the server's rules`;
  if (f.responseCode !== undefined && f.responseCode >= 400) return `The mail server cannot take the message now${reply}: try again later`;
  return 'The mail server did not accept the message';
}

/** POST /settings/email/test: one email through the channel in effect; the SMTP error is the answer, not a failure. */
export async function testChannel(deps: Deps, ctx: OrgContext, req: { to?: string }) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = requireUser(ctx);
  const to = text('to', req.to, 320, true);
  if (!validEmail(to)) throw invalid('to', 'must be an email address');
  let channel: ResolvedChannel | undefined;
  try {
    channel = await channelFor(deps, orgId);
  } catch (err) {
    return { delivered: false, error: (err as Error).message };
  }
  if (!channel) throw channelUnavailable('channel');
  const client = createSmtpClient(channel.target, deps.config.SMTP_TIMEOUT_MS);
  try {
    await client.send({
      from: channel.from,
      to,
      subject: 'Test email from your CRM',
      text: 'This is a test of your email settings. Campaign emails will be sent the same way.',
      html: '<p>This is a test of your email settings. Campaign emails will be sent the same way.</p>',
    });
    return { delivered: true, error: '' };
  } catch (err) {
    return { delivered: false, error: classifySmtpFailure(err) };
  } finally {
    client.close();
  }
}
