import { EventConsumer, isEventOf, type EventEnvelope, type EventStampVerifier } from '@crm/events';
import type { PoolClient } from '@crm/db';
import type { Deps } from '../deps';
import { convs, messages, EVENTS } from '../conversations';
import { applyContactMerged, applyContactMergeUndone, mergeEventKey, applyContactLink, prepareContactLinks, type ContactLinks } from '../contacts';
import { prepareInbound, storeInboundBatch, type InboundPrepared, recordSeen } from '../inbox';
import { recordReaction, recordRecall } from '../reactions';
import { applyRepairBatch, REPAIR_BINDINGS, repairKey, repairWork, type RepairWork } from '../assignment';
import { applySlaEvents as applySlaBatch, slaEventKey, slaEventsToApply } from '../service-levels';
import { applyAutoReplySettings, AUTO_REPLY_SETTINGS_BINDINGS } from '../ai-auto-reply';

/**
 * How long the bookkeeping consumers of every message (SLA clocks, reply timers) gather news before one commit.
 * Nobody waits on them (their clocks count minutes), and without it each lane took its events one at a time at any
 * rate a lane keeps up with: 0.8 of messaging's 1.8 commits per message at 200 msg/s (bench/RESULTS.md, realtime).
 */
const BOOKKEEPING_FLUSH_MS = 100;

/**
 * How long an inbound lane gathers messages before its batch (up to 100) is stored. Each batch costs about ten
 * statements whatever its size; at 200 msg/s of known contacts over four lanes, 5 ms made batches of under two and
 * 25 ms cut messaging's CPU by 7% and its PostgreSQL's by 11%, and the delivery p50 from 93 to 77 ms and p99 from 183
 * to 165 ms (less contention on the 2 cores outweighs the wait; bench/realtime, one run each, same code otherwise).
 */
const INBOUND_FLUSH_MS = 25;

/** What the SLA clocks follow: our own messages and status changes. */
const SLA_BINDINGS = [EVENTS.messageReceived, EVENTS.messageSent, EVENTS.conversationStatusChanged];

/**
 * The consumers of this service. Each has its own durable queue named after the exchange (the SLA clocks and the
 * reply timers share one, as shares with their own processed_events rows), so two
 * deployments on one broker never steal each other's messages; with the pool, an event takes effect once.
 * `stamps` (this process's InternalAuth) checks the stamps of the events whose handlers call crm for them.
 */
