import { AppError } from '@crm/grpc-kit';

/** How long an invitation link works. */
export const INVITATION_DAYS = 7;

export function invitationExpiresAt(now: number): Date {
  return new Date(now + INVITATION_DAYS * 86_400_000);
}

/** The link mailed and shown to the admin: the accept page of the public URL, the token in its query. */
export function invitationUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/$/, '')}/accept-invitation?token=${token}`;
}

/** An invitation is accepted once, until it expires; at the instant of expiry it still works. */
export function isAcceptable<T extends { used_at: Date | null; expires_at: Date }>(invitation: T | undefined, now: number): invitation is T {
  return invitation !== undefined && !invitation.used_at && invitation.expires_at.getTime() >= now;
}

/** One answer for an unknown, spent or expired invitation and for one whose user is gone or inactive. */
export const invitationInvalid = () => new AppError('not_found', 'Invitation not found, already used or expired', { code: 'invitation_invalid' });
