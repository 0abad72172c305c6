import nodemailer from 'nodemailer';
import type { Logger } from '@crm/logger';

/** The settings every mail-sending service reads (see `smtpEnv` in @crm/config). */
export interface SmtpConfig {
  /** smtps://user:pass@host:465, or smtp:// (upgraded with STARTTLS when offered); unset: no mail. */
  SMTP_URL?: string;
  MAIL_FROM: string;
  /** Connect, greeting and socket timeout: a slow mail server must not stall the work that sends. */
  SMTP_TIMEOUT_MS: number;
}

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface MailSender {
  /** Whether a mail server is configured at all (callers skip the work of composing mail otherwise). */
  readonly enabled: boolean;
  /**
   * true when the mail server accepted the message; false when none is configured or it failed (logged, with
   * `logFields` on the line: the trace of the work that sends it, for a process without an active context).
   */
  send(mail: Mail, what: string, logFields?: Record<string, unknown>): Promise<boolean>;
  close(): void;
}

/** For the HTML part: user-chosen text (names, message previews) must never become markup. */
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * One SMTP transport for the process. Sending is best effort by design: every caller's mail (invitations,
 * alerts) is a side effect of work that already succeeded, so a refusal or timeout is logged and answered false.
 */
export function createMailSender(config: SmtpConfig, log: Logger): MailSender {
  if (!config.SMTP_URL) return { enabled: false, send: async () => false, close: () => undefined };
  const transport = nodemailer.createTransport(config.SMTP_URL, {
    connectionTimeout: config.SMTP_TIMEOUT_MS,
    greetingTimeout: config.SMTP_TIMEOUT_MS,
    socketTimeout: config.SMTP_TIMEOUT_MS,
  } as never);
  return {
    enabled: true,
    async send(mail, what, logFields) {
      try {
        await transport.sendMail({ from: config.MAIL_FROM, ...mail });
        return true;
      } catch (err) {
        log.warn(
          { err: { message: (err as Error).message, code: (err as { code?: string }).code }, to: mail.to, ...logFields },
          `${what} mail not sent`,
        );
        return false;
      }
    },
    close: () => transport.close(),
  };
}

/** Where campaign mail goes: an organization's own server (host already judged by the SSRF guard) or SMTP_URL. */
export type SmtpTarget =
  | {
      /** The address to dial: the IP the guard judged, so the address connected to is the address checked. */
      host: string;
      port: number;
      /** TLS from the first byte (465); otherwise STARTTLS when the server offers it. */
      secure: boolean;
      /** The name the server's certificate must carry (the host name as the organization wrote it). */
      servername?: string;
      user?: string;
      password?: string;
    }
  | { url: string };

export interface OutgoingMail extends Mail {
  from: string | { name: string; address: string };
  headers?: Record<string, string>;
}

/** What an SMTP failure says, without anything of the credentials: nodemailer's code and the server's reply code. */
export interface SmtpFailure {
  /** EAUTH, EENVELOPE, ECONNECTION, ETIMEDOUT, ESOCKET, EMESSAGE, EPROTOCOL, … */
  code?: string;
  /** The server's reply code (421, 450, 550, 535, …) when it answered. */
  responseCode?: number;
  message: string;
}

export function smtpFailureOf(err: unknown): SmtpFailure {
  const e = err as { code?: unknown; responseCode?: unknown; message?: unknown };
  return {
    code: typeof e?.code === 'string' ? e.code : undefined,
    responseCode: typeof e?.responseCode === 'number' ? e.responseCode : undefined,
    message: typeof e?.message === 'string' ? e.message : String(err),
  };
}

export interface SmtpClient {
  /** Resolves when the server accepted the message; rejects with nodemailer's error (see smtpFailureOf). */
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/**
 * A transport that reports failures instead of swallowing them, for mail whose outcome is recorded (campaign
 * recipients, a settings test). One connection per message (no pool): the caller paces its sends.
 */
export function createSmtpClient(target: SmtpTarget, timeoutMs: number): SmtpClient {
  const timeouts = { connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs };
  const transport =
    'url' in target
      ? nodemailer.createTransport(target.url, timeouts as never)
      : nodemailer.createTransport({
          host: target.host,
          port: target.port,
          secure: target.secure,
          servername: target.servername,
          auth: target.user ? { user: target.user, pass: target.password ?? '' } : undefined,
          ...timeouts,
        } as never);
  return {
    async send(mail) {
      await transport.sendMail(mail);
    },
    close: () => transport.close(),
  };
}
