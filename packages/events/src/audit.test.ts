import { auditActor, auditEvent } from './audit';

describe('audit entries', () => {
  it('the actor is the signed-in user, else an API key for a user-less gateway call, else the system', () => {
    expect(auditActor({ orgId: 'o', userId: 'u', caller: 'gateway' })).toEqual({ actorId: 'u', actorType: 'user' });
    expect(auditActor({ orgId: 'o', userId: '', caller: 'gateway' })).toEqual({ actorId: null, actorType: 'api_key' });
    expect(auditActor({ orgId: 'o', userId: '', caller: 'automation' })).toEqual({ actorId: null, actorType: 'system' });
  });

  it('builds one audit.recorded shape with the request id and client address of the call', () => {
    const e = auditEvent(
      { orgId: 'o', userId: 'u', requestId: 'r1', clientIp: '203.0.113.9', caller: 'gateway' },
      { action: 'contact.deleted', resourceType: 'contact', resourceId: 'c1' },
    );
    expect(e).toEqual({
      type: 'audit.recorded',
      orgId: 'o',
      data: {
        actorId: 'u',
        actorType: 'user',
        action: 'contact.deleted',
        resourceType: 'contact',
        resourceId: 'c1',
        details: {},
        ip: '203.0.113.9',
        requestId: 'r1',
      },
    });
  });

  it("continues the call's trace: the entry carries ctx.traceparent, explicitly (no active context needed)", () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(auditEvent({ orgId: 'o', userId: 'u', traceparent }, { action: 'view.created', resourceType: 'view' }).traceparent).toBe(traceparent);
    expect(auditEvent({ orgId: 'o', userId: 'u' }, { action: 'view.created', resourceType: 'view' }).traceparent).toBeUndefined();
  });
});
