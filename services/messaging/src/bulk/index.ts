/** One action (status, assignee, folder, read state, macro…) on many conversations at once. */
export { bulkUpdate } from './bulk';
