import type { Express, RequestHandler } from 'express';
import { ChildCache, httpServerDuration, type Metrics } from '@crm/metrics';
import { routeTemplates } from './route-table';

/** The route label of a request no route matched (unknown paths, 405s, requests refused before routing). */
export const UNMATCHED = 'unmatched';

/**
 * `http_server_duration_seconds{method, route, status}`, recorded when the response is finished. The route is the
 * template of the route that handled the request (`/api/v1/contacts/:id`), looked up by the route object express
 * leaves on `req.route`, so neither ids nor unknown paths ever become label values. The template map is built on
 * the first request, once every route is mounted; `req.baseUrl` is not used because express resets it when an error
 * leaves the router, which would label a failed request with half its template.
 */
export function requestMetrics(app: Express, metrics: Metrics): RequestHandler {
  const histogram = httpServerDuration(metrics);
  const children = new ChildCache((method: string, route: string, status: string) => histogram.labels(method, route, status));
  let templates: WeakMap<object, string> | undefined;
  return (req, res, next) => {
    const started = performance.now();
    res.once('finish', () => {
      templates ??= routeTemplates(app);
      const route = (req.route && templates.get(req.route)) || UNMATCHED;
      children.get(req.method, route, String(res.statusCode)).observe((performance.now() - started) / 1000);
    });
    next();
  };
}
