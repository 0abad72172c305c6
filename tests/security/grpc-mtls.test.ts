import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { createLogger } from '@crm/logger';
import { createServiceClient, GrpcTransport, grpcTransportFromEnv, loadProto, serviceDefinition, status } from '@crm/grpc-kit';
import { eventually, testAuth } from '@crm/testing';
import { client, newOrg } from '../support/http';
import { startStack, type Stack } from '../support/stack';

// Issue #27 item 3: with GRPC_TLS_* set, every connection between the processes is mutual TLS: gRPC between the
// gateway and the services, and messaging's attachments HTTP port (the gateway and the connector stream files
// through it). A stack of gateway, identity, crm, messaging and chatnet-connector runs on certificates made by
// `npm run keys`; a request through the gateway works, while a client that is plaintext, holds a certificate from
// another deployment's CA, or holds none is refused at the connection, even with a valid internal credential.
const root = path.resolve(__dirname, '../..');

/** A deployment's key material as `npm run --silent keys` prints it: the same script, run the same way. */
function keys(): Record<string, string> {
  const text = execFileSync(process.execPath, [path.join(root, 'scripts/generate-keys.mjs')], { encoding: 'utf8' });
  const lines = text.split('\n').map((l) => /^([A-Z0-9_]+)=(.*)$/.exec(l));
  return Object.fromEntries(lines.filter((m): m is RegExpExecArray => m !== null).map((m) => [m[1], m[2]]));
}
const pem = (base64: string) => Buffer.from(base64, 'base64');
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const crmCtor = () => serviceDefinition(loadProto('crm/v1/crm.proto'), 'crm.v1.CrmService');

