/**
 * The network behind one interface: the `ChatnetDriver` contract every driver implements, the sandbox network's
 * drivers (in this process, or the standalone network over WebSocket), and what any driver uses to reach the outside
 * (an account's proxy, inbound media downloads). The real network's driver is zca/, loaded only when chosen.
 */
export * from './driver';
export { networkMessageId, networkUid, SandboxDriver, SandboxNetwork } from './sandbox.driver';
export { RemoteSandboxDriver } from './remote-sandbox.driver';
export { RemoteSandboxLive, type SandboxLive } from './sandbox-live';
export {
  CLIENT_PATH,
  type ClientFrame,
  fileFromWire,
  LIVE_ACTIONS,
  type LiveAction,
  type NetworkFrame,
  type NewsKind,
  reviveMessage,
  reviveReaction,
  reviveReceipt,
  reviveRecall,
  type WireFile,
} from './sandbox-wire';
export { networkPhoneDigits } from './phone-digits';
export { dialThrough } from './proxy-dialer';
export { type InboundMedia, MediaDownloads, MediaRefusedError } from './media-download';
