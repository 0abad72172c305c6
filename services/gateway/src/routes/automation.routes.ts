import type { RouteDeps } from './deps';
import type { ServiceRoutes } from './services';

/** Routes of the automation capability; filled in as that service lands. */
export function automationRoutes(_deps: RouteDeps): ServiceRoutes {
  return {};
}
