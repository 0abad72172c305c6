import { createLogger } from '@crm/logger';
import type { InternalPrincipal } from '@crm/grpc-kit';
import { GrantRenewals, type GrantHolder } from './grant-renewals';

const DAY = 24 * 3600_000;
const flush = () => new Promise((r) => setImmediate(r));

/** A holder that records each grant it is handed, and fails while `failing` is set. */
function holder(service: InternalPrincipal) {
  const got: string[] = [];
  const h = {
    failing: false,
    got,
    service,
    renew: async (grant: string) => {
      got.push(grant);
      if (h.failing) throw new Error(`${service} is down`);
    },
  };
  return h satisfies GrantHolder & { failing: boolean };
}

describe('GrantRenewals', () => {
  const auth = { signGrant: (org: string, svc: InternalPrincipal) => `${org}/${svc}` };
  const log = createLogger('test', 'silent');

  it("hands every holder the org's grant on its first request, then not again for a day", async () => {
    const automation = holder('automation');
    const crm = holder('crm');
    const renewals = new GrantRenewals(auth, [automation, crm], log);
    renewals.touched('org-a', 'u1', 'owner', 0);
    renewals.touched('org-a', 'u2', 'agent', 1_000);
    renewals.touched('org-a', 'u1', 'owner', DAY - 1);
    await flush();
    expect(automation.got).toEqual(['org-a/automation']);
    expect(crm.got).toEqual(['org-a/crm']);

    renewals.touched('org-b', 'u3', 'owner', 2_000);
    renewals.touched('org-a', 'u1', 'owner', DAY);
    await flush();
    expect(automation.got).toEqual(['org-a/automation', 'org-b/automation', 'org-a/automation']);
    expect(crm.got).toEqual(['org-a/crm', 'org-b/crm', 'org-a/crm']);
  });

  it('after a failed renewal tries again with a request a minute later, not before', async () => {
    const automation = holder('automation');
    const messaging = holder('messaging');
    messaging.failing = true;
    const renewals = new GrantRenewals(auth, [automation, messaging], log);
    renewals.touched('org-a', 'u1', 'owner');
    await flush();
    renewals.touched('org-a', 'u1', 'owner');
    await flush();
    expect(messaging.got).toHaveLength(1);

    messaging.failing = false;
    renewals.touched('org-a', 'u1', 'owner', Date.now() + 61_000);
    await flush();
    expect(messaging.got).toHaveLength(2);
    // The one that had succeeded is handed a fresh grant too: harmless, it keeps the longest-lived.
    expect(automation.got).toHaveLength(2);
    // Succeeded this time: the next is due a day later.
    renewals.touched('org-a', 'u1', 'owner', Date.now() + 3 * 60_000);
    await flush();
    expect(messaging.got).toHaveLength(2);
  });
});
