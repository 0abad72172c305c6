import path from 'node:path';
import { SecretBox } from '@crm/crypto';
import { directDatabaseUrl } from '@crm/config';
import { createPool, databaseAnswers, prepareDatabase } from '@crm/db';
import { brokerConnected, EventConsumer, installEventTables, OutboxRelay } from '@crm/events';
import { GrantKeeper, GrpcServer, grpcTransportFromEnv, internalAuthFromEnv, loadProto, serviceDefinition } from '@crm/grpc-kit';
import { createLogger, Logger } from '@crm/logger';
import { Metrics, type RunningService, withMetricsServer } from '@crm/metrics';
import { createMailSender } from '@crm/mail';
import { AddressGuard } from '@crm/net-guard';
import type { AutomationConfig } from './config';
import type { Deps } from './deps';
import { CampaignSender, REPLY_BINDINGS, repliesHandler, repliesQueue, SEEN_BINDINGS, seenHandler, seenQueue } from './campaigns';
import { LinkSigner } from './email-links';
import {
  AlertRecipients,
  EMAIL_ALERT_BINDINGS,
  emailAlertsHandler,
  emailAlertsQueue,
  prepareEmailAlerts,
  pruneEmailAlertsEvery,
} from './notifications';
import { ReminderSender } from './appointment-reminders';
import { Runner, RunLogSweeper, TriggerTimers } from './rules';
import { HttpStepClient } from './http-step';
import { automationBindings, automationQueue, automationShares } from './events';
import { automationHandlers } from './grpc';
import { createRemote } from './remote';
import { RuleCache } from './rule-definitions';

export { loadConfig } from './config';
export { automationQueue, triggersQueue } from './events';
export { repliesQueue, seenQueue } from './campaigns';
export { emailAlertsQueue } from './notifications';

export type { RunningService };

/**
 * Create the database if needed, migrate, then: gRPC for the API, the outbox relay (notification.created),
 * the event consumer of one queue (events/automation-queue.ts) with three shares: rule triggers (events → runs, system
 * notifications), campaign replies (message.received → replyRate) and read receipts (message.seen → openRate); the
 * runner (runs → actions), the timed triggers (schedules and idle conversations → runs), the campaign sender
 * (campaign recipients → messages), the appointment reminder sender,
 * and, with SMTP_URL, the email-alerts consumer (its own new_message notifications → alert emails to users who opted
 * in). The replies and receipts queues of older versions are drained (README, "Event queues").
 */
