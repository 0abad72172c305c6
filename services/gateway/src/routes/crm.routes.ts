import type { RouteDeps } from './deps';
import type { ServiceRoutes } from './services';

/** Routes of the crm capability; filled in as that service lands. */
export function crmRoutes(_deps: RouteDeps): ServiceRoutes {
  return {};
}
