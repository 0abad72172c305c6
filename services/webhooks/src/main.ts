import { runService } from '@crm/telemetry';
import { loadConfig } from './config';

// The app module is imported only after tracing starts, so the instrumentations can patch what it loads.
// 'when-exporting': the service passes its trace context explicitly (a delivery attempt's span, a handler's
// ctx.traceparent, a consumed event's eventTraceparent), so unless spans are exported it runs without
// AsyncLocalStorage, whose promise hooks cost ~9% of its CPU per delivered message (bench/RESULTS.md, realtime).
runService('webhooks', loadConfig, () => import('./app'), { activeContext: 'when-exporting' });
