import { BOUNDS, bucketOf } from './buckets';
import { splitPeriod } from './period';
import { ARCHIVED, compareItems, EMPTY_STATE, INBOUND, Item, REPLY, replay } from './turns';

const T0 = Date.UTC(2024, 4, 1, 9, 0, 0);
const min = (m: number) => T0 + m * 60_000;
let n = 0;
const item = (kind: Item['kind'], at: number, userId: string | null = null): Item => ({
  id: `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`,
  at,
  kind,
  userId,
});

describe('replay: conversation events → response and resolution times', () => {
  it('a turn runs from the first unanswered inbound message to the next reply; the first of an episode is marked', () => {
    const items = [
      item(INBOUND, min(0)),
      item(INBOUND, min(2)),
      item(REPLY, min(5), 'u1'),
      item(REPLY, min(6), 'u1'),
      item(INBOUND, min(10)),
      item(REPLY, min(13), 'u2'),
    ];
    const { durations, state } = replay(EMPTY_STATE, items);
    expect(durations).toEqual([
      { kind: 'response', first: true, startedAt: min(0), endedAt: min(5), userId: 'u1' },
      { kind: 'response', first: false, startedAt: min(10), endedAt: min(13), userId: 'u2' },
    ]);
    expect(state).toEqual({ episodeStart: min(0), turnStart: null, episodeReplied: true });
  });

  it('an agent writing first answers nothing; an archive resolves the episode and drops an unanswered turn', () => {
    const items = [item(REPLY, min(0), 'u1'), item(INBOUND, min(1)), item(REPLY, min(4), 'u1'), item(INBOUND, min(20)), item(ARCHIVED, min(60))];
    const { durations, state } = replay(EMPTY_STATE, items);
    expect(durations).toEqual([
      { kind: 'response', first: true, startedAt: min(1), endedAt: min(4), userId: 'u1' },
      { kind: 'resolution', first: false, startedAt: min(1), endedAt: min(60), userId: null },
    ]);
    expect(state).toEqual(EMPTY_STATE);
  });

  it('after an archive a new inbound message opens a new episode with its own first response', () => {
    const items = [
      item(INBOUND, min(0)),
      item(REPLY, min(1), 'u1'),
      item(ARCHIVED, min(2)),
      item(ARCHIVED, min(3)),
      item(INBOUND, min(100)),
      item(REPLY, min(130), 'u2'),
    ];
    const { durations } = replay(EMPTY_STATE, items);
    expect(durations.map((d) => [d.kind, d.first, d.endedAt - d.startedAt])).toEqual([
      ['response', true, 60_000],
      ['resolution', false, 120_000],
      ['response', true, 30 * 60_000],
    ]);
  });

  it('replaying in steps gives what replaying at once gives', () => {
    const items = [
      item(INBOUND, min(0)),
      item(REPLY, min(1), 'u1'),
      item(INBOUND, min(3)),
      item(ARCHIVED, min(9)),
      item(INBOUND, min(12)),
      item(REPLY, min(15), 'u1'),
    ];
    let state = EMPTY_STATE;
    const stepwise = items.flatMap((i) => {
      const r = replay(state, [i]);
      state = r.state;
      return r.durations;
    });
    expect(stepwise).toEqual(replay(EMPTY_STATE, items).durations);
  });

  it('orders by time, then inbound before reply before archive, then id', () => {
    const a = item(ARCHIVED, min(1));
    const r = item(REPLY, min(1));
    const i = item(INBOUND, min(1));
    const early = item(ARCHIVED, min(0));
    expect([a, r, i, early].sort(compareItems)).toEqual([early, i, r, a]);
  });
});

describe('buckets', () => {
  it('are integer bounds growing by about 10%, and bucketOf counts the bounds at or below a value', () => {
    expect(BOUNDS[0]).toBe(1000);
    expect(BOUNDS.every((b, k) => Number.isInteger(b) && (k === 0 || b > BOUNDS[k - 1]))).toBe(true);
    expect(bucketOf(0)).toBe(0);
    expect(bucketOf(999)).toBe(0);
    expect(bucketOf(1000)).toBe(1);
    expect(bucketOf(1099)).toBe(1);
    expect(bucketOf(1100)).toBe(2);
    expect(bucketOf(10 ** 12)).toBe(BOUNDS.length);
  });
});

describe('splitPeriod', () => {
  const iso = (ds: Date[]) => ds.map((d) => d.toISOString());

  it('whole months from the monthly aggregates, other whole days from the daily ones, partial days from the raw rows', () => {
    const s = splitPeriod({ from: new Date('2024-01-20T10:00:00Z'), to: new Date('2024-04-03T06:00:00Z') });
    expect(s.days).toEqual(['2024-01-21', '2024-04-03']);
    expect(s.months).toEqual(['2024-02-01', '2024-04-01']);
    expect(s.monthEdgeDays).toEqual(['2024-01-21', '2024-02-01', '2024-04-01', '2024-04-03']);
    expect(iso(s.edges)).toEqual(['2024-01-20T10:00:00.000Z', '2024-01-21T00:00:00.000Z', '2024-04-03T00:00:00.000Z', '2024-04-03T06:00:00.000Z']);
  });

  it('whole days within one month have no months; whole months leave the rest empty', () => {
    const days = splitPeriod({ from: new Date('2024-05-01T10:00:00Z'), to: new Date('2024-05-04T06:00:00Z') });
    expect(days.days).toEqual(['2024-05-02', '2024-05-04']);
    expect(days.months[0]).toBe(days.months[1]);
    expect(days.monthEdgeDays).toEqual(['2024-05-02', '2024-05-04', '2024-05-04', '2024-05-04']);
    const months = splitPeriod({ from: new Date('2024-05-01T00:00:00Z'), to: new Date('2024-07-01T00:00:00Z') });
    expect(months.months).toEqual(['2024-05-01', '2024-07-01']);
    expect(months.monthEdgeDays).toEqual(['2024-05-01', '2024-05-01', '2024-07-01', '2024-07-01']);
    expect(months.edges[0].getTime()).toBe(months.edges[1].getTime());
    expect(months.edges[2].getTime()).toBe(months.edges[3].getTime());
  });

  it('a period within one day is all edge', () => {
    const inside = splitPeriod({ from: new Date('2024-05-01T10:00:00Z'), to: new Date('2024-05-01T12:00:00Z') });
    expect(inside.days[0]).toBe(inside.days[1]);
    expect(inside.months[0]).toBe(inside.months[1]);
    expect(iso(inside.edges.slice(0, 2))).toEqual(['2024-05-01T10:00:00.000Z', '2024-05-01T12:00:00.000Z']);
    expect(inside.edges[2].getTime()).toBe(inside.edges[3].getTime());
  });
});
