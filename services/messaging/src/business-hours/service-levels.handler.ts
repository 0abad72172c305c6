import type { HandlersFor } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as businessHours from './business-hours';

/** messaging.v1.ServiceLevelsService: decode, call the use case, return; errors are mapped by grpc-kit. */
export function serviceLevelsHandlers(deps: Deps): HandlersFor<'messaging.v1.ServiceLevelsService'> {
  return {
    GetBusinessHours: (req, ctx) => businessHours.get(deps, ctx, req),
    SetBusinessHours: (req, ctx) => businessHours.set(deps, ctx, req),
    GetBusinessHoursStatus: (req, ctx) => businessHours.status(deps, ctx, req),
  };
}
