import { loadConfig } from './config';

const base = { JWT_SECRET: 'x'.repeat(32) };

describe('gateway configuration', () => {
  it('cuts contact CSV imports at 50,000 data rows and 64 MB by default', () => {
    const c = loadConfig(base);
    expect(c.CONTACTS_IMPORT_MAX_ROWS).toBe(50_000);
    expect(c.CONTACTS_IMPORT_MAX_BYTES).toBe(64 * 1024 * 1024);
  });

  it('reads other import cut-offs', () => {
    const c = loadConfig({ ...base, CONTACTS_IMPORT_MAX_ROWS: '5', CONTACTS_IMPORT_MAX_BYTES: '4096' });
    expect([c.CONTACTS_IMPORT_MAX_ROWS, c.CONTACTS_IMPORT_MAX_BYTES]).toEqual([5, 4096]);
  });

  it('passes socket.io sessions on between instances only when GATEWAY_PEER_HOST names this one', () => {
    expect(loadConfig(base).GATEWAY_PEER_HOST).toBe('');
    for (const host of ['10.0.0.7', 'gateway-0.gateway.crm.svc', 'fd00::7'])
      expect(loadConfig({ ...base, GATEWAY_PEER_HOST: host }).GATEWAY_PEER_HOST).toBe(host);
  });

  it('refuses to start in production unless TRUST_PROXY_HOPS is set explicitly (0 included)', () => {
    const prod = { ...base, NODE_ENV: 'production' };
    expect(() => loadConfig(prod)).toThrow(/TRUST_PROXY_HOPS: must be set in production/);
    // Past this check, production's other requirements apply (secrets, keys): not this test's concern.
    for (const hops of ['0', '2']) expect(() => loadConfig({ ...prod, TRUST_PROXY_HOPS: hops })).not.toThrow(/TRUST_PROXY_HOPS/);
  });

  it.each([
    [{ CONTACTS_IMPORT_MAX_ROWS: '0' }, 'CONTACTS_IMPORT_MAX_ROWS'],
    [{ CONTACTS_IMPORT_MAX_ROWS: 'many' }, 'CONTACTS_IMPORT_MAX_ROWS'],
    [{ CONTACTS_IMPORT_MAX_BYTES: '1.5' }, 'CONTACTS_IMPORT_MAX_BYTES'],
    [{ CONTACTS_IMPORT_MAX_BYTES: String(2 * 1024 * 1024 * 1024) }, 'CONTACTS_IMPORT_MAX_BYTES'],
    // A host only: the port is the gateway's own, and the scheme is http.
    [{ GATEWAY_PEER_HOST: 'http://10.0.0.7' }, 'GATEWAY_PEER_HOST'],
    [{ GATEWAY_PEER_HOST: '10.0.0.7:8080' }, 'GATEWAY_PEER_HOST'],
    [{ GATEWAY_PEER_HOST: '$(POD_IP)' }, 'GATEWAY_PEER_HOST'],
  ])('refuses to start with %j, naming the variable', (env, name) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(name);
  });
});
