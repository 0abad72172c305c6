/** Internal notes on a conversation, their @mentions, and the conversation timeline that interleaves them with messages. */
export * as notes from './notes';
export { mergeTimeline, notesBesidePage } from './timeline';
export { insertAssistantNote } from './assistant-notes';
