import type { ClientBase } from 'pg';
import { eventually } from '@crm/testing';

/**
 * Markers for absence checks about the campaign sender, read from automation's campaigns table. The sender holds a
 * campaign under a lease for one turn (its snapshot, then its sends) and lets it go once every send of the turn is
 * recorded; each claim takes the campaigns then due, the one due first first. So a released lease says a turn is over,
 * and a campaign activated later that completes says the sender has claimed since, and would have taken any campaign
 * due before it.
 */
export function campaignLeases(db: ClientBase) {
  const one = async (sql: string, values: unknown[]) => (await db.query(sql, values)).rowCount === 1;

  /** Resolves once no sender holds the campaign: any turn that had it, and every send of that turn, is over. */
  const released = (id: string) => eventually(() => one('SELECT 1 FROM campaigns WHERE id = $1 AND lease_owner IS NULL', [id]), 15_000);

  /**
   * Resolves once the sender has claimed after every one of `ids` was due by its pace (next_send_at) and holds none of
   * them: the marker for "the sender had its chance to send for them". `later` activates a campaign that can complete
   * at once and answers its id; its completion is the later claim.
   */
  const passedOver = async (ids: string[], later: () => Promise<string>) => {
    for (const id of ids) await eventually(() => one('SELECT 1 FROM campaigns WHERE id = $1 AND next_send_at <= now()', [id]), 15_000);
    const marker = await later();
    await eventually(() => one(`SELECT 1 FROM campaigns WHERE id = $1 AND status = 'completed'`, [marker]), 15_000);
    for (const id of ids) await released(id);
  };

  return { released, passedOver };
}