export function createConsumers(deps: Deps, stamps: EventStampVerifier): EventConsumer[] {
  const { config, pool, log, metrics } = deps;
  // `pool` is given at each consumer, not here: from it the options' type knows that the handler gets a client.
  const common = {
    amqpUrl: config.AMQP_URL,
    amqpUserPrefix: config.AMQP_USER_PREFIX,
    exchange: config.EVENTS_EXCHANGE,
    metrics,
    maxAttempts: config.EVENT_MAX_ATTEMPTS,
    retryDelaysMs: config.EVENT_RETRY_DELAYS_MS,
    // Handlers get data parsed by its schema; data that does not fit is dead-lettered at once with the fields named.
    parseData: true,
  };
  const slaQueue = `${config.EVENTS_EXCHANGE}.messaging.sla`;
  const repairQueue = `${config.EVENTS_EXCHANGE}.messaging.assignment-repair`;
  const applySlaEvents = (events: EventEnvelope[], db: PoolClient) => applySlaBatch(deps, db, events);
  return [
    // chatnet.inbound → contact, conversation, message, message.received. Batches of up to 100 in one
    // transaction each; INBOUND_CONCURRENCY lanes in parallel, one conversation always in the same lane, so
    // its messages are stored in the order they were delivered.
    new EventConsumer({
      ...common,
      pool,
      queue: `${config.EVENTS_EXCHANGE}.messaging.inbound`,
      bindings: [EVENTS.chatnetInbound],
      logger: log.child({ consumer: 'inbound' }),
      prefetch: Math.max(200, config.INBOUND_CONCURRENCY * 25),
      concurrency: config.INBOUND_CONCURRENCY,
      batchKey: threadKey,
      // crm is asked before the batch's transaction opens, never inside it, under each event's stamp (the connector's).
      stamps,
      batchPrepare: (events) => prepareInbound(deps, events),
      batchFlushMs: INBOUND_FLUSH_MS,
      batchHandler: (events, db, prepared: InboundPrepared) => storeInboundBatch(deps, db, events, prepared),
    }),
    // chatnet.seen (read receipts) → outbound messages seen, message.seen; chatnet.recalled and chatnet.reaction →
    // message.recalled, message.reaction. The news of one thread in order. Each handler passes its event's trace on
    // explicitly (eventTraceparent, eventTraceFields): the service runs without an active context (main.ts).
    new EventConsumer({
      ...common,
      pool,
      queue: `${config.EVENTS_EXCHANGE}.messaging.seen`,
      bindings: [EVENTS.chatnetSeen, EVENTS.chatnetRecalled, EVENTS.chatnetReaction],
      logger: log.child({ consumer: 'seen' }),
      concurrency: 4,
      batchKey: threadKey,
      batchHandler: async (events, db) => {
        for (const event of events) {
          if (isEventOf(event, 'chatnet.seen')) await recordSeen(deps, db, event);
          else if (isEventOf(event, 'chatnet.recalled')) await recordRecall(deps, db, event);
          else if (isEventOf(event, 'chatnet.reaction')) await recordReaction(deps, db, event);
        }
      },
    }),
    // A conversation (or a group sender's messages) stored while crm was unreachable: link the contact, retried with
    // backoff until crm answers.
    new EventConsumer({
      ...common,
      pool,
      queue: `${config.EVENTS_EXCHANGE}.messaging.contact-link`,
      bindings: [EVENTS.contactLink],
      logger: log.child({ consumer: 'contact-link' }),
      // crm is asked before the batch's transaction opens; a crm that does not answer fails it, and it is retried.
      batchPrepare: (events) => prepareContactLinks(deps, events),
      batchHandler: async (events, db, links: ContactLinks) => {
        for (const event of events) await applyContactLink(deps, db, event, links);
      },
    }),
    // Keep the copy of contact name, avatar and phone in conversations fresh; follow crm's contact merges.
    new EventConsumer({
      ...common,
      pool,
      queue: `${config.EVENTS_EXCHANGE}.messaging.contacts`,
      bindings: [EVENTS.contactUpdated, EVENTS.contactDeleted, EVENTS.contactMerged, EVENTS.contactMergeUndone],
      logger: log.child({ consumer: 'contacts' }),
      concurrency: 4,
      // An update and a delete of one contact must apply in the order they were published; a merge in order with
      // its target's updates (the copy it writes is the target's at merge time).
      batchKey: contactKey,
      batchHandler: async (events, db) => {
        for (const event of events) await applyContactEvent(deps, db, event);
      },
    }),
    // The bookkeeping of every message on one queue (issue #28, CPU per message), each a share with its own
    // processed_events rows: our own messages and status changes → the conversations' SLA clocks (issue #29 item 2);
    // assignment that repairs itself: reply timers from the same events, the backlog when a conversation closes, and
    // identity's availability and deactivation announcements (assignment/repair/). A conversation's news in order (its
    // SLA clock and its timer both follow it), batches of them in one transaction each.
    new EventConsumer({
      ...common,
      pool,
      queue: repairQueue,
      bindings: [...new Set([...SLA_BINDINGS, ...REPAIR_BINDINGS])],
      logger: log.child({ consumer: 'bookkeeping' }),
      // One lane, as the inbound consumer: lanes split the stream into smaller batches, each with its own claim and
      // commit, and these clocks need no parallelism (bench/RESULTS.md realtime, session 31).
      concurrency: 1,
      batchFlushMs: BOOKKEEPING_FLUSH_MS,
      batchKey: repairKey,
      // Each share asks before the transaction which of its events have work (one read each): messages on accounts
      // with no SLA policy and no reply timeout, the usual case, then cost no transaction at all (QueueShare.idle).
      shares: [
        {
          name: slaQueue,
          bindings: SLA_BINDINGS,
          prepare: (events) => slaEventsToApply(deps, events),
          apply: (events, db, toApply: Set<string> | undefined) => applySlaBatch(deps, db, events, toApply),
          idle: (event, toApply: Set<string> | undefined) => toApply !== undefined && !toApply.has(event.id),
        },
        {
          name: repairQueue,
          bindings: REPAIR_BINDINGS,
          prepare: (events) => repairWork(deps, events),
          apply: (events, db, work: RepairWork | undefined) => applyRepairBatch(deps, db, events, work),
          idle: (event, work: RepairWork | undefined) => work?.skipped.has(event.id) ?? false,
        },
      ],
    }),
    // ai's auto-reply settings (issue #32 item 5) into messaging's copy: a rare event on a small queue of its own. The
    // guarded auto-reply itself takes no queue: the inbound batch queues its rows (ai-auto-reply/plan.ts).
    new EventConsumer({
      ...common,
      pool,
      queue: `${config.EVENTS_EXCHANGE}.messaging.ai-settings`,
      bindings: AUTO_REPLY_SETTINGS_BINDINGS,
      logger: log.child({ consumer: 'ai-settings' }),
      batchHandler: (events, db) => applyAutoReplySettings(db, events),
    }),
    // The SLA clocks' queue of older versions: unbound, and drained of what they left in it.
    new EventConsumer({
      ...common,
      pool,
      queue: slaQueue,
      draining: true,
      bindings: SLA_BINDINGS,
      logger: log.child({ consumer: 'sla' }),
      concurrency: 4,
      batchFlushMs: BOOKKEEPING_FLUSH_MS,
      batchKey: slaEventKey,
      batchHandler: applySlaEvents,
    }),
  ];
}

