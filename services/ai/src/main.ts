import { runService } from '@crm/telemetry';
import { loadConfig } from './config';

// The app module is imported only after tracing starts, so the instrumentations can patch what it loads.
// 'when-exporting': the service passes its trace context explicitly (a handler's ctx to messaging and to the events and
// audit entries it enqueues, traceFields(ctx) for its log lines), so unless spans are exported it runs without
// AsyncLocalStorage, whose promise hooks tax every promise in the process.
runService('ai', loadConfig, () => import('./app'), { activeContext: 'when-exporting' });
