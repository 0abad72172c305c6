/** Anything that holds a RabbitMQ channel: the outbox relay, each consumer. */
export interface BrokerLink {
  readonly connected: boolean;
}

/**
 * Readiness of a service's RabbitMQ: every relay and consumer it runs holds an open channel. Reading flags the
 * client already keeps costs nothing per probe; a link that lost its connection turns this false until it is back.
 */
export async function brokerConnected(links: Iterable<BrokerLink>): Promise<void> {
  let down = 0;
  let total = 0;
  for (const link of links) {
    total++;
    if (!link.connected) down++;
  }
  if (down > 0) throw new Error(`${down} of ${total} RabbitMQ connections are not open`);
}
