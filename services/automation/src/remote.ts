import {
  AppError,
  CallContext,
  type ClientFor,
  createServiceClient,
  type GrantKeeper,
  type GrpcTransport,
  InternalAuth,
  loadProto,
  type ServiceName,
  serviceDefinition,
} from '@crm/grpc-kit';
import type { AutomationConfig } from './config';

/**
 * Clients of the services automation calls, created on first use: a deployment (or a checkout) without
 * crm or messaging still serves rules, templates and notifications, and only the actions that need the
 * missing service fail, with a clear "unavailable" that the run log shows and the runner retries.
 */
export interface Remote {
  identity(): ClientFor<'identity.v1.IdentityService'>;
  crm(): ClientFor<'crm.v1.CrmService'>;
  /** crm's tasks (the create_task action). */
  crmTasks(): ClientFor<'crm.v1.TaskService'>;
  messaging(): ClientFor<'messaging.v1.MessagingService'>;
  connector(): ClientFor<'connector.v1.ConnectorService'>;
  /**
   * The context of a call automation makes for an org on its own (a rule run, a campaign, a reminder, an email alert):
   * no user, the admin role (a rule an admin or team lead set up acts on their behalf), and the org's grant as the
   * call's origin (grants/). Throws a retryable `grant_missing` while the org has none.
   */
  actingFor(orgId: string, requestId: string): Promise<Partial<CallContext>>;
  close(): void;
}

export function createRemote(config: AutomationConfig, auth: InternalAuth, transport: GrpcTransport, grants: Pick<GrantKeeper, 'actingFor'>): Remote {
  const made: Array<{ close(): void }> = [];
  // One typed getter per service, so each client keeps its own service's request and response types.
  const lazy = <N extends ServiceName>(name: string, proto: string, service: N, address: string): (() => ClientFor<N>) => {
    let client: ClientFor<N> | undefined;
    return () => {
      if (client) return client;
      let ctor;
      try {
        ctor = serviceDefinition(loadProto(proto), service);
      } catch {
        throw new AppError('unavailable', `The ${name} service is not available (no contract ${proto})`);
      }
      client = createServiceClient(ctor, address, auth, config.GRPC_DEADLINE_MS, config.GRPC_LB_POLICY, transport);
      made.push(client);
      return client;
    };
  };
  return {
    identity: lazy('identity', 'identity/v1/identity.proto', 'identity.v1.IdentityService', config.IDENTITY_ADDR),
    crm: lazy('crm', 'crm/v1/crm.proto', 'crm.v1.CrmService', config.CRM_ADDR),
    crmTasks: lazy('crm', 'crm/v1/tasks.proto', 'crm.v1.TaskService', config.CRM_ADDR),
    messaging: lazy('messaging', 'messaging/v1/messaging.proto', 'messaging.v1.MessagingService', config.MESSAGING_ADDR),
    connector: lazy('chat connector', 'connector/v1/connector.proto', 'connector.v1.ConnectorService', config.CONNECTOR_ADDR),
    actingFor: (orgId, requestId) => grants.actingFor(orgId, requestId),
    close: () => made.forEach((c) => c.close()),
  };
}
