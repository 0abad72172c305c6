import type { Logger } from '@crm/logger';

/**
 * Who may receive an org's conversation events on their sockets. Under the inbox setting `assigned` an agent
 * sees only the conversations assigned to them and the unassigned ones of the accounts that list them
 * (messaging's rule, services/messaging/src/visibility/visibility.repo.ts); team leads and above see everything.
 *
 * The gateway asks messaging nothing per event: each message event carries `assigneeId` and `chatnetAccountId`,
 * and the org's setting and account user lists are cached here, fetched once per org (GetInboxAudience) and
 * dropped when `inbox_settings.updated` or `chatnet_account.assignment_updated` arrives on this instance's own
 * queue, or after `ttlMs` (the backstop for an invalidation missed while disconnected).
 */
export interface OrgAudience {
  agentVisibility: string;
  accounts: { chatnetAccountId: string; userIds: string[] }[];
}

interface Entry {
  agentVisibility: string;
  accountUsers: Map<string, string[]>;
  expiresAt: number;
}

/** Roles that always see every conversation of their org. */
const SEES_ALL = ['team_lead', 'admin', 'owner'];
/** Orgs kept at most; the oldest is dropped first. */
const MAX_ORGS = 10_000;
/** After a failed fetch, events are routed closed this long before messaging is asked again (no deadline wait per event). */
const RETRY_AFTER_FAILURE_MS = 5000;

export class InboxAudience {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every invalidation, so a fetch that started before it does not store what it read. */
  private readonly generation = new Map<string, number>();

  constructor(
    private readonly fetch: (orgId: string) => Promise<OrgAudience>,
    private readonly ttlMs: number,
    private readonly log: Logger,
  ) {}

  /** The rooms a conversation event of `orgId` goes to. */
  async roomsFor(orgId: string, event: { assigneeId?: string | null; chatnetAccountId?: string }): Promise<string[]> {
    const org = `org:${orgId}`;
    const entry = await this.entry(orgId);
    if (entry.agentVisibility === 'all') return [org];
    const rooms = SEES_ALL.map((r) => `${org}:role:${r}`);
    if (event.assigneeId) return [...rooms, `user:${event.assigneeId}`];
    // An unknown audience (messaging unreachable) has no account lists: fail closed, the listed agents miss this event.
    const listed = event.chatnetAccountId ? (entry.accountUsers.get(event.chatnetAccountId) ?? []) : [];
    return [...rooms, ...listed.map((u) => `user:${u}`)];
  }

  /** A setting or an account's user list changed: read it again on the next event. */
  invalidate(orgId: string): void {
    this.entries.delete(orgId);
    this.generation.set(orgId, (this.generation.get(orgId) ?? 0) + 1);
    if (this.generation.size > MAX_ORGS) this.generation.delete(this.generation.keys().next().value!);
  }

  private async entry(orgId: string): Promise<Entry> {
    const cached = this.entries.get(orgId);
    if (cached && cached.expiresAt > Date.now()) return cached;
    const gen = this.generation.get(orgId) ?? 0;
    let entry: Entry;
    try {
      const fetched = await this.fetch(orgId);
      entry = {
        agentVisibility: fetched.agentVisibility || 'all',
        accountUsers: new Map(fetched.accounts.map((a) => [a.chatnetAccountId, a.userIds])),
        expiresAt: Date.now() + this.ttlMs,
      };
    } catch (err) {
      this.log.warn({ err, orgId }, 'inbox audience unavailable; conversation events go to team leads and above and the assignee only');
      entry = { agentVisibility: 'unknown', accountUsers: new Map(), expiresAt: Date.now() + Math.min(this.ttlMs, RETRY_AFTER_FAILURE_MS) };
    }
    if ((this.generation.get(orgId) ?? 0) === gen) {
      this.entries.delete(orgId);
      this.entries.set(orgId, entry);
      if (this.entries.size > MAX_ORGS) this.entries.delete(this.entries.keys().next().value!);
    }
    return entry;
  }
}
