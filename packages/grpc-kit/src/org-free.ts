import type { ServiceName, Services } from '@crm/proto-types';
import type { MethodsOf } from './typed';

/**
 * The methods that run without an organization (issue #14): signing in and up, the first setup, token refresh,
 * links in e-mails (which carry their own signed token) and a connector instance releasing a session for another.
 * Every other method is refused by the server wrapper unless the caller's credential names an org, so its handler
 * receives an `OrgContext`. Adding a method here is a security decision: its handler must find the org itself.
 */
export const ORG_FREE_METHODS = {
  'identity.v1.IdentityService': ['GetSetupStatus', 'Setup', 'Signup', 'Login', 'Refresh', 'Logout', 'AcceptInvitation', 'VerifyApiKey'],
  'automation.v1.AutomationService': ['UnsubscribeEmail', 'RecordEmailOpen'],
  'connector.v1.ConnectorPeerService': ['PeerRelease'],
} as const satisfies { readonly [N in ServiceName]?: readonly (keyof MethodsOf<Services[N]>)[] };

/** The org-free method names of service `N` (never when it has none). */
export type OrgFreeMethodOf<N> = N extends keyof typeof ORG_FREE_METHODS ? (typeof ORG_FREE_METHODS)[N][number] : never;

const ORG_FREE = new Set(Object.entries(ORG_FREE_METHODS).flatMap(([service, methods]) => methods.map((m) => `${service}/${m}`)));

/** Whether `package.Service/Method` runs without an organization. */
export function isOrgFree(fullMethod: string): boolean {
  return ORG_FREE.has(fullMethod);
}
