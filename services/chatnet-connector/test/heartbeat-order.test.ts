import { randomUUID } from 'node:crypto';
import { createLogger } from '@crm/logger';
import { liveStatusOf } from '../src/accounts';
import { LeaseKeeper, type LeaseKeeperOptions } from '../src/pool/lease-keeper';
import { Leases } from '../src/pool/leases';
import { type Entry, LiveSessions, type LiveSessionsOptions } from '../src/pool/live-sessions';
import { connectRedis, type ConnectorRedis } from '../src/redis';

const log = createLogger('heartbeat-order-test', process.env.LOG_LEVEL ?? 'silent');

// A heartbeat races establish(): the beat's register round trip is in flight while a restore finishes and
// writes `connected` to the live info. Whatever the beat then renews must not set it back to `connecting`
// (GET status said "reconnecting" for up to a beat, and a reconnect was answered reconnect_in_progress).
describe('LeaseKeeper heartbeat and a session coming up meanwhile', () => {
  let redis: ConnectorRedis;
  const prefix = `test_hb_${randomUUID().slice(0, 8)}:`;

  beforeAll(async () => {
    redis = await connectRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', log);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(keys);
    await redis.quit();
  });

  it('the live info stays connected when the session comes up while the beat registers', async () => {
    const leases = new Leases(redis, prefix, 'instance-a', 10_000);
    const accountId = randomUUID();
    expect(await leases.acquire(accountId, 'connecting')).toBe(true);

    // register() waits until the test lets it go: the account connects in that window.
    let letRegisterGo!: () => void;
    const registerHeld = new Promise<void>((r) => (letRegisterGo = r));
    const realRegister = leases.register.bind(leases);
    leases.register = async (address: string) => {
      await registerHeld;
      await realRegister(address);
    };

    const live = new LiveSessions({ leases, log } as unknown as LiveSessionsOptions);
    const keeper = new LeaseKeeper({ config: { SCAN_INTERVAL_MS: 1_000 }, leases, log, live } as unknown as LeaseKeeperOptions);
    // A restore in progress, as restore() records it before the driver answers.
    const entry: Entry = { accountId, orgId: randomUUID(), state: 'connecting', since: Date.now() };
    live.hold(entry);

    const beat = (keeper as unknown as { beat(): Promise<void> }).beat();
    // establish(): the session is up, the entry turns connected and its live info is written.
    const connectedAt = new Date();
    Object.assign(entry, { state: 'connected', connectedAt, session: { isAlive: () => true } });
    await leases.renew([{ accountId, state: 'connected', connectedAt }]);
    letRegisterGo();
    await beat;

    const [{ holder, info }] = await leases.liveInfo([accountId]);
    expect(liveStatusOf(holder, info).state).toBe('connected');
  });
});
