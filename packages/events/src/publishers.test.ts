import { BROKER_SERVICES } from './broker-services';
import { amqpUser, isSharedBrokerUser, publisherRefusal, type PublisherCheck } from './publishers';
import { eventDefinitions, producersOf } from './schemas';

describe('amqpUser', () => {
  it.each([
    ['amqp://crm:secret@rabbitmq:5672', 'crm'],
    ['amqp://t1_chatnet-connector:pw@127.0.0.1:5672/', 't1_chatnet-connector'],
    ['amqp://us%40er:pw@host', 'us@er'],
    // amqplib signs in as guest when the URL carries no credentials at all.
    ['amqp://127.0.0.1:5672', 'guest'],
    ['amqp://guest:guest@127.0.0.1:5672', 'guest'],
  ])('%s signs in as %s', (url, user) => {
    expect(amqpUser(url)).toBe(user);
  });
});

describe('the catalogue names each type’s producers', () => {
  // Every service but the gateway runs an outbox relay (identity's publishes user.*).
  const producing = new Set<string>(BROKER_SERVICES.filter((s) => s !== 'gateway'));

  it('every type has at least one, and only services with an outbox relay', () => {
    for (const d of eventDefinitions()) {
      expect({ type: d.type, some: d.producers.length > 0 }).toEqual({ type: d.type, some: true });
      for (const p of d.producers)
        expect({ type: d.type, producer: p, hasOutbox: producing.has(p) }).toEqual({ type: d.type, producer: p, hasOutbox: true });
    }
  });

  it('names who writes each family', () => {
    expect(producersOf('message.received')).toEqual(['messaging']);
    expect(producersOf('contact.created')).toEqual(['crm']);
    expect(producersOf('chatnet.inbound')).toEqual(['chatnet-connector']);
    expect(producersOf('notification.created')).toEqual(['automation']);
    expect(producersOf('webhook.disabled')).toEqual(['webhooks']);
    expect([...producersOf('audit.recorded')!].sort()).toEqual(['ai', 'automation', 'chatnet-connector', 'crm', 'messaging', 'webhooks']);
    expect(producersOf('widget.created')).toBeUndefined();
  });
});

describe('publisherRefusal', () => {
  const webhooks: PublisherCheck = { ownUser: 'webhooks', userPrefix: '' };
  const received = (userId: unknown, routingKey = 'message.received') => ({ type: 'message.received', routingKey, userId });

  it("accepts a type's producer, and the consumer's own user (its retry copies, or one user shared by every service)", () => {
    expect(publisherRefusal(received('messaging'), webhooks)).toBeUndefined();
    expect(publisherRefusal(received('webhooks', 'crm.events.webhooks.deliveries'), webhooks)).toBeUndefined();
    expect(
      publisherRefusal({ type: 'audit.recorded', routingKey: 'audit.recorded', userId: 'ai' }, { ownUser: 'identity', userPrefix: '' }),
    ).toBeUndefined();
    expect(publisherRefusal({ type: 'contact.updated', routingKey: 'contact.updated.lead_score', userId: 'crm' }, webhooks)).toBeUndefined();
    expect(publisherRefusal(received('guest'), { ownUser: 'guest', userPrefix: '' })).toBeUndefined();
  });

  it('refuses another service, a missing user_id and a type the catalogue lacks, saying why', () => {
    expect(publisherRefusal(received('ai'), webhooks)).toBe('publisher ai is not a producer of message.received (producers: messaging)');
    expect(publisherRefusal({ type: 'audit.recorded', routingKey: 'audit.recorded', userId: 'guest' }, { ownUser: 'identity', userPrefix: '' })).toBe(
      'publisher guest is not a producer of audit.recorded (producers: crm, messaging, chatnet-connector, automation, ai, webhooks)',
    );
    for (const missing of [undefined, '', 42]) {
      expect(publisherRefusal(received(missing), webhooks)).toBe('a message without user_id has no verified publisher; refused as message.received');
    }
    expect(publisherRefusal({ type: 'widget.created', routingKey: 'widget.created', userId: 'crm' }, webhooks)).toBe(
      'publisher crm is not a producer of widget.created (a type the catalogue lacks)',
    );
  });

  it('refuses a producer of one type sending it under another type’s routing key', () => {
    expect(publisherRefusal({ type: 'audit.recorded', routingKey: 'message.received', userId: 'ai' }, webhooks)).toBe(
      'publisher ai sent audit.recorded under the routing key message.received',
    );
    expect(publisherRefusal({ type: 'contact.updated', routingKey: 'contact.updated_by_me', userId: 'crm' }, webhooks)).toMatch(/routing key/);
  });

  it('reads producers’ users with the prefix: the bare service name is then nobody', () => {
    const prefixed: PublisherCheck = { ownUser: 't9_webhooks', userPrefix: 't9_' };
    expect(publisherRefusal(received('t9_messaging'), prefixed)).toBeUndefined();
    expect(publisherRefusal(received('messaging'), prefixed)).toBe(
      'publisher messaging is not a producer of message.received (producers: t9_messaging)',
    );
  });
});

test('a user that is no service’s own is shared: producer checks cannot hold', () => {
  expect(isSharedBrokerUser('guest', '')).toBe(true);
  expect(isSharedBrokerUser('crm', '')).toBe(false);
  expect(isSharedBrokerUser('crm', 't1_')).toBe(true);
  expect(isSharedBrokerUser('t1_crm', 't1_')).toBe(false);
});
