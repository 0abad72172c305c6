import { runService } from '@crm/telemetry';
import { loadConfig } from './config';

// The app module is imported only after tracing starts, so the instrumentations can patch what it loads.
// The gateway carries each request's trace context explicitly (http/tracing.ts), so it needs AsyncLocalStorage
// only to record spans for an exporter.
runService('gateway', loadConfig, () => import('./app'), { activeContext: 'when-exporting' });
