/**
 * Conversation priority (issue #29): low, medium, high, urgent or none, set by users and automation's set_priority,
 * filtered and sorted on by the conversation list (conversations/conversations.repo.ts). The rest of messaging uses this face.
 */
export { setPriority } from './set-priority';
