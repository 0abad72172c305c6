import type { RouteDeps } from './deps';
import type { ServiceRoutes } from './services';

/** Routes of the ai capability; filled in as that service lands. */
export function aiRoutes(_deps: RouteDeps): ServiceRoutes {
  return {};
}
