/**
 * Auto-close (issue #29 item 3): an active or pending conversation whose last message is ours closes after the org's
 * `autoCloseAfterMinutes` idle, its `autoCloseMessage` sent first. A due row per conversation (migration 029): armed
 * by a send, removed when the contact writes, re-planned when the setting changes. The rest of messaging uses this
 * face; the worker that closes them (it sends, so it sits above send) is auto-close-worker.
 */
export { arm as armAutoClose, disarm as disarmAutoClose, replan as replanAutoClose } from './repo';
export * as autoCloseDue from './repo';
