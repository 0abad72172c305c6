/**
 * crm's contact merges and their undo, applied to automation's rows in the event's transaction: a merged contact's
 * rule runs and campaign recipients follow it to the target (one message per campaign per person), recorded per
 * merge so that the undo moves exactly those back. No Deps.
 */
export { applyContactMerged, applyContactMergeUndone } from './contact-merges';
