import { NotifyListener, type Queryable } from '@crm/db';
import type { Logger } from '@crm/logger';
import { AUTO_REPLY_SETTINGS_CHANNEL, enabledAccounts } from './settings.repo';

/**
 * The chat-network accounts whose customers get AI answers, of every org, in memory (issue #32 item 5). The inbound
 * batch looks each stored message up here: `message.received` is the hottest event (issue #28), so a message on any
 * other account (nearly all of them) costs a Set lookup and nothing else — no query, no queue, no call to ai. The set
 * is loaded at start and again whenever a copy of an org's settings is written (migration 033's NOTIFY, from whichever
 * instance applied `ai.auto_reply_changed`), and when the LISTEN connection comes back (changes meanwhile were not
 * announced). Reloading reads every enabled org's row: a few rows, and settings change rarely.
 */
export class AutoReplyAccounts {
  private keys = new Set<string>();
  private readonly listener?: NotifyListener;
  private reloading?: Promise<void>;
  private again = false;

  constructor(private readonly o: { pool: Queryable; databaseUrl: string; log: Logger } | undefined) {
    if (!o) return;
    this.listener = new NotifyListener({
      name: 'AI auto-reply accounts',
      databaseUrl: o.databaseUrl,
      channel: AUTO_REPLY_SETTINGS_CHANNEL,
      log: o.log,
      onNotification: () => void this.reload(),
      onConnected: () => void this.reload(),
    });
  }

  async start(): Promise<void> {
    await this.reload();
    await this.listener?.start();
  }

  stop(): Promise<void> {
    return this.listener?.stop() ?? Promise.resolve();
  }

  has(orgId: string, accountId: string): boolean {
    return this.keys.size > 0 && this.keys.has(`${orgId}|${accountId.toLowerCase()}`);
  }

  /** One load at a time; a change announced during one loads again after it. */
  reload(): Promise<void> {
    if (this.reloading) {
      this.again = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      do {
        this.again = false;
        try {
          const rows = await enabledAccounts(this.o!.pool);
          this.keys = new Set(rows.flatMap((r) => r.account_ids.map((a) => `${r.org_id}|${a.toLowerCase()}`)));
        } catch (err) {
          this.o!.log.warn({ err }, 'could not load the AI auto-reply accounts; keeping the previous set');
        }
      } while (this.again);
    })().finally(() => (this.reloading = undefined));
    return this.reloading;
  }
}
