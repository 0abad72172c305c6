import { Router } from 'express';
import { z } from 'zod';
import type { RouteDeps, ServiceRoutes } from './deps';
import { reportOut } from './reports.out';
import { ctxOf } from '../http/principal';
import { body, pageParams } from '../http/validate';

// Shapes only; crm owns the rules (metric and dimension names, filter fields and operators, date range).
const names = (what: string) =>
  z
    .array(z.string({ error: `must be an array of ${what} names` }), { error: `must be an array of ${what} names` })
    .max(20, 'must have at most 20 entries');
export const NewReport = z.object({
  name: z.string({ error: 'is required' }),
  metrics: names('metric'),
  dimensions: names('dimension').optional(),
  dateFrom: z.string({ error: 'is required' }),
  dateTo: z.string({ error: 'is required' }),
  filters: z.array(z.unknown(), { error: 'must be an array of {field, operator, value}' }).optional(),
});

/** Custom reports (crm's ReportsService): create, list, status, CSV download. */
export function reportsRoutes({ clients }: RouteDeps): ServiceRoutes {
  const r = Router();
  const reports = () => clients.crmReports;

  r.post('/analytics/custom', async (req, res) => {
    const { filters, ...b } = body(req, NewReport);
    const report = await reports().CreateReport(
      { ...b, dimensions: b.dimensions ?? [], filtersJson: JSON.stringify(filters ?? []) },
      ctxOf(req, res),
    );
    res.status(201).json(reportOut(report));
  });
  r.get('/analytics/custom', async (req, res) => {
    const out = await reports().ListReports(pageParams(req, 20), ctxOf(req, res));
    res.json({ data: out.data.map(reportOut), pagination: out.pagination });
  });
  r.get('/analytics/custom/:id', async (req, res) => {
    res.json(reportOut(await reports().GetReport({ id: req.params.id }, ctxOf(req, res))));
  });
  r.get('/analytics/custom/:id/download', async (req, res) => {
    const file = await reports().DownloadReport({ id: req.params.id }, ctxOf(req, res));
    res
      .status(200)
      .type('text/csv; charset=utf-8')
      // crm makes the name ASCII letters, digits and dashes, so it needs no quoting rules beyond these quotes.
      .set('Content-Disposition', `attachment; filename="${file.filename}"`)
      .set('Cache-Control', 'private, no-store')
      .send(file.csv);
  });

  return { internal: r };
}