/** One conversation (or thread without one yet) of the chat network: the order that must be kept. */
function threadKey(event: EventEnvelope): string {
  if (!isEventOf(event, 'chatnet.inbound', 'chatnet.seen', 'chatnet.recalled', 'chatnet.reaction')) return '';
  const d = event.data;
  // parseInbound falls back to the sender for an empty threadId; the key must follow it.
  const threadId = d.threadId || ('fromUid' in d ? d.fromUid : '');
  return `${event.orgId}|${d.accountId}|${d.threadType}|${threadId}`;
}

/** The contact an event is about: a merge goes with its target's updates (see mergeEventKey). */
function contactKey(event: EventEnvelope): string {
  if (isEventOf(event, 'contact.merged', 'contact.merge_undone')) return mergeEventKey(event);
  if (isEventOf(event, 'contact.updated')) return event.data.contact.id;
  if (isEventOf(event, 'contact.deleted')) return event.data.id;
  return '';
}

async function applyContactEvent(deps: Deps, db: PoolClient, event: EventEnvelope): Promise<void> {
  if (isEventOf(event, 'contact.merged')) return applyContactMerged(deps, db, event);
  if (isEventOf(event, 'contact.merge_undone')) return applyContactMergeUndone(deps, db, event);
  if (isEventOf(event, 'contact.deleted')) {
    const { id } = event.data;
    await convs.unlinkContact(db, event.orgId, id);
    await messages.unlinkSenderContact(db, event.orgId, id);
    deps.senderContacts.forgetContact(event.orgId, id);
    return;
  }
  if (!isEventOf(event, 'contact.updated')) return;
  const c = event.data.contact;
  await convs.refreshContact(db, event.orgId, { id: c.id, name: c.name, avatar: c.avatar, phone: c.phone });
}
