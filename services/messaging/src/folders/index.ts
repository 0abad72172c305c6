/** Folders a conversation can be filed in. */
export * as folders from './folders';
export { addConversations as addConversationsToFolder, get as findFolder } from './folders.repo';
