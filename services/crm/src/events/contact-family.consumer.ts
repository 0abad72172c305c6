import type { Pool } from '@crm/db';
import { EventConsumer } from '@crm/events';
import type { Logger } from '@crm/logger';
import type { CrmConfig } from '../config';
import { CONTACT_FAMILY, FamilyModule, joinModules } from './event-families';

/**
 * Queue `<EVENTS_EXCHANGE>.crm.contact-events`: contact and appointment events for lead scoring (facts, tag
 * history) and analytics (funnel, assignments) in one transaction with one processed_events row. Scoring runs
 * first: it locks contact rows in (org, id) order before anything else, as the message family does.
 */
export function contactFamilyConsumer(
  ctx: { config: Pick<CrmConfig, 'AMQP_URL' | 'EVENTS_EXCHANGE'>; pool: Pool; log: Logger },
  modules: { scoring: FamilyModule; analytics: FamilyModule },
): EventConsumer {
  const apply = joinModules([modules.scoring, modules.analytics]);
  return new EventConsumer({
    amqpUrl: ctx.config.AMQP_URL,
    exchange: ctx.config.EVENTS_EXCHANGE,
    queue: `${ctx.config.EVENTS_EXCHANGE}.crm.contact-events`,
    bindings: CONTACT_FAMILY,
    // batch mode: see packages/events batchHandler
    handler: (event, db) => apply([event], db!),
    logger: ctx.log,
    pool: ctx.pool,
    prefetch: 100,
    concurrency: 4,
  });
}
