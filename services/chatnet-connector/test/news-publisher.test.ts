import { connect, type ChannelModel, type MessageProperties } from 'amqplib';
import { type Pool } from '@crm/db';
import { amqpUser, DirectPublisher, installEventTables, OutboxRelay, type NewEvent } from '@crm/events';
import { createLogger } from '@crm/logger';
import { Metrics, sampleValue } from '@crm/metrics';
import { createTestDatabase, eventually, infra, uniqueName, type TestDatabase, testPool } from '@crm/testing';
import { inboundEventId } from '../src/events/events';
import { NewsPublisher } from '../src/events/news-publisher';
import { OutboxBatcher } from '../src/events/outbox-batcher';
import { TcpProxy } from './tcp-proxy';

const ORG = '0b7f6f0e-3c1a-4c55-8a47-51a1d1a5e101';
const ACCOUNT = '0b7f6f0e-3c1a-4c55-8a47-51a1d1a5e102';
const THREADS = ['t1', 't2', 't3'];
// Silent unless asked for: the broker failures below log warnings on purpose.
const log = createLogger('news-publisher-test', process.env.LOG_LEVEL ?? 'silent');
const broker = new URL(infra.amqpUrl);

interface Delivered {
  id: string;
  thread: string;
  props: MessageProperties;
}

/** A real chatnet.inbound; its network id is `<thread>:<n>`. */
const message = (thread: string, i: number): NewEvent => ({
  id: inboundEventId(ACCOUNT, `${thread}:${i}`),
  type: 'chatnet.inbound',
  orgId: ORG,
  data: {
    accountId: ACCOUNT,
    chatnetMessageId: `${thread}:${i}`,
    threadId: thread,
    threadType: 'user',
    fromUid: thread,
    fromName: 'Lan',
    fromAvatar: '',
    content: `message ${i} of ${thread}`,
    contentType: 'text',
    sentAt: new Date().toISOString(),
  },
});

/**
 * The connector's news path against a real broker and database: the direct publisher reaches RabbitMQ through a proxy
 * the test breaks; the outbox relay goes through the same proxy (the broker gone for everyone) or straight to it.
 */
class Rig {
  private constructor(
    readonly exchange: string,
    readonly delivered: Delivered[],
    readonly metrics: Metrics,
    readonly db: TestDatabase,
    readonly pool: Pool,
    readonly proxy: TcpProxy,
    readonly direct: DirectPublisher,
    readonly relay: OutboxRelay,
    readonly news: NewsPublisher,
    private readonly consumer: ChannelModel,
  ) {}

  static async start(o: { relayThroughProxy: boolean; confirmTimeoutMs: number; maxWaitMs?: number }): Promise<Rig> {
    const db = await createTestDatabase('chatnet_news');
    const pool = testPool(db.url, 4);
    await installEventTables(pool);
    const proxy = await TcpProxy.start({ host: broker.hostname, port: Number(broker.port || 5672) });
    const exchange = uniqueName('t_news');
    // The consumer first, so nothing published is missed.
    const consumer = await connect(infra.amqpUrl);
    const ch = await consumer.createChannel();
    await ch.assertExchange(exchange, 'topic', { durable: true });
    const { queue } = await ch.assertQueue('', { exclusive: true, autoDelete: true });
    await ch.bindQueue(queue, exchange, 'chatnet.#');
    const delivered: Delivered[] = [];
    await ch.consume(
      queue,
      (msg) => {
        if (!msg) return;
        const e = JSON.parse(msg.content.toString());
        delivered.push({ id: e.id, thread: e.data.threadId, props: msg.properties });
      },
      { noAck: true },
    );
    const direct = new DirectPublisher({ amqpUrl: proxy.url(infra.amqpUrl), exchange, logger: log, confirmTimeoutMs: o.confirmTimeoutMs });
    const relay = new OutboxRelay({ pool, amqpUrl: o.relayThroughProxy ? proxy.url(infra.amqpUrl) : infra.amqpUrl, exchange, logger: log });
    await relay.start();
    await direct.start();
    const metrics = new Metrics('chatnet-connector', { processMetrics: false });
    const outbox = new OutboxBatcher({ pool, log, maxEvents: 100, maxWaitMs: 5 });
    const news = new NewsPublisher({
      direct,
      outbox,
      pool,
      log,
      maxEvents: 100,
      maxWaitMs: o.maxWaitMs ?? 0,
      drainWaitMs: o.confirmTimeoutMs,
      metrics,
    });
    return new Rig(exchange, delivered, metrics, db, pool, proxy, direct, relay, news, consumer);
  }

  /** A channel on the test's own connection, for arranging the broker. */
  channel() {
    return this.consumer.createChannel();
  }

