import type { PoolClient } from '@crm/db';
import { eventTraceFields, isEventOf, type EventEnvelope } from '@crm/events';
import type { Logger } from '@crm/logger';
import * as audit from '../db/audit-log.repo';
import { fromEvent } from '../domain/audit';
import { isUuid } from '@crm/validation';

/**
 * audit.recorded from any service → one audit_log row. The consumer runs this in the transaction that claims
 * the event id, and the row's id is the event id too, so a redelivered event never adds a second entry.
 */
export function auditRecordedHandler(log: Logger) {
  return async (event: EventEnvelope, db: PoolClient): Promise<void> => {
    // Data parsed by its schema (parseData): one that does not fit was dead-lettered with the fields named.
    if (!isEventOf(event, 'audit.recorded')) return;
    const entry = fromEvent(event.data);
    if (!isUuid(event.orgId) || !entry) {
      // Retrying cannot make it valid; the warning is the trace of a producer bug.
      log.warn(
        { eventId: event.id, orgId: event.orgId, ...eventTraceFields(event) },
        'audit.recorded without an organization or with an action that is not <resource>.<verb>; ignored',
      );
      return;
    }
    const occurred = Date.parse(event.occurredAt);
    await audit.insertEntry(db, event.orgId, entry, {
      id: event.id,
      createdAt: Number.isNaN(occurred) ? undefined : new Date(occurred).toISOString(),
    });
  };
}
