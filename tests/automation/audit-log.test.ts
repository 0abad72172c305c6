import { auditEntries, auditEntryFor } from '../support/audit';
import { client, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';

// Deleting an automation rule reaches identity's audit log through automation's outbox and the bus.
describe('audit log: automation rules', () => {
  let stack: Stack;
  let api: Client;
  let acme: Awaited<ReturnType<typeof newOrg>>;
  let globex: Awaited<ReturnType<typeof newOrg>>;

  beforeAll(async () => {
    stack = await startStack({ services: ['automation'] });
    api = client(stack.url);
    acme = await newOrg(api, 'Acme');
    globex = await newOrg(api, 'Globex');
  });
  afterAll(() => stack?.stop());

  it('automation_rule.deleted names the actor and the rule; a refused delete records nothing', async () => {
    const rule = await acme.owner.post('/api/v1/automation/rules', {
      name: 'Greet new contacts',
      trigger: { type: 'contact_created' },
      actions: [{ type: 'send_notification', message: '{{name}} joined', notificationType: 'new_contact' }],
    });
    expect(rule.status).toBe(201);
    const id = rule.body.id;
    expect((await globex.owner.del(`/api/v1/automation/rules/${id}`)).status).toBe(404);
    expect((await acme.owner.del(`/api/v1/automation/rules/${id}`)).status).toBe(204);

    const entry = await auditEntryFor(acme.owner, 'automation_rule.deleted', id);
    expect(entry).toEqual(
      expect.objectContaining({
        actorId: acme.user.id,
        actorType: 'user',
        resourceType: 'automation_rule',
        details: { name: 'Greet new contacts' },
        requestId: expect.any(String),
      }),
    );
    expect((await acme.owner.del(`/api/v1/automation/rules/${id}`)).status).toBe(404);
    expect(await auditEntries(acme.owner, 'automation_rule.deleted')).toHaveLength(1);
    expect(await auditEntries(globex.owner, 'automation_rule.deleted')).toEqual([]);
  });
});
