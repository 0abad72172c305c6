import type { HandlersFor } from '@crm/grpc-kit';
import type { AnalyticsDeps } from './deps';
import { conversionFunnel } from './funnel';
import { responseTime } from './response-time';
import { teamPerformance } from './team-performance';

/** crm.v1.AnalyticsService: decode, call the analytics queries, return; errors are mapped by grpc-kit. */
export function analyticsHandlers(deps: AnalyticsDeps): HandlersFor<'crm.v1.AnalyticsService'> {
  return {
    ConversionFunnel: (req, ctx) => conversionFunnel(deps, ctx, req),
    TeamPerformance: (req, ctx) => teamPerformance(deps, ctx, req),
    ResponseTime: (req, ctx) => responseTime(deps, ctx, req),
  };
}
