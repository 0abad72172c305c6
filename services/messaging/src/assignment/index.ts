/**
 * Who answers a conversation: the account's assignment settings (mode, listed users, limits), round robin, the
 * manual assignment and its rights, the owners snapshot, and assignment that repairs itself (issue #29 item 5,
 * repair/): users' availability as identity announces it, reply timers that reassign, unassign or tell the team
 * leads when an assignee leaves a customer waiting, the backlog handed to whoever gets capacity back, and a
 * deactivated or offline user's conversations released to their account's mode. Every automatic move publishes
 * conversation.assigned with assignedBy null and its reason. The rest of messaging uses this face.
 */
export * as assignmentSettings from './assignment-settings';
export { listedUsers as listedAssignmentUsers } from './assignments.repo';
export * as ownership from './ownership';
export { checkMayAssign } from './ownership';
export { assignByRotation, assignRoundRobin, autoAssignNew, warmRotation } from './round-robin';
export { publishOwnersSnapshotOnce } from './owners-snapshot';
export { REPAIR_BINDINGS, repairKey, applyRepairBatch, repairWork, type RepairWork } from './repair/repair.consumer';
export { ReplyTimer } from './repair/reply-timer';
