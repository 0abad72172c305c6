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
  /** true when the mail server accepted the message; false when none is configured or it failed (logged). */
  send(mail: Mail, what: string): Promise<boolean>;
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
    async send(mail, what) {
      try {
        await transport.sendMail({ from: config.MAIL_FROM, ...mail });
        return true;
      } catch (err) {
        log.warn({ err: { message: (err as Error).message, code: (err as { code?: string }).code }, to: mail.to }, `${what} mail not sent`);
        return false;
      }
    },
    close: () => transport.close(),
  };
}
