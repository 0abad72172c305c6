import type { ServiceName, Services } from '@crm/proto-types';
import type { MethodsOf } from './methods-of';

/**
 * The methods that run without an organization (issue #14): signing in and up, the first setup, token refresh,
 * links in e-mails (which carry their own signed token) and a connector instance releasing a session for another.
 * Every other method is refused by the server wrapper unless the caller's credential names an org, so its handler
 * receives an `OrgContext`. Adding a method here is a security decision: its handler must find the org itself.
 */
export const ORG_FREE_METHODS = {
  'identity.v1.IdentityService': ['GetSetupStatus', 'Setup', 'Signup', 'Login', 'Refresh', 'Logout', 'AcceptInvitation', 'VerifyApiKey'],
  'automation.v1.AutomationService': ['CheckUnsubscribeLink', 'UnsubscribeEmail', 'RecordEmailOpen'],
  'connector.v1.ConnectorPeerService': ['PeerRelease'],
} as const satisfies { readonly [N in ServiceName]?: readonly (keyof MethodsOf<Services[N]>)[] };

type OrgFreeServices = typeof ORG_FREE_METHODS;

/**
 * The org-free method names of the service whose generated definition is `S` (never when it has none). Keyed by
 * the definition, not the name, so `HandlersFor<N>` and `GrpcServer.add`'s `TypedHandlers<S>` are one type even
 * for a generic `N`.
 */
export type OrgFreeMethodIn<S> = {
  [N in keyof OrgFreeServices]: [S] extends [Services[N]] ? ([Services[N]] extends [S] ? OrgFreeServices[N][number] : never) : never;
}[keyof OrgFreeServices];

const ORG_FREE = new Set(Object.entries(ORG_FREE_METHODS).flatMap(([service, methods]) => methods.map((m) => `${service}/${m}`)));

/** Whether `package.Service/Method` runs without an organization. */
export function isOrgFree(fullMethod: string): boolean {
  return ORG_FREE.has(fullMethod);
}
