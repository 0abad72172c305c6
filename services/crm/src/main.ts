import { runService } from '@crm/telemetry';
import { loadConfig } from './config';

// The app module is imported only after tracing starts, so the instrumentations can patch what it loads.
// 'when-exporting': the service passes its trace context explicitly (a handler's ctx.traceparent to the events it
// enqueues, the calls it makes and the lines it logs; a consumed event's eventTraceparent / eventTraceFields), so
// unless spans are exported it runs without AsyncLocalStorage, whose promise hooks tax every promise it makes.
runService('crm', loadConfig, () => import('./app'), { activeContext: 'when-exporting' });
