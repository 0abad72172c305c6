/**
 * The services that connect to RabbitMQ, each as a user of its own named after it (deploy/rabbitmq/definitions.sh),
 * with AMQP_USER_PREFIX in front when one is set (tests make users of their own beside others on a shared broker).
 * Apart from publishers.ts because the schemas name their producers with it and publishers.ts reads the schemas.
 */
export const BROKER_SERVICES = ['identity', 'crm', 'messaging', 'chatnet-connector', 'automation', 'ai', 'webhooks', 'gateway'] as const;
export type BrokerService = (typeof BROKER_SERVICES)[number];
/** The services with an outbox relay: only they publish events (the gateway consumes only; identity publishes user.*). */
export type ProducerService = Exclude<BrokerService, 'gateway'>;
