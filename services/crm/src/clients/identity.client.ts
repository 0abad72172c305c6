import { AppError, CallContext, createServiceClient, decodeRemoteError, invalid, loadProto, ServiceClient, serviceDefinition, status } from '@crm/grpc-kit';

export interface UserDirectory {
  /** 400 naming `field` unless `userId` is an active user of the caller's organization. */
  assertAssignable(ctx: CallContext, userId: string, field: string): Promise<void>;
  close(): void;
}

export function identityDirectory(addr: string, deadlineMs: number): UserDirectory {
  let client: ServiceClient | undefined;
  const get = () =>
    (client ??= createServiceClient(serviceDefinition(loadProto('identity/v1/identity.proto'), 'identity.v1.IdentityService'), addr, deadlineMs));
  return {
    async assertAssignable(ctx, userId, field) {
      let user: { status: string };
      try {
        user = await get().GetUser({ id: userId }, { orgId: ctx.orgId, userId: ctx.userId, role: ctx.role, requestId: ctx.requestId });
      } catch (err) {
        const e = decodeRemoteError(err as { code?: number });
        if (e.grpcCode === status.NOT_FOUND) throw invalid(field, 'is not a user of this organization');
        throw new AppError('unavailable', `Cannot check ${field} now: the identity service is unavailable`);
      }
      if (user.status !== 'active') throw invalid(field, 'is not an active user of this organization');
    },
    close: () => client?.close(),
  };
}
