import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Pool } from '@crm/db';
import { EventConsumer, HIGH_VOLUME_PREFIXES } from '@crm/events';
import { createLogger } from '@crm/logger';

/**
 * Issue #28 item 2: every consumer of a high-volume event (`message.*`, `conversation.*`, `contact.*`, `chatnet.*`,
 * identity's `audit.recorded`) takes batches and commits once per batch. Two checks: the EventConsumer constructor
 * refuses a committing per-event consumer of those families (so a service that built one would not start, and every
 * service starts in this suite), and the per-event consumers in the services' code are exactly the ones listed here,
 * each of a low-volume event, so a new one is a decision someone writes down, not an accident.
 */
const root = path.join(__dirname, '..', '..');

/** Per-event consumers that remain, by file and queue: none binds a high-volume family. */
const PER_EVENT_CONSUMERS = [
  // Settings changes: rare, and it commits nothing (no pool: it only drops a cache entry).
  'services/gateway/src/realtime/socket.ts: gateway.inbox-audience',
  // A friend list: one event per sync of an account, each a large batch of its own.
  'services/crm/src/app.ts: crm.chatnet-friends',
];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') ? [p] : [];
  });
}

/** The text of each `new EventConsumer({ ... })` of a file: from the call to its closing brace. */
function consumerBlocks(text: string): string[] {
  const out: string[] = [];
  for (let at = text.indexOf('new EventConsumer('); at >= 0; at = text.indexOf('new EventConsumer(', at + 1)) {
    let depth = 0;
    let i = text.indexOf('{', at);
    const start = i;
    for (; i < text.length; i++) {
      if (text[i] === '{') depth++;
      else if (text[i] === '}' && --depth === 0) break;
    }
    out.push(text.slice(start, i + 1));
  }
  return out;
}

describe('consumers of high-volume events commit per batch', () => {
  it('the consumer refuses a committing per-event handler for every high-volume family', () => {
    const pool = {} as Pool;
    const log = createLogger('test', 'silent');
    const base = { amqpUrl: 'amqp://127.0.0.1:9', exchange: 'x', queue: 'x.test', logger: log, handler: async () => undefined };
    for (const prefix of HIGH_VOLUME_PREFIXES) {
      const binding = prefix.endsWith('.') ? `${prefix}*` : prefix;
      expect(() => new EventConsumer({ ...base, bindings: [binding], pool })).toThrow(/high-volume event; commit per batch/);
      // Without a pool it commits nothing; with batches it commits once per batch.
      expect(() => new EventConsumer({ ...base, bindings: [binding] })).not.toThrow();
      expect(() => new EventConsumer({ ...base, handler: undefined, batchHandler: async () => undefined, bindings: [binding], pool })).not.toThrow();
    }
    expect(() => new EventConsumer({ ...base, bindings: ['chatnet_account.friends'], pool })).not.toThrow();
  });

  it('the per-event consumers left in the services are the listed low-volume ones', () => {
    const found: string[] = [];
    for (const service of readdirSync(path.join(root, 'services'))) {
      const src = path.join(root, 'services', service, 'src');
      if (!existsSync(src)) continue;
      for (const file of sources(src)) {
        for (const block of consumerBlocks(readFileSync(file, 'utf8'))) {
          if (!/^\s*handler:/m.test(block)) continue;
          const queue = /queue:[^\n]*\.([a-z-]+\.[a-z-]+)[`'"]/.exec(block)?.[1] ?? /queue:\s*([^,\n]+)/.exec(block)?.[1] ?? '?';
          found.push(`${path.relative(root, file)}: ${queue}`);
        }
      }
    }
    expect(found.sort()).toEqual([...PER_EVENT_CONSUMERS].sort());
  });
});
