import { runService } from '@crm/telemetry';
import { loadConfig } from './config';

// The app module is imported only after tracing starts, so the instrumentations can patch what it loads.
// 'when-exporting': the service passes its trace context explicitly (a handler's ctx.traceparent to the calls it makes
// and the events it enqueues; a login or reconnect keeps its call's for the events the network's answers cause later;
// the network's own news starts traces of its own), so unless spans are exported it runs without AsyncLocalStorage,
// whose promise hooks tax every promise in the process (every inbound message).
runService('chatnet-connector', loadConfig, () => import('./app'), { activeContext: 'when-exporting' });
