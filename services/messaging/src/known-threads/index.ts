/** Which chat-network threads already have a conversation, remembered by each instance. No Deps: deps.ts imports this. */
export { KnownThreads } from './known-threads';
