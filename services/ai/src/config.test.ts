import { randomBytes } from 'node:crypto';
import { loadConfig } from './config';

const base = { ENCRYPTION_KEY: randomBytes(32).toString('base64') };

describe('ai configuration', () => {
  it('caps the daily quota at 2000 and allows no private base URL by default', () => {
    const c = loadConfig(base);
    expect(c.AI_DAILY_QUOTA_MAX).toBe(2000);
    expect(c.AI_DEFAULT_DAILY_QUOTA).toBe(500);
    expect(c.AI_ALLOWED_PRIVATE_ADDRESSES.entries).toEqual([]);
  });

  it('reads an allow-list for a self-hosted model server', () => {
    expect(loadConfig({ ...base, AI_ALLOWED_PRIVATE_ADDRESSES: '10.0.0.5, 192.168.0.0/16' }).AI_ALLOWED_PRIVATE_ADDRESSES.entries).toEqual([
      '10.0.0.5',
      '192.168.0.0/16',
    ]);
  });

  it.each([
    [{ AI_ALLOWED_PRIVATE_ADDRESSES: 'model-server' }, 'AI_ALLOWED_PRIVATE_ADDRESSES'],
    [{ AI_DAILY_QUOTA_MAX: '0' }, 'AI_DAILY_QUOTA_MAX'],
    [{ AI_DAILY_QUOTA_MAX: '100' }, 'AI_DEFAULT_DAILY_QUOTA: must be at most AI_DAILY_QUOTA_MAX (100)'],
  ])('refuses to start with %j, naming the variable', (env, message) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(message);
  });
});
