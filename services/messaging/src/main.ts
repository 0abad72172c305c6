import { runService } from '@crm/telemetry';
import { loadConfig } from './config';

// The app module is imported only after tracing starts, so the instrumentations can patch what it loads.
// 'when-exporting': the service passes its trace context explicitly (a handler's ctx.traceparent, a consumed event's
// eventTraceparent, down to the events it enqueues and the calls it makes), so unless spans are exported it runs
// without AsyncLocalStorage, whose promise hooks tax every promise (~9-17% of a service's CPU, bench/RESULTS.md).
runService('messaging', loadConfig, () => import('./app'), { activeContext: 'when-exporting' });
