/** A conversation's status (active, pending, snoozed, closed): its changes, their event, and the snooze wake-up. */
export * as status from './status';
export { applyStatus, parseSnoozedUntil, setStatus, startSnoozeWaker, statusChangedData, wakeSnoozed } from './status';
