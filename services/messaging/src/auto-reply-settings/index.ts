/**
 * messaging's copy of ai's auto-reply settings (issue #32 item 5) and the accounts they name, held in memory (no Deps:
 * deps.ts imports it). The ai-auto-reply module and the rest of messaging use this face.
 */
export { AutoReplyAccounts } from './accounts';
export * as autoReplySettings from './settings.repo';
