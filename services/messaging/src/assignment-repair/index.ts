/**
 * Assignment that repairs itself (issue #29 item 5): users' availability as identity announces it, reply timers that
 * reassign, unassign or tell the team leads when an assignee leaves a customer waiting, the backlog handed to whoever
 * gets capacity back, and a deactivated or offline user's conversations released to their account's mode. Every move
 * publishes conversation.assigned with assignedBy null and its reason. The rest of messaging uses this face.
 */
export { notOnline as usersNotOnline } from './availability.repo';
export { REPAIR_BINDINGS, repairKey, applyRepairBatch } from './repair.consumer';
export { ReplyTimer } from './reply-timer';
