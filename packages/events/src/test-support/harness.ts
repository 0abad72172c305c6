import type { Socket } from 'node:net';
import type { Channel, ChannelModel } from 'amqplib';
import { Client } from 'pg';
import { createPool, withTransaction, type Pool } from '@crm/db';
import { createLogger } from '@crm/logger';
import { createTestDatabase, infra, uniqueName, type TestDatabase } from '@crm/testing';
import { connectAmqp } from '../amqp';
import { EventConsumer } from '../consumer';
import type { EventConsumerOptions, EventHandler } from '../consumer-options';
import type { EventEnvelope } from '../envelope';
import { enqueueEvent } from '../outbox';
import { amqpUser } from '../publishers';
import { OutboxRelay, type OutboxRelayOptions } from '../relay';
import { installEventTables } from '../tables';
import { deleteTopology } from '../topology';
import { offCatalogue } from './off-catalogue';

/** What the integration tests of this package share: one database, one exchange and the queues of a test. */
// Silent unless asked for: the connection-loss tests log warnings on purpose.
export const log = createLogger('events-test', process.env.LOG_LEVEL ?? 'silent');
export const ORG = '5a1c7c43-1f9b-4f55-9a8e-2f8f3c1d0e01';
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * The user_id a test's own publishes carry: the connection's user, which every consumer here shares, so consumers accept
 * them (publishers.ts: a publish without one has no verified publisher and is refused).
 */
export const OWN_USER = amqpUser(infra.amqpUrl);

/** The options Harness.consumer fills in when a test leaves them out. */
type HarnessDefaults = 'amqpUrl' | 'exchange' | 'bindings' | 'logger';
/**
 * EventConsumerOptions with the harness's defaults optional, member by member of its union (a plain Partial would make
 * every option optional at once, `pool` too, and then a test's `handler: async (e) => …` could not be typed from it).
 */
export type TestConsumerOptions = EventConsumerOptions extends infer O
  ? O extends EventConsumerOptions
    ? Omit<O, HarnessDefaults> & Partial<Pick<O, HarnessDefaults>>
    : never
  : never;

/**
 * What a network failure looks like to amqplib: the socket errors. Reaches into the private connection
 * of a relay or consumer; there is no public way to break a connection, nor should there be.
 */
export function breakConnection(owner: OutboxRelay | EventConsumer): ChannelModel {
  const model = connectionOf(owner);
  if (!model) throw new Error('not connected');
  (model.connection as unknown as { stream: Socket }).stream.destroy(new Error('simulated network failure'));
  return model;
}

export function connectionOf(owner: OutboxRelay | EventConsumer): ChannelModel | undefined {
  return (owner as unknown as { connection?: ChannelModel }).connection;
}

/**
 * Records the text of every query sent by the connections whose application_name is `applicationName` (the relay's
 * own connection: RELAY_APPLICATION_NAME) into `sent`, until the returned spy is restored.
 */
export function recordQueries(applicationName: string, sent: string[]): jest.SpyInstance {
  const original = Client.prototype.query;
  return jest.spyOn(Client.prototype, 'query').mockImplementation(function (this: Client, ...args: unknown[]) {
    const name = (this as unknown as { connectionParameters: { application_name?: string } }).connectionParameters.application_name;
    if (name === applicationName) sent.push(typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: string } | undefined)?.text));
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as never);
}

/** One database, one exchange and the queues of one test; everything is removed by close(). */
export class Harness {
  readonly exchange = uniqueName('events_test_x');
  private readonly queues: string[] = [];
  private readonly running: Array<{ stop(): Promise<void> }> = [];
  private readonly probes: ChannelModel[] = [];

  private constructor(
    readonly db: TestDatabase,
    readonly pool: Pool,
  ) {}

  static async create(): Promise<Harness> {
    const db = await createTestDatabase('events');
    const pool = createPool(db.url, 12);
    await installEventTables(pool);
    // What a consumer's handler does in these tests: no unique key, so a repeated effect would show.
    await pool.query('CREATE TABLE effects (event_id uuid NOT NULL, consumer text NOT NULL)');
    return new Harness(db, pool);
  }

  queue(): string {
    const q = uniqueName('events_test_q');
    this.queues.push(q);
    return q;
  }

  async relay(opts: Partial<OutboxRelayOptions> = {}): Promise<OutboxRelay> {
    // A poll far longer than any test's wait: events must arrive through NOTIFY.
    const relay = new OutboxRelay({ pool: this.pool, amqpUrl: infra.amqpUrl, exchange: this.exchange, logger: log, pollMs: 60_000, ...opts });
    await relay.start();
    this.running.push(relay);
    return relay;
  }

  /** Options a test leaves out get this harness's; whatever else it gives (none too) reaches the constructor as given. */
  async consumer(opts: TestConsumerOptions): Promise<EventConsumer> {
    const consumer = new EventConsumer({
      amqpUrl: infra.amqpUrl,
      exchange: this.exchange,
      bindings: ['#'],
      logger: log,
      ...opts,
    } as EventConsumerOptions);
    await consumer.start();
    this.running.push(consumer);
    return consumer;
  }

  /** A plain channel for looking at queues the way the broker sees them; closed by close(). */
  async probe(): Promise<Channel> {
    const conn = await connectAmqp(infra.amqpUrl, 'events-test probe');
    conn.on('error', () => undefined);
    this.probes.push(conn);
    const ch = await conn.createChannel();
    // A passive declare of a missing queue closes the channel; the test asserts on the rejection instead.
    ch.on('error', () => undefined);
    return ch;
  }

  /** Handler with a database effect, as a real consumer has. */
  recordEffect(queue: string): EventHandler {
    return async (e, db) => {
      await db.query('INSERT INTO effects (event_id, consumer) VALUES ($1, $2)', [e.id, queue]);
    };
  }

  /** Enqueue and commit an event of any type, in the catalogue or not (off-catalogue.ts). */
  emit(type: string, data: unknown = {}): Promise<EventEnvelope> {
    return withTransaction(this.pool, (c) => enqueueEvent(c, offCatalogue({ type, orgId: ORG, data })));
  }

  async effects(queue: string): Promise<{ total: number; distinct: number }> {
    const { rows } = await this.pool.query(
      'SELECT count(*)::int AS total, count(DISTINCT event_id)::int AS distinct FROM effects WHERE consumer = $1',
      [queue],
    );
    return rows[0];
  }

  async close(): Promise<void> {
    for (const r of this.running.reverse()) await r.stop().catch(() => undefined);
    for (const c of this.probes) await c.close().catch(() => undefined);
    await this.pool.end();
    await this.db.drop();
    await deleteTopology(infra.amqpUrl, this.exchange, this.queues);
  }
}
