import { GrpcServer, HandlersFor, loadProto, serviceDefinition } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { ReportWorker } from './report-worker';
import * as reports from './reports';
import { identityUserNames } from './user-names';

/** crm.v1.ReportsService: decode, call the domain, return; errors are mapped by grpc-kit. */
export function reportsHandlers(deps: Deps): HandlersFor<'crm.v1.ReportsService'> {
  return {
    CreateReport: (req, ctx) => reports.create(deps, ctx, req),
    ListReports: (req, ctx) => reports.list(deps, ctx, req),
    GetReport: (req, ctx) => reports.get(deps, ctx, req.id),
    DownloadReport: (req, ctx) => reports.download(deps, ctx, req.id),
  };
}

/**
 * Custom reports in one place for app.ts: the gRPC service on `server`, and the background worker (when
 * REPORTS_WORKER is on) started and stopped with the service.
 */
export function reportsFeature(deps: Deps, server: GrpcServer) {
  server.add(serviceDefinition(loadProto('crm/v1/reports.proto'), 'crm.v1.ReportsService'), reportsHandlers(deps));
  const { config } = deps;
  const users = identityUserNames(deps.identity);
  const worker = config.REPORTS_WORKER
    ? new ReportWorker(deps, users, {
        pollMs: config.REPORT_POLL_MS,
        concurrency: config.REPORT_CONCURRENCY,
        leaseMs: config.REPORT_LEASE_MS,
        maxRows: config.REPORT_MAX_ROWS,
      })
    : undefined;
  return {
    start: async () => worker?.start(),
    stop: async () => worker?.stop(),
  };
}