  /** Outbox rows of chatnet.inbound by event id. */
  async outboxIds(): Promise<Set<string>> {
    const { rows } = await this.pool.query<{ id: string }>(`SELECT id FROM outbox WHERE type = 'chatnet.inbound'`);
    return new Set(rows.map((r) => r.id));
  }

  counted(path: 'direct' | 'outbox'): Promise<number | undefined> {
    return this.metrics.scrape().then((t) => sampleValue(t, 'chatnet_inbound_events_total', { path }));
  }

  /** Each id once (the first delivery of it), in delivery order. */
  firstDeliveries(): Delivered[] {
    const seen = new Set<string>();
    return this.delivered.filter((d) => !seen.has(d.id) && seen.add(d.id));
  }

  /** Hand in one message of each thread `count` times over, all at once; resolves once every one is confirmed or stored. */
  async burst(from: number, count: number): Promise<NewEvent[]> {
    const sent: NewEvent[] = [];
    for (let i = from; i < from + count; i++) for (const t of THREADS) sent.push(message(t, i));
    await Promise.all(sent.map((e) => this.news.enqueue(e)));
    return sent;
  }

  /** Messages one at a time until one is published directly (no outbox row), the way the network trickles them in. */
  async trickleUntilDirect(from: number): Promise<NewEvent[]> {
    const sent: NewEvent[] = [];
    await eventually(
      async () => {
        const e = message(THREADS[sent.length % THREADS.length], from + sent.length);
        sent.push(e);
        await this.news.enqueue(e);
        return !(await this.outboxIds()).has(e.id!);
      },
      15_000,
      100,
    );
    return sent;
  }

  async stop(): Promise<void> {
    await this.news.close();
    await this.direct.stop();
    await this.relay.stop();
    await this.proxy.close();
    const ch = await this.consumer.createChannel();
    await ch.deleteExchange(this.exchange).catch(() => undefined);
    await this.consumer.close().catch(() => undefined);
    await this.pool.end();
    await this.db.drop();
  }
}

/** Every message delivered (at least once), and each thread's first deliveries in the order the messages were handed in. */
function expectAllInOrder(rig: Rig, sent: NewEvent[]): void {
  const first = rig.firstDeliveries();
  expect(new Set(first.map((d) => d.id))).toEqual(new Set(sent.map((e) => e.id)));
  for (const t of THREADS) {
    const threadOf = (e: NewEvent) => (e.data as { threadId: string }).threadId;
    expect(first.filter((d) => d.thread === t).map((d) => d.id)).toEqual(sent.filter((e) => threadOf(e) === t).map((e) => e.id));
  }
}

