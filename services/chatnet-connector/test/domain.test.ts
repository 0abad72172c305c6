import { liveStatusOf } from '../src/accounts';
import { inboundEventId } from '../src/events/events';
import { loadConfig } from '../src/config';

describe('live status as clients see it', () => {
  const info = { instance: 'i-1', state: 'connected' as const, connectedAt: '2025-01-01T00:00:00.000Z', lastHeartbeat: '2025-01-01T00:05:00.000Z' };

  it('is what the holder published while it still holds the lease', () => {
    expect(liveStatusOf('i-1', info)).toEqual({ state: 'connected', connectedAt: info.connectedAt, lastHeartbeat: info.lastHeartbeat });
    expect(liveStatusOf('i-1', { ...info, state: 'qr_pending' })).toEqual({
      state: 'qr_pending',
      connectedAt: undefined,
      lastHeartbeat: info.lastHeartbeat,
    });
  });

  it('is disconnected, with the last heartbeat kept, once the lease lapsed or moved on', () => {
    expect(liveStatusOf(null, info)).toEqual({ state: 'disconnected', lastHeartbeat: info.lastHeartbeat });
    expect(liveStatusOf('i-2', info)).toEqual({ state: 'disconnected', lastHeartbeat: info.lastHeartbeat });
    expect(liveStatusOf(null, {})).toEqual({ state: 'disconnected', lastHeartbeat: undefined });
  });
});

describe('chatnet.inbound event ids', () => {
  it('are UUIDs stable per account and network message id, so a re-delivered message is enqueued once', () => {
    const id = inboundEventId('acc-1', '6938394735567');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(inboundEventId('acc-1', '6938394735567')).toBe(id);
    expect(inboundEventId('acc-2', '6938394735567')).not.toBe(id);
  });
});

describe('configuration', () => {
  const key = Buffer.alloc(32, 7).toString('base64');
  it('defaults to the sandbox driver with leases that survive a missed heartbeat', () => {
    const c = loadConfig({ ENCRYPTION_KEY: key });
    expect(c).toMatchObject({ CHATNET_DRIVER: 'sandbox', GRPC_PORT: 50054, LEASE_TTL_MS: 10_000, HEARTBEAT_MS: 3_000, REDIS_PREFIX: 'crm:' });
  });
  it('names the variable that is wrong', () => {
    expect(() => loadConfig({})).toThrow(/ENCRYPTION_KEY/);
    expect(() => loadConfig({ ENCRYPTION_KEY: key, HEARTBEAT_MS: '6000' })).toThrow(/HEARTBEAT_MS/);
    expect(() => loadConfig({ ENCRYPTION_KEY: key, CHATNET_DRIVER: 'whatsapp' })).toThrow(/CHATNET_DRIVER/);
  });
});
