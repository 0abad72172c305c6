import { AppError, CallContext, createServiceClient, InternalAuth, loadProto, ServiceClient, serviceDefinition } from '@crm/grpc-kit';
import type { AutomationConfig } from './config';

/**
 * Clients of the services automation calls, created on first use: a deployment (or a checkout) without
 * crm or messaging still serves rules, templates and notifications, and only the actions that need the
 * missing service fail, with a clear "unavailable" that the run log shows and the runner retries.
 */
export interface Remote {
  identity(): ServiceClient;
  crm(): ServiceClient;
  messaging(): ServiceClient;
  close(): void;
}

const SERVICES = {
  identity: { proto: 'identity/v1/identity.proto', service: 'identity.v1.IdentityService', addr: 'IDENTITY_ADDR' },
  crm: { proto: 'crm/v1/crm.proto', service: 'crm.v1.CrmService', addr: 'CRM_ADDR' },
  messaging: { proto: 'messaging/v1/messaging.proto', service: 'messaging.v1.MessagingService', addr: 'MESSAGING_ADDR' },
} as const;

type Name = keyof typeof SERVICES;

export function createRemote(config: AutomationConfig, auth: InternalAuth): Remote {
  const made = new Map<Name, ServiceClient>();
  const get = (name: Name): ServiceClient => {
    let c = made.get(name);
    if (!c) {
      const s = SERVICES[name];
      let ctor;
      try {
        ctor = serviceDefinition(loadProto(s.proto), s.service);
      } catch {
        throw new AppError('unavailable', `The ${name} service is not available (no contract ${s.proto})`);
      }
      c = createServiceClient(ctor, config[s.addr], auth, config.GRPC_DEADLINE_MS, config.GRPC_LB_POLICY);
      made.set(name, c);
    }
    return c;
  };
  return {
    identity: () => get('identity'),
    crm: () => get('crm'),
    messaging: () => get('messaging'),
    close: () => made.forEach((c) => c.close()),
  };
}

/**
 * How automation identifies itself when it acts on its own (a run triggered by an event): the org of the
 * event, no user, and the admin role, since a rule an admin or team lead set up acts on their behalf.
 */
export function systemContext(orgId: string, requestId: string): Partial<CallContext> {
  return { orgId, role: 'admin', requestId };
}
