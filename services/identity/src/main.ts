import { runService } from '@crm/telemetry';
import { loadConfig } from './config';

// The app module is imported only after tracing starts, so the instrumentations can patch what it loads.
// 'when-exporting': the service passes its trace context explicitly (a handler's ctx.traceparent, a consumed
// event's trace fields), so unless spans are exported it runs without AsyncLocalStorage, whose promise hooks
// tax every promise (~10% of its CPU per GET /api/v1/profile, bench/RESULTS.md, gateway).
runService('identity', loadConfig, () => import('./app'), { activeContext: 'when-exporting' });
