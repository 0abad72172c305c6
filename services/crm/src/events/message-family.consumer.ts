import type { Pool } from '@crm/db';
import { EventConsumer } from '@crm/events';
import type { Logger } from '@crm/logger';
import type { Metrics } from '@crm/metrics';
import type { CrmConfig } from '../config';
import { FamilyModule, joinModules, MESSAGE_FAMILY } from './event-families';

/**
 * Queue `<EVENTS_EXCHANGE>.crm.message-events`: a message's activity (lastActivity, timeline), its lead-scoring
 * facts and its analytics items in one transaction with one processed_events row. Activity runs first: it locks
 * the batch's contact rows in (org, id) order, the lock scoring then needs and a contact DELETE takes first, so
 * the three never deadlock with deletes or with each other.
 */
export function messageFamilyConsumer(
  ctx: {
    config: Pick<CrmConfig, 'AMQP_URL' | 'EVENTS_EXCHANGE'> & Partial<Pick<CrmConfig, 'AMQP_USER_PREFIX'>>;
    pool: Pool;
    log: Logger;
    metrics?: Metrics;
  },
  modules: { activity: FamilyModule; scoring: FamilyModule; analytics: FamilyModule },
): EventConsumer {
  const apply = joinModules([modules.activity, modules.scoring, modules.analytics]);
  return new EventConsumer({
    amqpUrl: ctx.config.AMQP_URL,
    amqpUserPrefix: ctx.config.AMQP_USER_PREFIX,
    exchange: ctx.config.EVENTS_EXCHANGE,
    queue: `${ctx.config.EVENTS_EXCHANGE}.crm.message-events`,
    bindings: MESSAGE_FAMILY,
    // Up to 100 events per transaction (one commit, one multi-row processed_events claim), one batch at a time:
    // the modules' multi-row writes make a batch cost little more than one event, and one lane keeps the order.
    batchHandler: (events, db) => apply(events, db),
    batchSize: 100,
    // The modules get data parsed by its schema: an event that does not fit is dead-lettered with the reason.
    parseData: true,
    logger: ctx.log,
    pool: ctx.pool,
    metrics: ctx.metrics,
  });
}
