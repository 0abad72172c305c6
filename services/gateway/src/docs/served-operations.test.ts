import { OPERATIONS, servedOperations } from './index';

// The sandbox control routes are in the document exactly when app.ts mounts them (config.ts sandboxRoutesEnabled).
describe('servedOperations', () => {
  const sandboxPaths = (ops: typeof OPERATIONS) => ops.filter((o) => o.path.startsWith('/sandbox/')).map((o) => `${o.method} ${o.path}`);

  it('lists the chat network’s sandbox routes outside production with the sandbox driver', () => {
    expect(sandboxPaths(servedOperations({ NODE_ENV: 'development', CHATNET_DRIVER: 'sandbox' }))).toContain('POST /sandbox/accounts/:id/inbound');
  });

  it('leaves them out in production and with the real driver', () => {
    expect(sandboxPaths(servedOperations({ NODE_ENV: 'production', CHATNET_DRIVER: 'sandbox' }))).toEqual([]);
    expect(
      sandboxPaths(servedOperations({ NODE_ENV: 'development', CHATNET_DRIVER: 'zca' })).filter((p) => p.includes('/sandbox/accounts/')),
    ).toEqual([]);
    expect(servedOperations({ NODE_ENV: 'production', CHATNET_DRIVER: 'zca' }).length).toBe(OPERATIONS.filter((o) => !o.sandbox).length);
  });

  it('lists the social network’s sandbox routes outside production whatever the chat driver (crm refuses them with 404 without its sandbox driver)', () => {
    const socialnet = (ops: typeof OPERATIONS) => sandboxPaths(ops).filter((p) => p.includes('/sandbox/socialnet/'));
    expect(socialnet(servedOperations({ NODE_ENV: 'development', CHATNET_DRIVER: 'zca' }))).toContain('POST /sandbox/socialnet/forms/:formId/leads');
    expect(socialnet(servedOperations({ NODE_ENV: 'production', CHATNET_DRIVER: 'zca' }))).toEqual([]);
  });
});
