/** The sandbox network as its own process (main.ts here): clients connect over WebSocket, contacts push over HTTP. */
export { startSandboxNetwork } from './app';
export { loadSandboxConfig, type SandboxNetworkConfig } from './config';
