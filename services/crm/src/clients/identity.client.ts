import {
  AppError,
  CallContext,
  createServiceClient,
  decodeRemoteError,
  type GrantKeeper,
  type GrpcTransport,
  InternalAuth,
  invalid,
  type LbPolicy,
  type ClientFor,
  loadProto,
  serviceDefinition,
  status,
} from '@crm/grpc-kit';

/** One lazily made gRPC client to identity for the whole service (assignee checks, report names, team lists). */
export interface IdentityChannel {
  get(): ClientFor<'identity.v1.IdentityService'>;
  close(): void;
}

/**
 * `grants`: a call that carries no request's origin (the report worker's) goes out under the org's grant (#27).
 */
export function identityChannel(
  addr: string,
  auth: InternalAuth,
  deadlineMs: number,
  lbPolicy: LbPolicy,
  transport: GrpcTransport,
  grants: Pick<GrantKeeper, 'vouching'>,
): IdentityChannel {
  let client: ClientFor<'identity.v1.IdentityService'> | undefined;
  return {
    get: () =>
      (client ??= grants.vouching(
        createServiceClient(
          serviceDefinition(loadProto('identity/v1/identity.proto'), 'identity.v1.IdentityService'),
          addr,
          auth,
          deadlineMs,
          lbPolicy,
          transport,
        ),
      )),
    close: () => client?.close(),
  };
}

export interface UserDirectory {
  /** 400 naming `field` unless `userId` is an active user of the caller's organization. */
  assertAssignable(ctx: CallContext, userId: string, field: string): Promise<void>;
}

export function identityDirectory(identity: IdentityChannel): UserDirectory {
  const get = () => identity.get();
  return {
    async assertAssignable(ctx, userId, field) {
      let user: { status: string };
      try {
        user = await get().GetUser(
          { id: userId },
          { orgId: ctx.orgId, userId: ctx.userId, role: ctx.role, requestId: ctx.requestId, origin: ctx.origin, traceparent: ctx.traceparent },
        );
      } catch (err) {
        const e = decodeRemoteError(err as { code?: number });
        // A malformed id identity refuses is as much "not a user" as an unknown one; only transport failures are 503.
        if (e.grpcCode === status.NOT_FOUND || e.grpcCode === status.INVALID_ARGUMENT) throw invalid(field, 'is not a user of this organization');
        if (e.grpcCode === status.UNAVAILABLE || e.grpcCode === status.DEADLINE_EXCEEDED) {
          throw new AppError('unavailable', `Cannot check ${field} now: the identity service is unavailable`);
        }
        throw err;
      }
      if (user.status !== 'active') throw invalid(field, 'is not an active user of this organization');
    },
  };
}