describe('NewsPublisher: chatnet.inbound straight to RabbitMQ, the outbox while it does not confirm', () => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.stop();
    rig = undefined;
  });

  it('with the broker up, messages are confirmed and delivered in order without an outbox row; a repeat is published once', async () => {
    rig = await Rig.start({ relayThroughProxy: false, confirmTimeoutMs: 2_000 });
    const sent = await rig.burst(0, 20);
    // Handed over again by the network: the id was just confirmed, so it is not published a second time.
    await rig.news.enqueue(sent[0]);
    expect(await rig.outboxIds()).toEqual(new Set());
    await eventually(async () => rig!.delivered.length >= sent.length);
    expectAllInOrder(rig, sent);
    // The message the relay would have sent: persistent, under the connector's broker user, its id as message id.
    const d = rig.delivered[0];
    expect(d.props).toMatchObject({
      deliveryMode: 2,
      userId: amqpUser(infra.amqpUrl),
      messageId: d.id,
      type: 'chatnet.inbound',
      contentType: 'application/json',
    });
    // A marker published after the repeat: once it is in, a second copy of sent[0] would be too.
    await rig.burst(20, 1);
    await eventually(async () => rig!.delivered.length >= sent.length + THREADS.length);
    expect(rig.delivered.filter((x) => x.id === sent[0].id)).toHaveLength(1);
    expect(await rig.counted('direct')).toBe(sent.length + THREADS.length);
  });

  it('gathers messages the network hands over within maxWaitMs into one publish; a flush does not wait', async () => {
    rig = await Rig.start({ relayThroughProxy: false, confirmTimeoutMs: 2_000, maxWaitMs: 300 });
    const windows: number[] = [];
    const publish = rig.direct.publish.bind(rig.direct);
    jest.spyOn(rig.direct, 'publish').mockImplementation((events) => (windows.push(events.length), publish(events)));
    // Five messages 20 ms apart, as the network trickles them in: one publish, the first answered after its wait.
    const started = Date.now();
    const answered: Promise<number>[] = [];
    for (let i = 0; i < 5; i++) {
      answered.push(rig.news.enqueue(message(THREADS[0], i)).then(() => Date.now() - started));
      await new Promise((r) => setTimeout(r, 20));
    }
    const times = await Promise.all(answered);
    expect(windows).toEqual([5]);
    expect(times[0]).toBeGreaterThanOrEqual(300);
    // A flush (a session handed to another instance, shutdown) publishes what waits at once.
    const waiting = rig.news.enqueue(message(THREADS[1], 0));
    const flushedAt = Date.now();
    await rig.news.flush();
    await waiting;
    expect(Date.now() - flushedAt).toBeLessThan(250);
    expect(windows).toEqual([5, 1]);
    await eventually(async () => rig!.delivered.length >= 6);
  });

  it('without a wait (maxWaitMs 0), each message trickled in is a publish of its own', async () => {
    rig = await Rig.start({ relayThroughProxy: false, confirmTimeoutMs: 2_000, maxWaitMs: 0 });
    const windows: number[] = [];
    const publish = rig.direct.publish.bind(rig.direct);
    jest.spyOn(rig.direct, 'publish').mockImplementation((events) => (windows.push(events.length), publish(events)));
    for (let i = 0; i < 3; i++) await rig.news.enqueue(message(THREADS[0], i));
    expect(windows).toEqual([1, 1, 1]);
  });

  it('with the broker unreachable, messages go to the outbox, arrive once it is back, each once and in order, and the direct path resumes', async () => {
    rig = await Rig.start({ relayThroughProxy: true, confirmTimeoutMs: 1_000 });
    const before = await rig.burst(0, 5);
    rig.proxy.cut();
    // Every caller is answered: its message is committed to the outbox with its own event id.
    const during = await rig.burst(5, 10);
    const stored = await rig.outboxIds();
    for (const e of during) expect(stored.has(e.id!)).toBe(true);
    for (const e of before) expect(stored.has(e.id!)).toBe(false);
    await new Promise((r) => setTimeout(r, 500));
    expect(rig.delivered.length).toBe(before.length);

    rig.proxy.restore();
    const after = await rig.trickleUntilDirect(15);
    const resumed = await rig.burst(15 + after.length, 5);
    for (const e of resumed) expect((await rig.outboxIds()).has(e.id!)).toBe(false);
    const sent = [...before, ...during, ...after, ...resumed];
    await eventually(async () => rig!.firstDeliveries().length >= sent.length, 15_000);
    expectAllInOrder(rig, sent);
    // Nothing was in flight when the broker went: no message reached the consumer twice.
    expect(rig.delivered).toHaveLength(sent.length);
    expect(await rig.counted('outbox')).toBeGreaterThanOrEqual(during.length);
  });

  it('a batch the broker nacks goes to the outbox, and arrives in order once the broker takes it', async () => {
    rig = await Rig.start({ relayThroughProxy: false, confirmTimeoutMs: 2_000 });
    // A full queue that refuses more: the broker nacks every publish routed to it (the other queue still gets a copy).
    const ch = await rig.channel();
    const full = uniqueName('t_news_full');
    await ch.assertQueue(full, { exclusive: true, arguments: { 'x-max-length': 0, 'x-overflow': 'reject-publish' } });
    await ch.bindQueue(full, rig.exchange, 'chatnet.#');
    const during = await rig.burst(0, 5);
    const stored = await rig.outboxIds();
    for (const e of during) expect(stored.has(e.id!)).toBe(true);

    await ch.deleteQueue(full);
    const after = await rig.trickleUntilDirect(5);
    const sent = [...during, ...after];
    await eventually(async () => rig!.firstDeliveries().length >= sent.length, 15_000);
    expectAllInOrder(rig, sent);
  });

  it('a batch the broker does not confirm in time goes to the outbox with the same ids: delivered, maybe twice, never lost', async () => {
    // The relay reaches the broker; only the direct path's confirms are held back.
    rig = await Rig.start({ relayThroughProxy: false, confirmTimeoutMs: 300 });
    const before = await rig.burst(0, 3);
    rig.proxy.withholdReplies();
    const started = Date.now();
    const during = await rig.burst(3, 10);
    // The first batch waited out the bound before it went to the outbox.
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    const stored = await rig.outboxIds();
    for (const e of during) expect(stored.has(e.id!)).toBe(true);
    await eventually(async () => rig!.firstDeliveries().length >= before.length + during.length, 15_000);

    rig.proxy.restore();
    const after = await rig.trickleUntilDirect(13);
    const sent = [...before, ...during, ...after];
    await eventually(async () => rig!.firstDeliveries().length >= sent.length, 15_000);
    expectAllInOrder(rig, sent);
    // A second copy is only ever of a message that went both ways: consumers drop it by its id.
    const twice = rig.delivered.filter((d, i) => rig!.delivered.findIndex((x) => x.id === d.id) !== i);
    for (const d of twice) expect(stored.has(d.id)).toBe(true);
  });
});
