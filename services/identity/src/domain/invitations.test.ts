import { AppError } from '@crm/grpc-kit';
import { INVITATION_DAYS, invitationExpiresAt, invitationInvalid, invitationUrl, isAcceptable } from './invitations';

// An invited user (POST /users without a password) gets a single-use link that works for a week.
describe('invitations', () => {
  const now = Date.parse('2026-03-01T12:00:00.000Z');

  it('a link works for seven days from its creation', () => {
    expect(INVITATION_DAYS).toBe(7);
    expect(invitationExpiresAt(now).toISOString()).toBe('2026-03-08T12:00:00.000Z');
  });

  describe('isAcceptable', () => {
    const invitation = (over: { used_at?: Date | null; expires_at?: Date } = {}) => ({
      used_at: null,
      expires_at: invitationExpiresAt(now),
      ...over,
    });
    const expiry = invitationExpiresAt(now).getTime();

    it('an unused invitation is accepted until its expiry, the instant itself included', () => {
      expect(isAcceptable(invitation(), now)).toBe(true);
      expect(isAcceptable(invitation(), expiry - 1)).toBe(true);
      expect(isAcceptable(invitation(), expiry)).toBe(true);
    });

    it('a millisecond after its expiry it is refused', () => {
      expect(isAcceptable(invitation(), expiry + 1)).toBe(false);
    });

    it('a used invitation is refused, however much time it has left', () => {
      expect(isAcceptable(invitation({ used_at: new Date(now) }), now)).toBe(false);
    });

    it('a token that matches no invitation is refused', () => {
      expect(isAcceptable(undefined, now)).toBe(false);
    });
  });

  it('every refusal is the same 404, so a caller cannot tell unknown from spent or expired', () => {
    const err = invitationInvalid();
    expect(err).toBeInstanceOf(AppError);
    expect([err.kind, err.code]).toEqual(['not_found', 'invitation_invalid']);
  });

  it('the link is the public URL’s accept page with the token in its query, whether or not the URL ends in /', () => {
    expect(invitationUrl('https://crm.example.com', 'tok_1')).toBe('https://crm.example.com/accept-invitation?token=tok_1');
    expect(invitationUrl('https://crm.example.com/', 'tok_1')).toBe('https://crm.example.com/accept-invitation?token=tok_1');
    expect(invitationUrl('https://example.com/crm/', 'tok_1')).toBe('https://example.com/crm/accept-invitation?token=tok_1');
  });
});
