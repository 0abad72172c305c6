import type { RouteDeps } from './deps';
import type { ServiceRoutes } from './services';

/** Routes of the webhooks capability; filled in as that service lands. */
export function webhooksRoutes(_deps: RouteDeps): ServiceRoutes {
  return {};
}
