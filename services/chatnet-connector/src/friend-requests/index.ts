/** Friend requests an account sends (the `friend_requests` table), and their acceptance announced. */
export * as friendRequests from './friend-requests';
export { acceptedOffline, recordAccepted, sendHere, toFriendRequest } from './friend-requests';
export { find as findFriendRequest } from './friend-requests.repo';
