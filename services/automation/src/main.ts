import { runService } from '@crm/telemetry';
import { loadConfig } from './config';

// The app module is imported only after tracing starts, so the instrumentations can patch what it loads.
// 'when-exporting': the service passes its trace context explicitly (a handler's ctx.traceparent, a consumed event's
// eventTraceparent in the notifications, calls and audit entries it causes, traceFields / eventTraceFields for its log
// lines; runs, timers and campaign sends start traces of their own), so unless spans are exported it runs without
// AsyncLocalStorage, whose promise hooks tax every promise in the process (every event of its shared queue).
runService('automation', loadConfig, () => import('./app'), { activeContext: 'when-exporting' });
