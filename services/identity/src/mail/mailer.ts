import nodemailer from 'nodemailer';
import type { Logger } from '@crm/logger';

export interface Invitation {
  to: string;
  fullName: string;
  orgName: string;
  inviterName?: string;
  url: string;
  expiresAt: Date;
}

export interface Mailer {
  /** true when the mail server accepted the message; false when no server is configured or it failed. */
  sendInvitation(inv: Invitation): Promise<boolean>;
  close(): void;
}

export interface MailerConfig {
  SMTP_URL?: string;
  MAIL_FROM: string;
  SMTP_TIMEOUT_MS: number;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Invitation mail through the SMTP server in SMTP_URL (smtp:// with STARTTLS when offered, or smtps://).
 * A failed send never fails the user creation: the admin still gets the link to share, and the response
 * says invitationSent false. Names come from users, so they are escaped in the HTML part.
 */
export function createMailer(config: MailerConfig, log: Logger): Mailer {
  if (!config.SMTP_URL) return { sendInvitation: async () => false, close: () => undefined };
  const transport = nodemailer.createTransport(config.SMTP_URL, {
    connectionTimeout: config.SMTP_TIMEOUT_MS,
    greetingTimeout: config.SMTP_TIMEOUT_MS,
    socketTimeout: config.SMTP_TIMEOUT_MS,
  } as never);
  return {
    async sendInvitation(inv) {
      const by = inv.inviterName ? `${inv.inviterName} invited you` : 'You are invited';
      const until = inv.expiresAt.toISOString().slice(0, 10);
      try {
        await transport.sendMail({
          from: config.MAIL_FROM,
          to: inv.to,
          subject: `Join ${inv.orgName}`,
          text: `Hello ${inv.fullName},\n\n${by} to join ${inv.orgName}.\nSet your password here (the link works once, until ${until}):\n${inv.url}\n`,
          html:
            `<p>Hello ${escapeHtml(inv.fullName)},</p><p>${escapeHtml(by)} to join <b>${escapeHtml(inv.orgName)}</b>.</p>` +
            `<p><a href="${escapeHtml(inv.url)}">Set your password</a> (the link works once, until ${until}).</p>`,
        });
        return true;
      } catch (err) {
        log.warn({ err: { message: (err as Error).message, code: (err as { code?: string }).code }, to: inv.to }, 'invitation mail not sent; the admin can share the link');
        return false;
      }
    },
    close: () => transport.close(),
  };
}
