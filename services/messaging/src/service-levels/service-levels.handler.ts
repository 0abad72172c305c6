import type { HandlersFor } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as businessHours from './business-hours';
import * as slaPolicies from './sla-policies';
import { slaReport } from './sla-report';

/** messaging.v1.ServiceLevelsService: decode, call the use case, return; errors are mapped by grpc-kit. */
export function serviceLevelsHandlers(deps: Deps): HandlersFor<'messaging.v1.ServiceLevelsService'> {
  return {
    GetBusinessHours: (req, ctx) => businessHours.get(deps, ctx, req),
    SetBusinessHours: (req, ctx) => businessHours.set(deps, ctx, req),
    GetBusinessHoursStatus: (req, ctx) => businessHours.status(deps, ctx, req),
    ListBusinessHours: (_req, ctx) => businessHours.listAll(deps, ctx),
    ListSlaPolicies: (req, ctx) => slaPolicies.list(deps, ctx, req),
    GetSlaPolicy: (req, ctx) => slaPolicies.get(deps, ctx, req),
    CreateSlaPolicy: (req, ctx) => slaPolicies.create(deps, ctx, req),
    UpdateSlaPolicy: (req, ctx) => slaPolicies.update(deps, ctx, req),
    DeleteSlaPolicy: (req, ctx) => slaPolicies.remove(deps, ctx, req),
    GetAccountSla: (req, ctx) => slaPolicies.getAccount(deps, ctx, req),
    SetAccountSla: (req, ctx) => slaPolicies.setAccount(deps, ctx, req),
    GetSlaReport: (req, ctx) => slaReport(deps, ctx, req),
  };
}
