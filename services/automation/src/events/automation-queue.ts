import { type QueueShare } from '@crm/events';
import type { Deps } from '../deps';
import { REPLY_BINDINGS, repliesHandler, repliesQueue, SEEN_BINDINGS, seenHandler, seenQueue } from '../campaigns';
import { prepareTriggers, TRIGGER_BINDINGS, triggerHandler, triggersQueue, type TriggerPrep } from './triggers.consumer';

/**
 * automation's one queue (issue #28, CPU per message): rule triggers, campaign replies and read receipts used to have
 * a queue each, so every `message.received` cost the broker two copies and this service two deliveries and two
 * commits. Now they share the triggers queue (it keeps its name, its backlog and its processed_events rows), each a
 * share with its own processed_events rows under its old queue's name: exactly once per share, and a share that
 * fails on an event is retried alone (packages/events queue-shares.ts).
 */
export function automationQueue(exchange: string): string {
  return triggersQueue(exchange);
}

export function automationShares(deps: Deps): QueueShare[] {
  const exchange = deps.config.EVENTS_EXCHANGE;
  const triggers: QueueShare<TriggerPrep> = {
    name: triggersQueue(exchange),
    bindings: TRIGGER_BINDINGS,
    // The contacts rules ask about come from crm before the transaction, and the events nothing listens to are found.
    prepare: (events) => prepareTriggers(deps, events),
    apply: triggerHandler(deps),
    idle: (event, prep) => prep?.idle.has(event.id) ?? false,
  };
  return [
    triggers,
    { name: repliesQueue(exchange), bindings: REPLY_BINDINGS, apply: repliesHandler(deps) },
    { name: seenQueue(exchange), bindings: SEEN_BINDINGS, apply: seenHandler(deps) },
  ];
}

/** What the queue is bound to: every share's events. */
export function automationBindings(shares: QueueShare[]): string[] {
  return [...new Set(shares.flatMap((s) => s.bindings))];
}
