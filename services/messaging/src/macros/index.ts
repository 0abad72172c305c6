/**
 * Macros (issue #29): named lists of actions (send a message, add a note, assign, set status or priority, file in a
 * folder, snooze) that a user runs on a conversation, or on many through the bulk endpoint. The rest of messaging
 * uses this face.
 */
export { create as createMacro, list as listMacros, remove as deleteMacro, update as updateMacro } from './macros';
export { runMacro, runMacroOnMany } from './run';
