import { isUuid } from '@crm/validation';
import type { Deps } from '../deps';
import type { CampaignRow } from './campaigns.repo';
import * as recipients from './recipients.repo';
import type { RecipientRow } from './recipients.repo';

/** Where a recipient's message goes: the contact's latest conversation (its account, when it names a valid one). */
export interface Target {
  conversationId: string;
  accountId: string | null;
}

/**
 * What a campaign turn learnt, for a whole batch at once, about which recipients have no conversation yet. The answer
 * stands in for the per-recipient lookup only while it is at most `freshMs` old: a lead who writes in meanwhile would
 * otherwise be sent into a conversation started anew instead of the one they just opened.
 */
export class NoConversationYet {
  private readonly since = new Map<string, number>();

  constructor(private readonly freshMs: number) {}

  remember(contactIds: Iterable<string>, at = Date.now()): void {
    for (const id of contactIds) this.since.set(id, at);
  }

  /** True when messaging said, recently enough, that this contact has no conversation. Asked once per recipient. */
  take(contactId: string, now = Date.now()): boolean {
    const at = this.since.get(contactId);
    this.since.delete(contactId);
    return at !== undefined && now - at <= this.freshMs;
  }
}

/** A conversation as messaging names it, made a Target: an account id that is not a UUID is none. */
export const targetOf = (c: { conversationId: string; chatnetAccountId: string }): Target => ({
  conversationId: c.conversationId,
  accountId: c.chatnetAccountId && isUuid(c.chatnetAccountId) ? c.chatnetAccountId : null,
});

/**
 * The latest conversation of every recipient of `batch` without a target, in one call to messaging instead of one per
 * recipient; those found get their target fixed now, in one statement (before their first attempt, as a recipient's
 * own lookup does), and the rest are remembered in `none`. Messaging unreachable, or older than this call: nothing is
 * learnt, and each recipient asks on its own when its turn comes.
 */
export async function lookUpBatch(deps: Deps, c: CampaignRow, batch: RecipientRow[], none: NoConversationYet): Promise<void> {
  const ask = batch.filter((r) => !r.conversation_id);
  if (ask.length === 0) return;
  const at = Date.now();
  let found: Map<string, Target>;
  try {
    const res = await deps.remote
      .messaging()
      .LatestConversationsForContacts({ contactIds: ask.map((r) => r.contact_id) }, await deps.remote.actingFor(c.org_id, `campaign:${c.id}`));
    found = new Map((res.conversations ?? []).filter((x) => isUuid(x.conversationId)).map((x) => [x.contactId.toLowerCase(), targetOf(x)] as const));
  } catch (err) {
    deps.log.debug({ err, campaignId: c.id }, 'campaign sender: batch conversation lookup failed; recipients look up their own');
    return;
  }
  const targets = ask.flatMap((r) => {
    const t = found.get(r.contact_id);
    return t ? [{ contactId: r.contact_id, ...t }] : [];
  });
  await recipients.setTargets(deps.pool, c.id, targets);
  for (const r of ask) {
    const t = found.get(r.contact_id);
    if (!t) continue;
    r.conversation_id = t.conversationId;
    r.chatnet_account_id = t.accountId;
  }
  none.remember(
    ask.filter((r) => !found.has(r.contact_id)).map((r) => r.contact_id),
    at,
  );
}
