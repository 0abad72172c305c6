import type { Socket } from 'node:net';
import type { ChannelModel, ConsumeMessage } from 'amqplib';
import { eventually, infra, uniqueName } from '@crm/testing';
import { connectAmqp } from './amqp';

// connectAmqp corks the socket for each round of amqplib's mux (amqp.ts corkMuxRounds): the frames channels queue
// together (a relay's batch of publishes) leave in one writev instead of a socket write each, and arrive whole and
// in order. Against the real broker, counting the socket's writes.
describe('connectAmqp: one socket write per mux round', () => {
  let conn: ChannelModel;
  const queue = uniqueName('events_cork_q');

  beforeAll(async () => {
    conn = await connectAmqp(infra.amqpUrl, 'events-test cork');
  });
  afterAll(async () => {
    const ch = await conn.createChannel();
    await ch.deleteQueue(queue);
    await conn.close();
  });

  function countWrites(socket: Socket) {
    const counts = { calls: 0 };
    // net.Socket's own entry points below the stream machinery: each call is one write to the kernel.
    const s = socket as unknown as { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void };
    const [write, writev] = [s._write, s._writev];
    s._write = function (...a: unknown[]) {
      counts.calls++;
      return write.apply(this, a);
    };
    s._writev = function (...a: unknown[]) {
      counts.calls++;
      return writev.apply(this, a);
    };
    return { counts, restore: () => Object.assign(s, { _write: write, _writev: writev }) };
  }

  it('200 publishes made together reach the socket in a few writes and the queue whole, in order', async () => {
    const ch = await conn.createConfirmChannel();
    await ch.assertQueue(queue, { durable: false, autoDelete: false });
    const socket = (conn as unknown as { connection: { stream: Socket } }).connection.stream;
    const writes = countWrites(socket);
    try {
      for (let i = 0; i < 200; i++) ch.publish('', queue, Buffer.from(JSON.stringify({ i, pad: 'x'.repeat(200) })));
      await ch.waitForConfirms();
    } finally {
      writes.restore();
    }
    // 200 frames of ~300 bytes: one write per mux round (a round stops at the socket's 16 KiB high-water mark and
    // resumes on drain), so a handful of writes; uncorked it was one per publish.
    expect(writes.counts.calls).toBeLessThanOrEqual(10);

    const got: number[] = [];
    const consumer = await conn.createChannel();
    await consumer.consume(queue, (m: ConsumeMessage | null) => m && got.push((JSON.parse(m.content.toString()) as { i: number }).i), {
      noAck: true,
    });
    await eventually(async () => got.length === 200);
    expect(got).toEqual(Array.from({ length: 200 }, (_, i) => i));
    await consumer.close();
    await ch.close();
  });
});
