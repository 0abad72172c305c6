import { page } from './common.schemas';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import type { RouteDeps, ServiceRoutes } from './deps';
import { reportOut } from './reports.out';
import { NewReport, Report } from './reports.schemas';

/** Custom reports (crm's ReportsService): create, list, status, CSV download. Internal API (bearer). */
export const reportRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Reports' });
const reports = (deps: RouteDeps) => deps.clients.crmReports;

reportRoutes.route('POST /analytics/custom', {
  summary: 'Request a custom report (metrics by dimensions over a date range); it is generated in the background',
  body: NewReport,
  status: 201,
  response: Report,
  handler: async ({ body: { filters, ...b }, ctx, deps }) =>
    reportOut(await reports(deps).CreateReport({ ...b, dimensions: b.dimensions ?? [], filtersJson: JSON.stringify(filters ?? []) }, ctx)),
});
reportRoutes.route('GET /analytics/custom', {
  summary: 'The organization’s custom reports, newest first',
  paging: { limit: 20, max: 100 },
  response: page(Report),
  handler: async ({ page, ctx, deps }) => {
    const out = await reports(deps).ListReports(page, ctx);
    return { data: out.data.map(reportOut), pagination: out.pagination! };
  },
});
reportRoutes.route('GET /analytics/custom/:id', {
  summary: 'One report and whether it is ready',
  response: Report,
  handler: async ({ param, ctx, deps }) => reportOut(await reports(deps).GetReport({ id: param('id') }, ctx)),
});
reportRoutes.route('GET /analytics/custom/:id/download', {
  summary: 'The report as CSV (an attachment)',
  description: '409 while it is still generating; 422 when it failed.',
  response: 'csv',
  errors: [409, 422],
  handler: async ({ res, param, ctx, deps }) => {
    const file = await reports(deps).DownloadReport({ id: param('id') }, ctx);
    res
      .status(200)
      .type('text/csv; charset=utf-8')
      // crm makes the name ASCII letters, digits and dashes, so it needs no quoting rules beyond these quotes.
      .set('Content-Disposition', `attachment; filename="${file.filename}"`)
      .set('Cache-Control', 'private, no-store')
      .send(file.csv);
  },
});

export function reportsRoutes(deps: RouteDeps): ServiceRoutes {
  return { internal: reportRoutes.router(deps, responseContract(deps.config)) };
}
