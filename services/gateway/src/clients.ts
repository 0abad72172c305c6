import {
  type ClientFor,
  createServiceClient,
  type GrpcTransport,
  HealthChecker,
  type InternalAuth,
  loadProto,
  type ServiceName,
  serviceDefinition,
} from '@crm/grpc-kit';
import type { GatewayConfig } from './config';

/** The backend services the gateway can call, by name: proto file, service and address variable. */
export const BACKENDS = {
  identity: { proto: 'identity/v1/identity.proto', service: 'identity.v1.IdentityService', addr: 'IDENTITY_ADDR' },
  crm: { proto: 'crm/v1/crm.proto', service: 'crm.v1.CrmService', addr: 'CRM_ADDR' },
  crmScoring: { proto: 'crm/v1/scoring.proto', service: 'crm.v1.ScoringService', addr: 'CRM_ADDR' },
  crmIntegrations: { proto: 'crm/v1/integrations.proto', service: 'crm.v1.IntegrationsService', addr: 'CRM_ADDR' },
  crmReports: { proto: 'crm/v1/reports.proto', service: 'crm.v1.ReportsService', addr: 'CRM_ADDR' },
  crmAnalytics: { proto: 'crm/v1/analytics.proto', service: 'crm.v1.AnalyticsService', addr: 'CRM_ADDR' },
  crmMerges: { proto: 'crm/v1/merges.proto', service: 'crm.v1.ContactMergesService', addr: 'CRM_ADDR' },
  crmTasks: { proto: 'crm/v1/tasks.proto', service: 'crm.v1.TaskService', addr: 'CRM_ADDR' },
  crmFields: { proto: 'crm/v1/contact-fields.proto', service: 'crm.v1.ContactFieldsService', addr: 'CRM_ADDR' },
  crmTransfer: { proto: 'crm/v1/contact-fields.proto', service: 'crm.v1.ContactTransferService', addr: 'CRM_ADDR' },
  messaging: { proto: 'messaging/v1/messaging.proto', service: 'messaging.v1.MessagingService', addr: 'MESSAGING_ADDR' },
  messagingLevels: { proto: 'messaging/v1/service-levels.proto', service: 'messaging.v1.ServiceLevelsService', addr: 'MESSAGING_ADDR' },
  messagingViews: { proto: 'messaging/v1/views.proto', service: 'messaging.v1.ViewsService', addr: 'MESSAGING_ADDR' },
  'chatnet-connector': { proto: 'connector/v1/connector.proto', service: 'connector.v1.ConnectorService', addr: 'CONNECTOR_ADDR' },
  automation: { proto: 'automation/v1/automation.proto', service: 'automation.v1.AutomationService', addr: 'AUTOMATION_ADDR' },
  ai: { proto: 'ai/v1/ai.proto', service: 'ai.v1.AiService', addr: 'AI_ADDR' },
  aiKnowledge: { proto: 'ai/v1/knowledge.proto', service: 'ai.v1.KnowledgeService', addr: 'AI_ADDR' },
  webhooks: { proto: 'webhooks/v1/webhooks.proto', service: 'webhooks.v1.WebhooksService', addr: 'WEBHOOKS_ADDR' },
} as const satisfies Record<string, { proto: string; service: ServiceName; addr: keyof GatewayConfig }>;

export type BackendName = keyof typeof BACKENDS;
/** Each backend's client, typed by its service's generated definition. */
export type BackendClients = { [N in BackendName]: ClientFor<(typeof BACKENDS)[N]['service']> };
/** `health`: the readiness checks' own connections, one per backend address. */
export type Clients = BackendClients & { health: HealthChecker; closeAll(): void };

/**
 * One client per backend, created on first use: a deployment that does not run a service (and a
 * checkout that has not grown its proto yet) never loads it. Every call carries the verified caller,
 * signed by the gateway's internal credential for the called service only, over `transport` (mutual TLS when set).
 */
export function createClients(config: GatewayConfig, auth: InternalAuth, transport: GrpcTransport): Clients {
  const made = new Map<BackendName, { close(): void }>();
  // Generic in the backend's service name, so each client keeps its own service's types.
  const create = <N extends ServiceName>(proto: string, service: N, address: string): ClientFor<N> =>
    createServiceClient(serviceDefinition(loadProto(proto), service), address, auth, config.GRPC_DEADLINE_MS, config.GRPC_LB_POLICY, transport);
  const get = (name: BackendName): { close(): void } => {
    let c = made.get(name);
    if (!c) {
      const b = BACKENDS[name];
      c = create(b.proto, b.service, String(config[b.addr]));
      made.set(name, c);
    }
    return c;
  };
  const health = new HealthChecker(transport);
  // The backends are getters added below (made on first use); `create` typed each by its own service.
  const out = {
    health,
    closeAll: () => {
      made.forEach((c) => c.close());
      health.close();
    },
  } as Clients;
  for (const name of Object.keys(BACKENDS) as BackendName[]) {
    Object.defineProperty(out, name, { get: () => get(name), enumerable: true });
  }
  return out;
}

export function addressOf(config: GatewayConfig, name: string): string | undefined {
  const b = (BACKENDS as Record<string, { addr: keyof GatewayConfig }>)[name];
  return b ? String(config[b.addr]) : undefined;
}
