import { GrpcServer, loadProto, serviceDefinition } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { serviceLevelsHandlers } from './service-levels.handler';

/**
 * Service levels (issue #29): business hours of the org and of an account, whether they are open now, SLA policies
 * and the account each applies to, and open-time arithmetic (due times that skip closed hours) for the rest of
 * messaging. The rest of messaging uses this face.
 */
export { hoursFor as businessHoursFor } from './business-hours';
export { applySlaEvents, slaEventKey, slaEventsToApply, reapplySla } from './conversation-sla';
export { SlaBreachTimer } from './sla-breach';
export { addOpenMinutes, openMsBetween, statusAt as businessHoursStatusAt, type BusinessHours } from './schedule';

/** As app.ts wires it: messaging.v1.ServiceLevelsService on the service's gRPC server. */
export function serviceLevelsFeature(deps: Deps, server: GrpcServer): void {
  server.add(serviceDefinition(loadProto('messaging/v1/service-levels.proto'), 'messaging.v1.ServiceLevelsService'), serviceLevelsHandlers(deps));
}
