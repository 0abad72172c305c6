/**
 * In-app notifications: their rows, the API that lists them and marks them read, and their creation under an id
 * derived from what caused them (a redelivered event makes none twice); the alerts raised on other services' events
 * (an inbound message, an @mention, a reply overdue, an SLA breach, a task due, a lead score crossing its threshold);
 * and the alert emails to users who opted in (their consumer and who receives them). Rules, campaigns, appointment
 * reminders and the trigger consumer use this face.
 */
export * as notifications from './notifications';
export { derivedId, type NotificationInput } from './notifications';
export { forgetLeadScore, recordLeadScore } from './notifications.repo';
export { inboundAlerts } from './inbound-alerts';
export { noteMentions } from './note-mentions';
export { replyOverdue } from './reply-overdue';
export { slaBreachAlerts } from './sla-breach-alerts';
export { taskDue } from './task-due';
export { AlertRecipients } from './alert-recipients';
export { EMAIL_ALERT_BINDINGS, emailAlertsHandler, emailAlertsQueue, prepareEmailAlerts, pruneEmailAlertsEvery } from './email-alerts.consumer';
