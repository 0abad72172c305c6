import { z } from 'zod';

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

/** A custom report (reports.out reportOut): the CSV is downloaded from `downloadUrl` once status is ready. */
export const Report = z.object({
  id: z.string(),
  name: z.string(),
  status: z.enum(['generating', 'ready', 'failed']),
  createdAt: z.string(),
  downloadUrl: z.string().meta({ description: 'a gateway path (bearer auth), /api/v1/analytics/custom/{id}/download' }),
  completedAt: z.string().nullable(),
  error: z.string().nullable(),
  rowCount: z.number().int().nullable(),
  metrics: z.array(z.string()),
  dimensions: z.array(z.string()),
  dateFrom: z.string(),
  dateTo: z.string(),
  filters: z.array(z.unknown()).meta({ description: '[{field, operator, value}]' }),
  createdBy: z.string().nullable(),
});
