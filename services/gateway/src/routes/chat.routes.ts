import type { RouteDeps } from './deps';
import type { ServiceRoutes } from './services';

/** Routes of the chat capability; filled in as that service lands. */
export function chatRoutes(_deps: RouteDeps): ServiceRoutes {
  return {};
}
