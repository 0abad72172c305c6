import { createLogger } from '@crm/logger';
import { InboxAudience, OrgAudience } from './inbox-audience';

const ORG = '00000000-0000-4000-8000-000000000001';
const ACCOUNT = '00000000-0000-4000-8000-0000000000a1';
const log = createLogger('test', 'silent');
const STAFF = [`org:${ORG}:role:team_lead`, `org:${ORG}:role:admin`, `org:${ORG}:role:owner`];

function audience(answer: () => Promise<OrgAudience>) {
  const calls: string[] = [];
  const a = new InboxAudience(
    async (orgId) => {
      calls.push(orgId);
      return answer();
    },
    60_000,
    log,
  );
  return { a, calls };
}

describe('InboxAudience: who hears a conversation event', () => {
  it('"all": the whole org room, messaging asked once per org', async () => {
    const { a, calls } = audience(async () => ({ agentVisibility: 'all', accounts: [] }));
    expect(await a.roomsFor(ORG, { assigneeId: 'u1', chatnetAccountId: ACCOUNT })).toEqual([`org:${ORG}`]);
    expect(await a.roomsFor(ORG, { assigneeId: null, chatnetAccountId: ACCOUNT })).toEqual([`org:${ORG}`]);
    expect(calls).toEqual([ORG]);
  });

  it('"assigned": team leads and above plus the assignee, or the account\'s listed users when unassigned', async () => {
    const { a } = audience(async () => ({ agentVisibility: 'assigned', accounts: [{ chatnetAccountId: ACCOUNT, userIds: ['u1', 'u2'] }] }));
    expect(await a.roomsFor(ORG, { assigneeId: 'u9', chatnetAccountId: ACCOUNT })).toEqual([...STAFF, 'user:u9']);
    expect(await a.roomsFor(ORG, { assigneeId: null, chatnetAccountId: ACCOUNT })).toEqual([...STAFF, 'user:u1', 'user:u2']);
    expect(await a.roomsFor(ORG, { assigneeId: null, chatnetAccountId: 'other' })).toEqual(STAFF);
  });

  it('invalidate: the next event reads the setting again', async () => {
    let value = 'all';
    const { a, calls } = audience(async () => ({ agentVisibility: value, accounts: [] }));
    expect(await a.roomsFor(ORG, {})).toEqual([`org:${ORG}`]);
    value = 'assigned';
    expect(await a.roomsFor(ORG, {})).toEqual([`org:${ORG}`]);
    a.invalidate(ORG);
    expect(await a.roomsFor(ORG, {})).toEqual(STAFF);
    expect(calls).toHaveLength(2);
  });

  it('messaging unreachable: fails closed (staff and assignee only) and does not ask again for every event', async () => {
    const { a, calls } = audience(async () => {
      throw new Error('unavailable');
    });
    expect(await a.roomsFor(ORG, { assigneeId: 'u1' })).toEqual([...STAFF, 'user:u1']);
    expect(await a.roomsFor(ORG, { assigneeId: null, chatnetAccountId: ACCOUNT })).toEqual(STAFF);
    expect(calls).toHaveLength(1);
  });
});