describe('mutual TLS between the processes (GRPC_TLS_CA, GRPC_TLS_CERT, GRPC_TLS_KEY)', () => {
  let stack: Stack;
  let ours: Record<string, string>;
  let theirs: Record<string, string>;
  let orgId: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'mtls-files-'));
  const tlsOf = (set: Record<string, string>, prefix: string) => ({
    GRPC_TLS_CERT: set[`${prefix}_GRPC_TLS_CERT`],
    GRPC_TLS_KEY: set[`${prefix}_GRPC_TLS_KEY`],
  });
  /** The gateway's own transport: what a legitimate client of the services holds. */
  const gatewayTransport = () => grpcTransportFromEnv({ GRPC_TLS_CA: ours.GRPC_TLS_CA, ...tlsOf(ours, 'GATEWAY') });
  /** ListContacts on crm with the gateway's valid internal credential over `transport`: only the connection differs. */
  const listContacts = async (transport: GrpcTransport) => {
    const rpc = createServiceClient(crmCtor(), stack.addr('crm'), testAuth('gateway'), 5000, 'pick_first', transport);
    try {
      return await rpc.ListContacts({ page: 1, limit: 10 }, { orgId, role: 'owner', requestId: 'mtls' });
    } finally {
      rpc.close();
    }
  };

  beforeAll(async () => {
    ours = keys();
    theirs = keys();
    stack = await startStack({
      services: ['crm', 'messaging', 'chatnet-connector'],
      env: { GRPC_TLS_CA: ours.GRPC_TLS_CA },
      serviceEnv: {
        identity: tlsOf(ours, 'IDENTITY'),
        crm: tlsOf(ours, 'CRM'),
        messaging: { ...tlsOf(ours, 'MESSAGING'), ATTACHMENTS_DIR: dir },
        'chatnet-connector': tlsOf(ours, 'CHATNET_CONNECTOR'),
      },
      gatewayEnv: tlsOf(ours, 'GATEWAY'),
    });
    orgId = (await newOrg(client(stack.url), 'TLS Org')).user.orgId;
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('requests through the gateway work: /readyz, sign-up (identity), a contact (crm), a file the connector stores and the gateway serves (messaging)', async () => {
    // The first checks open the TLS channels; on a loaded machine a handshake can outlast a check's 1 s deadline, so
    // readiness is asked until it holds (a refused handshake never turns it green).
    const ready = await eventually(async () => {
      const r = await client(stack.url).get('/readyz');
      return r.status === 200 ? r : undefined;
    }, 20_000).catch(() => client(stack.url).get('/readyz'));
    expect([ready.status, ready.body.checks]).toEqual([
      200,
      expect.objectContaining({ identity: true, crm: true, messaging: true, 'chatnet-connector': true }),
    ]);
    const { owner, token } = await newOrg(client(stack.url), 'TLS Shop');
    const contact = await owner.post('/api/v1/contacts', { fullName: 'Linh Pham', phone: '0901234567' });
    expect(contact.status).toBe(201);
    // crm asks messaging for the contact's conversations: a call between two services.
    expect((await owner.get(`/api/v1/contacts/${contact.body.id}`)).status).toBe(200);

    const accountId = (await owner.post('/api/v1/chatnet-accounts', { displayName: 'Shop line' })).body.id;
    expect((await owner.post(`/api/v1/chatnet-accounts/${accountId}/login`)).status).toBe(200);
    expect((await owner.post(`/sandbox/accounts/${accountId}/scan`, {})).body.status).toBe('connected');
    const photo = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(3_000)]);
    const inbound = await owner.post(`/sandbox/accounts/${accountId}/inbound`, {
      fromUid: 'uid-tls',
      fromName: 'Mai Tran',
      content: 'photo',
      attachments: [{ fileName: 'shop.png', mimeType: 'image/png', contentBase64: photo.toString('base64') }],
    });
    expect(inbound.status).toBe(200);
    // The connector stored the file on messaging's attachments port (HTTPS, its own certificate)...
    const file = await eventually(async () => {
      const conv = (await owner.get('/api/v1/conversations')).body.data[0];
      return (
        conv && (await owner.get(`/api/v1/conversations/${conv.id}`)).body.messages.find((m: any) => m.attachments?.length === 1)?.attachments[0]
      );
    });
    // ...and the gateway streams it back from there (HTTPS, the gateway's certificate).
    const got = await fetch(`${stack.url}${file.url}`, { headers: { authorization: `Bearer ${token}` } });
    expect([got.status, sha256(Buffer.from(await got.arrayBuffer()))]).toEqual([200, sha256(photo)]);
  });

  it('a client with a certificate from the CA reaches a service directly (the internal credential still decides the rest)', async () => {
    await expect(listContacts(gatewayTransport())).resolves.toMatchObject({ pagination: expect.objectContaining({ total: 0 }) });
  });

  it("a client checks the server's name: crm's certificate does not pass for identity's", async () => {
    await expect(listContacts(gatewayTransport().expecting('identity'))).rejects.toMatchObject({
      code: status.UNAVAILABLE,
      details: expect.stringMatching(/altnames/),
    });
  });

  it('a plaintext gRPC client is refused, even with a valid internal credential (UNAVAILABLE: no connection)', async () => {
    await expect(listContacts(GrpcTransport.plaintext)).rejects.toMatchObject({ code: status.UNAVAILABLE });
  });

  it("a client certificate from another deployment's CA is refused by the service", async () => {
    // The client trusts our CA (so it accepts the server): the refusal is the server's, of the client's certificate.
    const stranger = GrpcTransport.mutualTls({
      ca: pem(ours.GRPC_TLS_CA),
      cert: pem(theirs.GATEWAY_GRPC_TLS_CERT),
      key: pem(theirs.GATEWAY_GRPC_TLS_KEY),
    });
    await expect(listContacts(stranger)).rejects.toMatchObject({ code: status.UNAVAILABLE });
  });

  it('a TLS client without a client certificate is refused by the service', async () => {
    const ctor = crmCtor();
    const rpc = new ctor(stack.addr('crm'), grpc.credentials.createSsl(pem(ours.GRPC_TLS_CA))) as unknown as grpc.Client & Record<string, Function>;
    const md = new grpc.Metadata();
    md.set('authorization', `Bearer ${testAuth('gateway').sign({ orgId, role: 'owner' }, 'crm.v1.CrmService/ListContacts')}`);
    const code = await new Promise<number>((resolve) =>
      rpc.ListContacts({ page: 1, limit: 10 }, md, { deadline: new Date(Date.now() + 5000) }, (err: grpc.ServiceError | null) =>
        resolve(err ? err.code : status.OK),
      ),
    );
    rpc.close();
    expect(code).toBe(status.UNAVAILABLE);
  });

  describe("messaging's attachments port is HTTPS asking for a client certificate", () => {
    const port = () => new URL(stack.env.MESSAGING_HTTP_URL).port;
    /** GET /v1/attachments/x over HTTPS with `opts`: the status, or the connection error. */
    const get = (opts: https.RequestOptions) =>
      new Promise<number | string>((resolve) => {
        const req = https.get(
          { host: '127.0.0.1', port: port(), path: '/v1/attachments/x', ca: pem(ours.GRPC_TLS_CA), agent: false, ...opts },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      });

    it('with a certificate from the CA: TLS passes and the internal credential is asked for (401 without one)', async () => {
      expect(await get({ cert: pem(ours.CHATNET_CONNECTOR_GRPC_TLS_CERT), key: pem(ours.CHATNET_CONNECTOR_GRPC_TLS_KEY) })).toBe(401);
    });

    it('plain HTTP, no client certificate, or one from another CA: refused at the connection', async () => {
      await expect(fetch(`http://127.0.0.1:${port()}/v1/attachments/x`)).rejects.toThrow();
      expect(await get({})).toEqual(expect.any(String));
      expect(await get({ cert: pem(theirs.CHATNET_CONNECTOR_GRPC_TLS_CERT), key: pem(theirs.CHATNET_CONNECTOR_GRPC_TLS_KEY) })).toEqual(
        expect.any(String),
      );
    });
  });
});

