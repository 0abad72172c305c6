import type { Pool } from '@crm/db';
import { EventConsumer, SCORE_ONLY_CONTACT_UPDATE } from '@crm/events';
import type { Logger } from '@crm/logger';
import type { Metrics } from '@crm/metrics';
import type { CrmConfig } from '../config';
import { CONTACT_FAMILY, FamilyModule, joinModules } from './event-families';

/**
 * Queue `<EVENTS_EXCHANGE>.crm.contact-events`: contact events for analytics (funnel, assignments), applied with
 * one processed_events row per batch. Lead scoring is not here: the contact writer records its facts in the
 * transaction of the change itself, and scoring's own contact.updated (leadScore only) never reaches this queue.
 */
export function contactFamilyConsumer(
  ctx: {
    config: Pick<CrmConfig, 'AMQP_URL' | 'EVENTS_EXCHANGE'> & Partial<Pick<CrmConfig, 'AMQP_USER_PREFIX'>>;
    pool: Pool;
    log: Logger;
    metrics?: Metrics;
  },
  modules: { analytics: FamilyModule },
): EventConsumer {
  const apply = joinModules([modules.analytics]);
  return new EventConsumer({
    amqpUrl: ctx.config.AMQP_URL,
    amqpUserPrefix: ctx.config.AMQP_USER_PREFIX,
    exchange: ctx.config.EVENTS_EXCHANGE,
    queue: `${ctx.config.EVENTS_EXCHANGE}.crm.contact-events`,
    bindings: CONTACT_FAMILY,
    // Lead scoring's announcements of a new score (published under their own routing key): the read model uses
    // none of them, so the queue is not bound to them rather than claiming and dropping each one.
    excludeRoutingKeys: [SCORE_ONLY_CONTACT_UPDATE],
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
