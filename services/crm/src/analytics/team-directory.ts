import { AppError, CallContext, decodeRemoteError, invalid, status } from '@crm/grpc-kit';
import type { IdentityChannel } from '../clients';

const PAGE = 500;

export interface TeamMember {
  id: string;
  fullName: string;
  status: string;
}

/** The organization's users, from identity's ListUsers (the users live there, not in crm). */
export interface TeamDirectory {
  members(ctx: CallContext, department?: string): Promise<TeamMember[]>;
}

export function identityTeamDirectory(identity: IdentityChannel): TeamDirectory {
  const get = () => identity.get();
  return {
    async members(ctx, department) {
      // Only the organization matters to identity's ListUsers; API-key callers have no user id.
      const meta = {
        orgId: ctx.orgId,
        userId: ctx.userId,
        role: ctx.role,
        requestId: ctx.requestId,
        origin: ctx.origin,
        traceparent: ctx.traceparent,
      };
      const out: TeamMember[] = [];
      try {
        for (let page = 1; ; page++) {
          const res = await get().ListUsers({ page, limit: PAGE, department: department || undefined }, meta);
          out.push(...res.data.map((u) => ({ id: u.id, fullName: u.fullName, status: u.status })));
          if (page >= (res.pagination?.pages ?? 0)) return out;
        }
      } catch (err) {
        // Only a transport failure is "unavailable": identity refusing the department is the caller's 400.
        const e = decodeRemoteError(err as { code?: number });
        if (e.grpcCode === status.INVALID_ARGUMENT) throw invalid('departmentId', e.details?.[0]?.message ?? 'is not a valid department');
        if (e.grpcCode === status.UNAVAILABLE || e.grpcCode === status.DEADLINE_EXCEEDED) {
          throw new AppError('unavailable', 'Cannot list the team now: the identity service is unavailable');
        }
        throw err;
      }
    },
  };
}
