/**
 * The sandbox network's control RPCs (the gateway's /sandbox routes: scan, inbound pushes with files, receipts, drops,
 * friends, phones, recalls, reactions), and the part of each that runs where the account's connection lives.
 */
export * as sandbox from './control';
export { runLocal, sandboxAction } from './control';
