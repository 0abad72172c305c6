/**
 * The event queue `<exchange>.automation.triggers` (issue #28) as app.ts starts it: its shares (rule triggers here,
 * with the alerts, appointment reminders, contact merges and lead scores that ride on the same events; campaign
 * replies and read receipts from campaigns).
 */
export { automationBindings, automationQueue, automationShares } from './automation-queue';
export { triggersQueue } from './triggers.consumer';
