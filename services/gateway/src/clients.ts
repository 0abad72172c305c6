import { createServiceClient, loadProto, ServiceClient, serviceDefinition } from '@crm/grpc-kit';
import type { GatewayConfig } from './config';

/** The backend services the gateway can call, by name: proto file, service and address variable. */
export const BACKENDS = {
  identity: { proto: 'identity/v1/identity.proto', service: 'identity.v1.IdentityService', addr: 'IDENTITY_ADDR' },
} as const satisfies Record<string, { proto: string; service: string; addr: keyof GatewayConfig }>;

export type BackendName = keyof typeof BACKENDS;
export type Clients = Record<BackendName, ServiceClient>;

export function createClients(config: GatewayConfig): Clients {
  const out = {} as Clients;
  for (const [name, b] of Object.entries(BACKENDS) as [BackendName, (typeof BACKENDS)[BackendName]][]) {
    out[name] = createServiceClient(serviceDefinition(loadProto(b.proto), b.service), String(config[b.addr]), config.GRPC_DEADLINE_MS);
  }
  return out;
}

export function addressOf(config: GatewayConfig, name: string): string | undefined {
  const b = (BACKENDS as Record<string, { addr: keyof GatewayConfig }>)[name];
  if (b) return String(config[b.addr]);
  const key = `${name.toUpperCase().replace(/-/g, '_')}_ADDR` as keyof GatewayConfig;
  return config[key] as string | undefined;
}
