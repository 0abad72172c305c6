/** GET /api/v1/messages/search: messages by their words, best match first (README "Search"). */
export { searchMessages } from './message-search';
