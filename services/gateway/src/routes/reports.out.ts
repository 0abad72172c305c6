import type { z } from 'zod';
import type { crm } from '@crm/proto-types';
import type { Report as ReportOut } from './reports.schemas';

type Report = crm.Report__Output;

/** The download is a gateway path (bearer auth like every internal route), never a bare storage URL. */
const downloadUrl = (id: string) => `/api/v1/analytics/custom/${id}/download`;

export function reportOut(r: Report): z.input<typeof ReportOut> {
  return {
    id: r.id,
    name: r.name,
    status: r.status as z.input<typeof ReportOut>['status'],
    createdAt: r.createdAt,
    downloadUrl: downloadUrl(r.id),
    completedAt: r.completedAt ?? null,
    error: r.error ?? null,
    rowCount: r.rowCount ?? null,
    metrics: r.metrics,
    dimensions: r.dimensions,
    dateFrom: r.dateFrom,
    dateTo: r.dateTo,
    filters: JSON.parse(r.filtersJson || '[]') as unknown[],
    createdBy: r.createdBy ?? null,
  };
}
