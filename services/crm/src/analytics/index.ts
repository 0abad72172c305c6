import { GrpcServer, loadProto, serviceDefinition } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import type { FamilyModule } from '../events';
import { analyticsEvents } from './analytics.consumer';
import { analyticsHandlers } from './analytics.handler';
import { identityTeamDirectory } from './team-directory';

export { type AnalyticsMergeRecord, foldContactAnalytics, unfoldContactAnalytics } from './contact-merge';

/**
 * Analytics as app.ts wires it: crm.v1.AnalyticsService on the service's gRPC server and the function that keeps
 * the read model current (run by the message and contact family consumers, in their transactions).
 */
export function analyticsFeature(deps: Deps, server: GrpcServer): { applyEvents: FamilyModule } {
  const { pool, log } = deps;
  const team = identityTeamDirectory(deps.identity);
  server.add(
    serviceDefinition(loadProto('crm/v1/analytics.proto'), 'crm.v1.AnalyticsService'),
    analyticsHandlers({ pool, log, team, businessHours: deps.businessHours }),
  );
  return { applyEvents: analyticsEvents(log) };
}
