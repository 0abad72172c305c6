/**
 * crm contact ids of group senders, per org and network uid, remembered for a while by this instance: a busy group
 * brings many messages a minute from the same few people, and each would otherwise cost crm an upsert (a
 * transaction with a row lock). A contact deleted in crm is forgotten here when this instance hears of it
 * (contact.deleted); another instance may still link it for at most `ttlMs`, and contact.deleted unlinks such
 * messages when it is applied.
 */
export class SenderContacts {
  private readonly entries = new Map<string, { contactId: string; expiresAt: number }>();

  constructor(
    private readonly ttlMs = 10 * 60_000,
    private readonly maxEntries = 20_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(orgId: string, chatnetUid: string): string | undefined {
    const key = `${orgId}\n${chatnetUid}`;
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expiresAt > this.now()) return hit.contactId;
    this.entries.delete(key);
    return undefined;
  }

  set(orgId: string, chatnetUid: string, contactId: string): void {
    const key = `${orgId}\n${chatnetUid}`;
    this.entries.delete(key);
    this.entries.set(key, { contactId, expiresAt: this.now() + this.ttlMs });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  /** The contact is gone from crm: the next message of its uid asks crm again (which creates a new one). */
  forgetContact(orgId: string, contactId: string): void {
    for (const [key, e] of this.entries) if (e.contactId === contactId && key.startsWith(`${orgId}\n`)) this.entries.delete(key);
  }
}
