import { spawnSync } from 'node:child_process';
import { client, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';

// The public OpenAPI document is valid 3.1, served without a key, generated from the same operations as the
// gateway's whole document (/openapi.json), and its webhook events are exactly the ones the webhooks service
// accepts. The settings page's documentation block renders this document (settings-api.js loadDocs).
describe('GET /api/public/openapi.json', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ services: ['webhooks'] });
  });
  afterAll(() => stack.stop());

  it('is a valid OpenAPI 3.1 document listing every public endpoint, served without an API key', async () => {
    const res = await client(stack.url).get('/api/public/openapi.json');
    expect(res.status).toBe(200);
    // The validator is an ES module; jest runs CommonJS, so validate in a child process.
    const check = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import { Validator } from '@seriousme/openapi-schema-validator'; let s=''; process.stdin.on('data', d => s += d).on('end', async () => { const r = await new Validator().validate(JSON.parse(s)); console.log(JSON.stringify(r)); });",
      ],
      { input: JSON.stringify(res.body), cwd: __dirname, encoding: 'utf8' },
    );
    const result = JSON.parse(check.stdout);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(res.body.openapi).toBe('3.1.0');
    const ops = Object.entries(res.body.paths as Record<string, object>).flatMap(([p, o]) => Object.keys(o).map((m) => `${m.toUpperCase()} ${p}`));
    expect(ops).toEqual(
      expect.arrayContaining([
        'GET /api/public/contacts',
        'POST /api/public/contacts',
        'GET /api/public/contacts/{id}',
        'PUT /api/public/contacts/{id}',
        'GET /api/public/conversations',
        'GET /api/public/conversations/{id}/messages',
        'GET /api/public/appointments',
        'POST /api/public/appointments',
        'POST /api/public/messages/send',
        'GET /api/public/whoami',
        'GET /api/public/messages/{id}',
      ]),
    );
    // The same source: each public operation is, word for word, the one in the gateway's whole document.
    const whole = (await client(stack.url).get('/openapi.json')).body;
    for (const [p, item] of Object.entries(res.body.paths as Record<string, object>)) expect(item).toEqual(whole.paths[p]);
  });

  it('shows cursor, updatedSince and nextCursor on every public list, and the send response', async () => {
    const doc = (await client(stack.url).get('/api/public/openapi.json')).body;
    const lists = {
      '/api/public/contacts': 'contacts',
      '/api/public/appointments': 'appointments',
      '/api/public/conversations': 'conversations',
      '/api/public/conversations/{id}/messages': 'messages',
    };
    for (const [path, key] of Object.entries(lists)) {
      const op = doc.paths[path].get;
      expect([path, op.parameters.map((p: { name: string }) => p.name)]).toEqual([path, expect.arrayContaining(['limit', 'cursor', 'updatedSince'])]);
      const body = op.responses['200'].content['application/json'].schema;
      expect([path, Object.keys(body.properties).sort()]).toEqual([path, [key, 'nextCursor'].sort()]);
      expect(body.properties.nextCursor.type).toEqual(['string', 'null']);
    }
    const send = doc.paths['/api/public/messages/send'].post;
    expect(Object.keys(send.responses['200'].content['application/json'].schema.properties).sort()).toEqual(['messageId', 'status', 'success']);
    expect(Object.keys(send.requestBody.content['application/json'].schema.properties)).toEqual(
      expect.arrayContaining(['chatnetAccountId', 'zaloAccountId']),
    );
    const message = doc.paths['/api/public/messages/{id}'].get.responses['200'].content['application/json'].schema;
    expect(Object.keys(message.properties)).toEqual(expect.arrayContaining(['id', 'conversationId', 'content', 'sentAt', 'status', 'senderType']));
    expect(doc.info.description).toContain('nextCursor');
  });

  it('documents exactly the events the webhooks service accepts', async () => {
    const api = client(stack.url);
    const doc = (await api.get('/api/public/openapi.json')).body;
    const documented = Object.keys(doc.webhooks).sort();
    const { owner } = await newOrg(api);
    const accepted = await owner.get('/api/v1/webhook-settings/event-types');
    expect(accepted.status).toBe(200);
    const names = (Array.isArray(accepted.body) ? accepted.body : (accepted.body.eventTypes ?? accepted.body.data ?? accepted.body.events)).map(
      (e: string | { name: string }) => (typeof e === 'string' ? e : e.name),
    );
    expect([...names].sort()).toEqual(documented);
    const created = await owner.post('/api/v1/webhook-settings', { url: 'https://hooks.example.test/crm', events: documented });
    expect(created.status).toBe(201);
  });
});
