import { runService } from '@crm/telemetry';
import { loadSandboxConfig } from './config';

// The simulated chat network as its own process: connectors reach it over HTTP and WebSocket as they reach the real one.
runService('chatnet-sandbox', loadSandboxConfig, () => import('./app'));
