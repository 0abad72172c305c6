/**
 * The chat-network accounts of an organization: list, create, QR login, reconnect, status, proxy, delete; and the
 * account a call names, loaded for the caller's org (every other request starts with it).
 */
export * as accounts from './accounts';
export { type LiveStatus, liveStatusOf, loadAccount } from './accounts';
