import { randomBytes } from 'node:crypto';
import { loadConfig } from './config';

const base = { ENCRYPTION_KEY: randomBytes(32).toString('base64') };

describe('webhooks configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig(base);
    expect(c.WEBHOOK_RETRY_SCHEDULE).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000]);
    expect(c.WEBHOOK_ALLOWED_PRIVATE_ADDRESSES.entries).toEqual([]);
    expect(c.WEBHOOK_DISABLE_AFTER).toBe(5 * 86_400_000);
    expect(c.GRPC_PORT).toBe(50057);
  });

  it('reads the overrides tests and local development use', () => {
    const c = loadConfig({ ...base, WEBHOOK_RETRY_SCHEDULE: '1s,2s,5s', WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1, 10.0.0.0/8' });
    expect(c.WEBHOOK_RETRY_SCHEDULE).toEqual([1000, 2000, 5000]);
    expect(c.WEBHOOK_ALLOWED_PRIVATE_ADDRESSES.entries).toEqual(['127.0.0.1', '10.0.0.0/8']);
  });

  it.each([
    [{ WEBHOOK_RETRY_SCHEDULE: '1s,later' }, 'WEBHOOK_RETRY_SCHEDULE'],
    [{ WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: 'intranet' }, 'WEBHOOK_ALLOWED_PRIVATE_ADDRESSES'],
    [{ WEBHOOK_DISABLE_AFTER: 'never' }, 'WEBHOOK_DISABLE_AFTER'],
    [{ ENCRYPTION_KEY: 'x'.repeat(40) }, 'ENCRYPTION_KEY'],
  ])('refuses to start with %j, naming the variable', (env, name) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(name);
  });

  it('requires ENCRYPTION_KEY', () => {
    expect(() => loadConfig({})).toThrow('ENCRYPTION_KEY');
  });
});
