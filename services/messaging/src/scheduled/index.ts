/**
 * Scheduled messages (issue #26): a message stored now and sent into its conversation at `sendAt` by the timer
 * facility, exactly once across instances and restarts, as an ordinary send. The rest of messaging uses this face.
 */
export {
  create as scheduleMessage,
  list as listScheduledMessages,
  get as getScheduledMessage,
  update as updateScheduledMessage,
  cancel as cancelScheduledMessage,
} from './schedule';
export { ScheduledSender, outcomeOf as sendOutcomeOf } from './sender';
/** The contact wrote: waiting cancelIfReplied messages of their conversations are cancelled (customer_replied). */
export { cancelReplied as cancelScheduledOnReply, type ContactWrote } from './repo';
