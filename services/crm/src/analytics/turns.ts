/**
 * How a conversation's events become response and resolution times. Pure: the consumer feeds it items in
 * order and stores what it returns.
 *
 * - An **episode** runs from the first inbound message after the conversation started or was archived to the
 *   next archive: it is what a support ticket would be.
 * - A **turn** starts at the first inbound message nobody has answered yet and ends at the next reply by a
 *   person; its response time is the gap. Further inbound messages before the reply belong to the same turn;
 *   a reply with nothing awaiting (an agent writing first, or a second reply) ends no turn.
 * - The **first response** of an episode is its first turn. Its **resolution** time runs from the episode's
 *   first inbound message to the archive. An archive with a turn still awaiting drops that turn (the
 *   conversation was settled without a reply).
 */

export const INBOUND = 1;
export const REPLY = 2;
export const ARCHIVED = 3;
export type ItemKind = typeof INBOUND | typeof REPLY | typeof ARCHIVED;

export interface Item {
  id: string;
  /** Milliseconds since the epoch. */
  at: number;
  kind: ItemKind;
  /** The replying user (REPLY only). */
  userId: string | null;
}

export interface ConversationState {
  episodeStart: number | null;
  turnStart: number | null;
  episodeReplied: boolean;
}

export const EMPTY_STATE: ConversationState = { episodeStart: null, turnStart: null, episodeReplied: false };

export interface Duration {
  kind: 'response' | 'resolution';
  /** A response that is its episode's first. */
  first: boolean;
  startedAt: number;
  endedAt: number;
  userId: string | null;
}

/**
 * Items order by time; at the same millisecond an inbound message comes before a reply and both before an
 * archive (the likelier causal order), then by id so every replay agrees.
 */
export function compareItems(a: Pick<Item, 'at' | 'kind' | 'id'>, b: Pick<Item, 'at' | 'kind' | 'id'>): number {
  return a.at - b.at || a.kind - b.kind || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Apply `items` (already in order) to `state`: the state after them and the durations they complete. */
export function replay(state: ConversationState, items: readonly Item[]): { state: ConversationState; durations: Duration[] } {
  let { episodeStart, turnStart, episodeReplied } = state;
  const durations: Duration[] = [];
  for (const item of items) {
    if (item.kind === INBOUND) {
      episodeStart ??= item.at;
      turnStart ??= item.at;
    } else if (item.kind === REPLY) {
      if (turnStart !== null) {
        durations.push({ kind: 'response', first: !episodeReplied, startedAt: turnStart, endedAt: item.at, userId: item.userId });
        episodeReplied = true;
        turnStart = null;
      }
    } else if (episodeStart !== null) {
      durations.push({ kind: 'resolution', first: false, startedAt: episodeStart, endedAt: item.at, userId: null });
      episodeStart = null;
      turnStart = null;
      episodeReplied = false;
    }
  }
  return { state: { episodeStart, turnStart, episodeReplied }, durations };
}
