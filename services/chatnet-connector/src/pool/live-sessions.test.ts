import type { ChatnetSession } from '../drivers';
import { type Entry, LiveSessions, type LiveSessionsOptions } from './live-sessions';

// The bookkeeping of what an instance holds, without a network, database or Redis: only the queries the rest of
// the connector and the rebalancer rely on, and which entry counts as the one held.
const live = () => new LiveSessions({} as LiveSessionsOptions);
const session = (alive = true) => ({ isAlive: () => alive }) as unknown as ChatnetSession;
const entry = (accountId: string, patch: Partial<Entry> = {}): Entry => ({ accountId, orgId: 'org-a', state: 'connecting', since: 0, ...patch });

describe('LiveSessions bookkeeping', () => {
  it('knows an entry as current until it is forgotten or replaced, and forgets only the current one', () => {
    const sessions = live();
    const first = entry('acc-1');
    sessions.hold(first);
    expect(sessions.isCurrent(first)).toBe(true);
    expect(sessions.held('acc-1')).toBe('connecting');
    const second = entry('acc-1', { state: 'qr_pending' });
    sessions.hold(second);
    expect(sessions.isCurrent(first)).toBe(false);
    expect(sessions.forget(first)).toBe(false);
    expect(sessions.held('acc-1')).toBe('qr_pending');
    expect(sessions.forget(second)).toBe(true);
    expect(sessions.holds('acc-1')).toBe(false);
    expect(sessions.heldCount()).toBe(0);
  });

  it('counts reconnects and live sessions as load, not pending QR logins, and every state for the gauge', () => {
    const sessions = live();
    sessions.hold(entry('a', { state: 'qr_pending' }));
    sessions.hold(entry('b', { state: 'connecting' }));
    sessions.hold(entry('c', { state: 'connected', session: session(), connectedAt: new Date() }));
    expect(sessions.load()).toBe(2);
    expect(sessions.countByState()).toEqual({ qr_pending: 1, connecting: 1, connected: 1 });
    expect(live().countByState()).toEqual({ qr_pending: 0, connecting: 0, connected: 0 });
  });

  it('offers the most recently connected session that is not closing for a hand-over', () => {
    const sessions = live();
    expect(sessions.newestLive()).toBeUndefined();
    sessions.hold(entry('old', { state: 'connected', session: session(), connectedAt: new Date(1_000) }));
    sessions.hold(entry('new', { state: 'connected', session: session(), connectedAt: new Date(3_000) }));
    sessions.hold(entry('closing', { state: 'connected', session: session(), connectedAt: new Date(5_000), closing: true }));
    sessions.hold(entry('pending', { state: 'connecting' }));
    expect(sessions.newestLive()).toBe('new');
  });

  it('gives a live session only to its own organization, and says why an account is not live', () => {
    const sessions = live();
    const s = session();
    sessions.hold(entry('live', { state: 'connected', session: s, connectedAt: new Date() }));
    sessions.hold(entry('dead', { state: 'connected', session: session(false), connectedAt: new Date() }));
    sessions.hold(entry('qr', { state: 'qr_pending' }));
    expect(sessions.isLive('live', 'org-a')).toBe(true);
    expect(sessions.liveSession('live', 'org-a')).toBe(s);
    expect(sessions.isLive('live', 'org-b')).toBe(false);
    expect(() => sessions.liveSession('live', 'org-b')).toThrow('no connector instance holds it live');
    expect(sessions.isLive('dead', 'org-a')).toBe(false);
    expect(() => sessions.liveSession('dead', 'org-a')).toThrow('it is reconnecting');
    expect(() => sessions.liveSession('qr', 'org-a')).toThrow('a QR login is pending');
    expect(() => sessions.liveSession('unknown', 'org-a')).toThrow(expect.objectContaining({ code: 'account_not_live' }));
  });

  it('hands nothing over once stopping (the stop releases every session itself)', async () => {
    const sessions = live();
    sessions.hold(entry('acc', { state: 'connected', session: session(), connectedAt: new Date() }));
    expect(sessions.stopped).toBe(false);
    sessions.stopTaking();
    expect(sessions.stopped).toBe(true);
    await expect(sessions.handOff('acc', 1_000)).resolves.toBe(false);
    expect(sessions.held('acc')).toBe('connected');
  });
});
