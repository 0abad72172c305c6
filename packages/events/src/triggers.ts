import type { EventType } from './schemas';

/**
 * The triggers an automation rule may start from, and the event each one listens to. A contract between the
 * gateway (which accepts them as a list filter) and automation (which stores and fires them), kept here beside
 * the event catalogue so the two can never accept different names and every trigger names a catalogued event.
 */
export const TRIGGER_TYPES = [
  'contact_created',
  'message_received',
  'conversation_created',
  'conversation_assigned',
  'conversation_reply_overdue',
  'conversation_status_changed',
  'conversation_priority_changed',
  'conversation_sla_breached',
  'conversation_csat_received',
  'appointment_created',
  'keyword',
  'conversation_note_created',
  'task_created',
  'task_completed',
  'task_due',
  'message_recalled',
  'message_reaction',
  'friend_request_accepted',
  // Not started by one event: automation's own timers fire them (a cron in a time zone; a conversation without a
  // message for some minutes, re-armed by message.received / message.sent).
  'schedule',
  'conversation_idle',
] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

/** Triggers fired by automation's timers rather than by one event of the catalogue. */
export const TIMED_TRIGGER_TYPES = ['schedule', 'conversation_idle'] as const satisfies readonly TriggerType[];
export type TimedTriggerType = (typeof TIMED_TRIGGER_TYPES)[number];

/** The event type each event-started trigger listens to. */
export const EVENT_OF_TRIGGER: Readonly<Record<Exclude<TriggerType, TimedTriggerType>, EventType>> = {
  contact_created: 'contact.created',
  message_received: 'message.received',
  conversation_created: 'conversation.created',
  conversation_assigned: 'conversation.assigned',
  conversation_reply_overdue: 'conversation.reply_overdue',
  conversation_status_changed: 'conversation.status_changed',
  conversation_priority_changed: 'conversation.priority_changed',
  conversation_sla_breached: 'conversation.sla_breached',
  conversation_csat_received: 'conversation.csat_received',
  appointment_created: 'appointment.created',
  keyword: 'message.received',
  conversation_note_created: 'conversation.note_created',
  task_created: 'task.created',
  task_completed: 'task.completed',
  task_due: 'task.due',
  message_recalled: 'message.recalled',
  message_reaction: 'message.reaction',
  friend_request_accepted: 'friend_request.accepted',
};
