import type { Channel, ConsumeMessage } from 'amqplib';

/**
 * The deliveries of each channel not yet acked, so that a batch can be acked with one `multiple: true` frame
 * when, and only when, that acks nothing else. `multiple` acks every unacked delivery up to the tag given: a
 * delivery of another batch still running, a dead-letter copy still waiting for its confirm, or a message left
 * unacked on purpose (its retry copy could not be published) would be acked with it and could be lost.
 */
export class AckLedger {
  private readonly open = new WeakMap<Channel, Set<number>>();

  received(channel: Channel, msg: ConsumeMessage): void {
    let tags = this.open.get(channel);
    if (!tags) this.open.set(channel, (tags = new Set()));
    tags.add(msg.fields.deliveryTag);
  }

  /** Ack one delivery. Throws when the channel is closed (the broker then redelivers it). */
  ack(channel: Channel, msg: ConsumeMessage): void {
    this.open.get(channel)?.delete(msg.fields.deliveryTag);
    channel.ack(msg);
  }

  /**
   * Ack these deliveries of one channel: one frame when they are exactly the unacked deliveries up to the
   * highest of them, one per delivery otherwise. Returns how many frames were sent (tests look at it).
   */
  ackAll(channel: Channel, msgs: ConsumeMessage[]): number {
    if (msgs.length === 0) return 0;
    const tags = this.open.get(channel);
    let last = msgs[0];
    for (const m of msgs) if (m.fields.deliveryTag > last.fields.deliveryTag) last = m;
    const top = last.fields.deliveryTag;
    let covered = 0;
    if (tags) for (const t of tags) if (t <= top) covered++;
    const exact = tags !== undefined && covered === msgs.length && msgs.every((m) => tags.has(m.fields.deliveryTag));
    for (const m of msgs) tags?.delete(m.fields.deliveryTag);
    if (exact && msgs.length > 1) {
      channel.ack(last, true);
      return 1;
    }
    for (const m of msgs) channel.ack(m);
    return msgs.length;
  }
}
