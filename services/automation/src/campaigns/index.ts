/**
 * Campaigns, on the chat network and by email: the API (create, schedule, activate, pause, cancel, recipients), the
 * sender that takes a list's members as recipients and sends at the campaign's pace, the text of a campaign message,
 * replies and read receipts (two shares of the event queue, and the drained queues they had before), and email
 * campaigns (email/: composing, delivery, the suppression list, the public unsubscribe and open links).
 */
export * as campaigns from './campaigns';
export { CampaignSender } from './campaign-sender';
export { REPLY_BINDINGS, repliesHandler, repliesQueue } from './campaign-replies.consumer';
export { SEEN_BINDINGS, seenHandler, seenQueue } from './campaign-seen.consumer';
export * as suppressions from './email/suppressions';
export { draftsUsingTemplate } from './campaigns.repo';
