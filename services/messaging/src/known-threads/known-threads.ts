/**
 * Threads this instance has seen with a conversation. No code deletes a conversation, so a thread found with one
 * keeps it, and the inbound batch need not ask the database again which of its threads are new before it asks crm for
 * their contacts (that check read the thread index for every message: 0.10 ms of PostgreSQL per message at 200 msg/s,
 * bench/RESULTS.md realtime). Bounded: the first remembered are the first forgotten, and asked about again. A
 * conversation removed by hand anyway would have its thread taken for known: its next message opens a conversation
 * without asking crm first, and the contact is linked after (messaging.contact_link), as when crm is unreachable.
 */
export class KnownThreads {
  private readonly keys = new Set<string>();

  constructor(private readonly maxEntries = 50_000) {}

  has(thread: ThreadKeyParts): boolean {
    return this.keys.has(keyOf(thread));
  }

  add(thread: ThreadKeyParts): void {
    const key = keyOf(thread);
    if (this.keys.has(key)) return;
    this.keys.add(key);
    if (this.keys.size > this.maxEntries) this.keys.delete(this.keys.values().next().value!);
  }
}

interface ThreadKeyParts {
  orgId: string;
  accountId: string;
  threadType: string;
  threadId: string;
}

const keyOf = (t: ThreadKeyParts) => `${t.orgId}\n${t.accountId}\n${t.threadType}\n${t.threadId}`;
