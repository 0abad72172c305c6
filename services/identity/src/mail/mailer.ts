import { createMailSender, escapeHtml, SmtpConfig } from '@crm/mail';
import type { Logger } from '@crm/logger';

export interface Invitation {
  to: string;
  fullName: string;
  orgName: string;
  inviterName?: string;
  url: string;
  expiresAt: Date;
  /** On the line logged when the send fails: the trace of the call that invites (traceFields(ctx)). */
  logFields?: Record<string, unknown>;
}

export interface Mailer {
  /** true when the mail server accepted the message; false when no server is configured or it failed. */
  sendInvitation(inv: Invitation): Promise<boolean>;
  close(): void;
}

/**
 * Invitation mail through the SMTP server in SMTP_URL (@crm/mail).
 * A failed send never fails the user creation: the admin still gets the link to share, and the response
 * says invitationSent false. Names come from users, so they are escaped in the HTML part.
 */
export function createMailer(config: SmtpConfig, log: Logger): Mailer {
  const sender = createMailSender(config, log);
  return {
    sendInvitation(inv) {
      const by = inv.inviterName ? `${inv.inviterName} invited you` : 'You are invited';
      const until = inv.expiresAt.toISOString().slice(0, 10);
      return sender.send(
        {
          to: inv.to,
          subject: `Join ${inv.orgName}`,
          text: `Hello ${inv.fullName},\n\n${by} to join ${inv.orgName}.\nSet your password here (the link works once, until ${until}):\n${inv.url}\n`,
          html:
            `<p>Hello ${escapeHtml(inv.fullName)},</p><p>${escapeHtml(by)} to join <b>${escapeHtml(inv.orgName)}</b>.</p>` +
            `<p><a href="${escapeHtml(inv.url)}">Set your password</a> (the link works once, until ${until}).</p>`,
        },
        'invitation (the admin can share the link)',
        inv.logFields,
      );
    },
    close: () => sender.close(),
  };
}
