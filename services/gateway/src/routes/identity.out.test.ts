import { apiKeyOut, auditEntryOut, createdUserOut, teamBriefOut, teamOut, userOut } from './identity.out';
import { AT, ID, OTHER_ID } from '../test-support/crm-fixtures';
import { auditEntry, createdUser, team, user } from '../test-support/identity-fixtures';

describe('identity mappers', () => {
  it('userOut: no department, phone, avatar or sign-in is null; set values pass through', () => {
    expect(userOut(user())).toEqual({
      id: ID,
      email: 'ann@example.com',
      fullName: 'Ann',
      role: 'agent',
      orgId: OTHER_ID,
      department: null,
      phone: null,
      avatar: null,
      status: 'active',
      createdAt: AT,
      lastLogin: null,
      availability: 'offline',
    });
    const set = userOut(user({ department: 'Sales', phone: '+84912345678', avatar: 'https://cdn.example.com/a.png', lastLogin: AT }));
    expect(set).toMatchObject({ department: 'Sales', phone: '+84912345678', avatar: 'https://cdn.example.com/a.png', lastLogin: AT });
  });

  it('userOut never shows a preference identity tells only other services (notifyByEmail)', () => {
    expect(userOut(user({ notifyByEmail: true }))).not.toHaveProperty('notifyByEmail');
  });

  it('createdUserOut: lastLogin and inviteUrl null when unset', () => {
    expect(createdUserOut(createdUser())).toEqual({
      id: ID,
      email: 'ann@example.com',
      fullName: 'Ann',
      role: 'agent',
      createdAt: AT,
      invitationSent: false,
      inviteUrl: null,
      lastLogin: null,
    });
    expect(createdUserOut(createdUser({ inviteUrl: 'https://app.example.com/invite/x' })).inviteUrl).toBe('https://app.example.com/invite/x');
  });

  it('teamOut: no description is null; the list leaves member ids out', () => {
    expect(teamOut(team())).toEqual({ id: ID, name: 'Sales', description: null, memberCount: 1, memberIds: [OTHER_ID], createdAt: AT });
    expect(teamOut(team({ description: 'the closers' })).description).toBe('the closers');
    expect(teamBriefOut(team())).toEqual({ id: ID, name: 'Sales', description: null, memberCount: 1, createdAt: AT });
  });

  it('apiKeyOut: createdAt null without a key', () => {
    expect(apiKeyOut({ hasKey: false, keyMask: '' })).toEqual({ hasKey: false, keyMask: '', createdAt: null });
    expect(apiKeyOut({ hasKey: true, keyMask: 'crm_…abcd', createdAt: AT })).toEqual({ hasKey: true, keyMask: 'crm_…abcd', createdAt: AT });
  });

  it('auditEntryOut: absent actor, resource, ip and request id are null; details parsed ({} when none)', () => {
    expect(auditEntryOut(auditEntry())).toEqual({
      id: ID,
      actorId: null,
      actorType: 'system',
      action: 'user.created',
      resourceType: 'user',
      resourceId: null,
      details: {},
      ip: null,
      requestId: null,
      createdAt: AT,
    });
    const full = auditEntryOut(auditEntry({ actorId: OTHER_ID, resourceId: ID, detailsJson: '{"role":"admin"}', ip: '10.0.0.1', requestId: 'r1' }));
    expect(full).toMatchObject({ actorId: OTHER_ID, resourceId: ID, details: { role: 'admin' }, ip: '10.0.0.1', requestId: 'r1' });
  });
});