describe('GRPC_TLS_* settings', () => {
  let set: Record<string, string>;
  let other: Record<string, string>;
  beforeAll(() => {
    set = keys();
    other = keys();
  }, 60_000);
  const env = (over: Record<string, string | undefined> = {}) => ({
    GRPC_TLS_CA: set.GRPC_TLS_CA,
    GRPC_TLS_CERT: set.CRM_GRPC_TLS_CERT,
    GRPC_TLS_KEY: set.CRM_GRPC_TLS_KEY,
    ...over,
  });

  it('all three: mutual TLS; none: plaintext', () => {
    expect(grpcTransportFromEnv(env()).secure).toBe(true);
    expect(grpcTransportFromEnv({}).secure).toBe(false);
  });

  it('one or two of them stop start-up with an error naming each missing one', () => {
    expect(() => grpcTransportFromEnv(env({ GRPC_TLS_KEY: undefined }))).toThrow(
      /GRPC_TLS_KEY: is required when GRPC_TLS_CA and GRPC_TLS_CERT are set/,
    );
    expect(() => grpcTransportFromEnv({ GRPC_TLS_CA: set.GRPC_TLS_CA })).toThrow(/GRPC_TLS_CERT: is required[\s\S]*GRPC_TLS_KEY: is required/);
  });

  it('material that does not belong together stops start-up naming the variable', () => {
    expect(() => grpcTransportFromEnv(env({ GRPC_TLS_KEY: set.AI_GRPC_TLS_KEY }))).toThrow(/GRPC_TLS_KEY: is not the key of GRPC_TLS_CERT/);
    expect(() => grpcTransportFromEnv(env({ GRPC_TLS_CA: other.GRPC_TLS_CA }))).toThrow(/GRPC_TLS_CERT: was not issued by GRPC_TLS_CA/);
    expect(() => grpcTransportFromEnv(env({ GRPC_TLS_CA: set.CRM_GRPC_TLS_CERT }))).toThrow(/GRPC_TLS_CA: must hold CA certificates only/);
    expect(() => grpcTransportFromEnv(env({ GRPC_TLS_CERT: 'not a certificate' }))).toThrow(/GRPC_TLS_CERT: must be a PEM file/);
  });

  it('a CA bundle (old and new CA while rotating) accepts certificates of either', () => {
    const bundle = Buffer.concat([pem(other.GRPC_TLS_CA), pem(set.GRPC_TLS_CA)]).toString('base64');
    expect(grpcTransportFromEnv(env({ GRPC_TLS_CA: bundle })).secure).toBe(true);
  });

  it('under NODE_ENV=production, plaintext is allowed but logged as a warning at start', () => {
    const lines: string[] = [];
    const log = createLogger('test', 'warn', { write: (line: string) => void lines.push(line) });
    grpcTransportFromEnv({ NODE_ENV: 'production' }, log);
    grpcTransportFromEnv({ NODE_ENV: 'development' }, log);
    grpcTransportFromEnv({ NODE_ENV: 'production', ...env() }, log);
    expect(lines).toEqual([expect.stringMatching(/GRPC_TLS_CA, GRPC_TLS_CERT and GRPC_TLS_KEY are not set/)]);
  });

  it('an http:// URL for an internal HTTP port is refused under TLS, accepted in plaintext', () => {
    expect(() => grpcTransportFromEnv(env()).httpAgent(new URL('http://messaging:50063'), 'MESSAGING_HTTP_URL')).toThrow(
      /MESSAGING_HTTP_URL: must be an https:\/\/ URL/,
    );
    expect(grpcTransportFromEnv({}).httpAgent(new URL('http://messaging:50063'), 'MESSAGING_HTTP_URL')).toBeDefined();
  });
});