export async function startAutomation(config: AutomationConfig, log: Logger = createLogger('automation', config.LOG_LEVEL)): Promise<RunningService> {
  // This service's internal credential: verifies every incoming call, signs its own calls (bad keys stop start-up).
  const auth = internalAuthFromEnv('automation', config);
  // How its gRPC server and clients connect: mutual TLS when GRPC_TLS_* is set (bad certificates stop start-up too).
  const transport = grpcTransportFromEnv(config, log);
  // Over the direct connection: a migration run holds its session (an advisory lock across transactions).
  await prepareDatabase(directDatabaseUrl(config), path.join(__dirname, '..', 'migrations'), log);
  const pool = createPool(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
  await installEventTables(pool);
  // The gateway's grant per org (org_grants): the origin of every call automation makes on its own (issue #27).
  const grants = new GrantKeeper(pool, auth, 'automation');
  const remote = createRemote(config, auth, transport, grants);
  const deps: Deps = {
    config,
    pool,
    log,
    remote,
    grants,
    mail: createMailSender(config, log),
    box: SecretBox.fromEnv(config.ENCRYPTION_KEY, config.ENCRYPTION_KEYS_OLD),
    emailGuard: new AddressGuard({ allow: config.EMAIL_ALLOWED_PRIVATE_ADDRESSES, purpose: 'campaign emails' }),
    links: LinkSigner.fromEnv(config.ENCRYPTION_KEY, config.ENCRYPTION_KEYS_OLD),
    rules: new RuleCache({ pool, databaseUrl: directDatabaseUrl(config), log, maxAgeMs: config.RULE_CACHE_MAX_AGE_MS }),
    httpSteps: new HttpStepClient(config.AUTOMATION_ALLOWED_PRIVATE_ADDRESSES),
  };

  const metrics = new Metrics('automation');
  const relay = new OutboxRelay({
    // Each event carries this service's stamp: consumers acting on it pass it on as their calls' origin.
    stamps: auth,
    pool,
    directUrl: directDatabaseUrl(config),
    amqpUrl: config.AMQP_URL,
    exchange: config.EVENTS_EXCHANGE,
    logger: log,
    metrics,
  });
  const runner = new Runner(deps);
  const sweeper = new RunLogSweeper(deps);
  // Schedule and conversation_idle triggers: their due rows on the timer facility, turned into runs.
  const timers = new TriggerTimers(deps);
  const shares = automationShares(deps);
  // Rule triggers, campaign replies and read receipts on one queue (issue #28): one copy and one commit per batch.
  const consumer = new EventConsumer({
    amqpUrl: config.AMQP_URL,
    amqpUserPrefix: config.AMQP_USER_PREFIX,
    exchange: config.EVENTS_EXCHANGE,
    queue: automationQueue(config.EVENTS_EXCHANGE),
    bindings: automationBindings(shares),
    // Batches, one commit each (issue #28 item 2), each share with its own processed_events rows.
    shares,
    // An org's events in order, orgs side by side.
    batchKey: (e) => e.orgId,
    parseData: true,
    logger: log,
    pool,
    concurrency: 4,
    maxAttempts: config.EVENT_RETRY_SCHEDULE.length + 1,
    retryDelaysMs: config.EVENT_RETRY_SCHEDULE,
    metrics,
  });
  const sender = new CampaignSender(deps);
  const reminders = new ReminderSender(deps);
  // The queues replies and read receipts had before: unbound, and drained of what an older version left in them.
  const drains = [
    { queue: repliesQueue(config.EVENTS_EXCHANGE), bindings: REPLY_BINDINGS, batchHandler: repliesHandler(deps) },
    { queue: seenQueue(config.EVENTS_EXCHANGE), bindings: SEEN_BINDINGS, batchHandler: seenHandler(deps) },
  ].map(
    (retired) =>
      new EventConsumer({
        ...retired,
        draining: true,
        amqpUrl: config.AMQP_URL,
        amqpUserPrefix: config.AMQP_USER_PREFIX,
        exchange: config.EVENTS_EXCHANGE,
        batchKey: (e) => e.orgId,
        parseData: true,
        logger: log,
        pool,
        concurrency: 2,
        maxAttempts: config.EVENT_RETRY_SCHEDULE.length + 1,
        retryDelaysMs: config.EVENT_RETRY_SCHEDULE,
        metrics,
      }),
  );
  // Without a mail server there is nothing to do, so no queue is even declared.
  const emailAlerts = deps.mail.enabled
    ? new EventConsumer({
        amqpUrl: config.AMQP_URL,
        amqpUserPrefix: config.AMQP_USER_PREFIX,
        exchange: config.EVENTS_EXCHANGE,
        queue: emailAlertsQueue(config.EVENTS_EXCHANGE),
        bindings: EMAIL_ALERT_BINDINGS,
        // Recipients from identity before the transaction; a few alerts per batch (each sent under its lock).
        batchPrepare: prepareEmailAlerts(new AlertRecipients(remote)),
        batchHandler: emailAlertsHandler(deps),
        batchSize: 10,
        batchKey: (e) => e.orgId,
        parseData: true,
        logger: log,
        pool,
        concurrency: 2,
        maxAttempts: config.EVENT_RETRY_SCHEDULE.length + 1,
        retryDelaysMs: config.EVENT_RETRY_SCHEDULE,
        metrics,
      })
    : undefined;
  const server = new GrpcServer(log, auth, metrics).readiness({
    postgres: () => databaseAnswers(pool),
    rabbitmq: () => brokerConnected([relay, consumer, ...drains, ...(emailAlerts ? [emailAlerts] : [])]),
  });
  server.add(serviceDefinition(loadProto('automation/v1/automation.proto'), 'automation.v1.AutomationService'), automationHandlers(deps));

  const stopped: Array<() => Promise<void>> = [];
  let stopPruning = () => {};
  try {
    await relay.start();
    stopped.push(() => relay.stop());
    // Listening for rule changes before the first event is judged.
    await deps.rules.start();
    stopped.push(() => deps.rules.stop());
    await runner.start();
    stopped.push(() => runner.stop());
    await sweeper.start();
    stopped.push(() => sweeper.stop());
    await timers.start();
    stopped.push(() => timers.stop());
    await consumer.start();
    stopped.push(() => consumer.stop());
    await sender.start();
    stopped.push(() => sender.stop());
    await reminders.start();
    stopped.push(() => reminders.stop());
    // After the shared queue is bound: every event published from now on reaches it before the old queues lose theirs.
    for (const drain of drains) {
      await drain.start();
      stopped.push(() => drain.stop());
    }
    if (emailAlerts) {
      await emailAlerts.start();
      stopped.push(() => emailAlerts.stop());
      stopPruning = pruneEmailAlertsEvery(deps);
      stopped.push(async () => stopPruning());
    }
  } catch (err) {
    for (const stop of stopped.reverse()) await stop().catch(() => undefined);
    remote.close();
    deps.mail.close();
    deps.httpSteps.close();
    await pool.end();
    throw err;
  }
  const port = await server.listen(config.GRPC_HOST, config.GRPC_PORT, transport);
  log.info({ port }, 'automation listening');
  const stop = async () => {
    // Stop taking work first (calls, then events), finish the runs in hand, publish what they wrote, close.
    await server.stop();
    await consumer.stop();
    for (const drain of drains) await drain.stop();
    await emailAlerts?.stop();
    stopPruning();
    await reminders.stop();
    await sender.stop();
    await timers.stop();
    await runner.stop();
    await sweeper.stop();
    await deps.rules.stop();
    await relay.stop();
    remote.close();
    deps.mail.close();
    deps.httpSteps.close();
    await pool.end();
  };
  return withMetricsServer(metrics, { port: config.METRICS_PORT, host: config.GRPC_HOST, log }, { port, stop });
}

/** The conventional entry every service exports, so the test stack and scripts can start any of them. */
export const start = startAutomation;
