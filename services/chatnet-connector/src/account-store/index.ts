/**
 * The `chatnet_accounts` table: its rows and their SQL, and how its encrypted columns (session data, proxy URL) are
 * bound to their org and account. The accounts API and the session pool both build on it.
 */
export * as accountRows from './accounts.repo';
export { type AccountRow, type AccountStatus, connectedAccountIds, countToKeepAlive } from './accounts.repo';
export { aad } from './secret-binding';
