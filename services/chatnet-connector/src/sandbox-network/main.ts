import { runService } from '@crm/telemetry';
import { loadSandboxConfig } from './config';

// The simulated chat network as its own process: connectors reach it over HTTP and WebSocket as they reach the real one.
// 'when-exporting': it reads no trace (a push's traceparent travels in the news it forwards, as data), so unless spans
// are exported it runs without AsyncLocalStorage, whose promise hooks tax every promise in the process.
runService('chatnet-sandbox', loadSandboxConfig, () => import('./app'), { activeContext: 'when-exporting' });
