import {
  createServiceClient,
  decodeRemoteError,
  type GrantKeeper,
  type GrpcTransport,
  InternalAuth,
  type LbPolicy,
  type ClientFor,
  loadProto,
  serviceDefinition,
  status,
} from '@crm/grpc-kit';

/** What the connector says about a number: on the network or not, or that it could not be asked yet. */
export type PhoneAnswer = { kind: 'found' } | { kind: 'not_found' } | { kind: 'no_connected_account' } | { kind: 'failed'; reason: string };

export interface PhoneDirectory {
  lookup(orgId: string, phone: string, requestId: string): Promise<PhoneAnswer>;
  close(): void;
}

/**
 * connector.v1.ConnectorService/LookupPhone under a short deadline, acting for the org (no user: the check is
 * crm's own). Never throws: every failure is an answer the worker can act on.
 */
export function connectorPhoneDirectory(
  addr: string,
  auth: InternalAuth,
  deadlineMs: number,
  lbPolicy: LbPolicy,
  transport: GrpcTransport,
  /** The phone-check worker acts on its own: its look-ups go out under the org's grant (#27). */
  grants: Pick<GrantKeeper, 'vouch'>,
): PhoneDirectory {
  let client: ClientFor<'connector.v1.ConnectorService'> | undefined;
  const get = () =>
    (client ??= createServiceClient(
      serviceDefinition(loadProto('connector/v1/connector.proto'), 'connector.v1.ConnectorService'),
      addr,
      auth,
      deadlineMs,
      lbPolicy,
      transport,
    ));
  return {
    async lookup(orgId, phone, requestId) {
      try {
        const res = await get().LookupPhone({ phone }, await grants.vouch({ orgId, requestId }), { deadlineMs });
        return res.found ? { kind: 'found' } : { kind: 'not_found' };
      } catch (err) {
        const r = decodeRemoteError(err as Parameters<typeof decodeRemoteError>[0]);
        if (r.code === 'no_connected_account') return { kind: 'no_connected_account' };
        // Not a number the network can have (the connector reads numbers as crm does: 5 to 15 digits).
        if (r.grpcCode === status.INVALID_ARGUMENT) return { kind: 'not_found' };
        return { kind: 'failed', reason: r.code };
      }
    },
    close: () => client?.close(),
  };
}
