import type { Metrics } from '@crm/metrics';
import type { AttemptResult } from './sender';

/** What became of one attempt, as a bounded label: never the URL, the endpoint or the organization. */
export type DeliveryOutcome = 'success' | 'http_error' | 'network_error' | 'secret_error';

export function deliveryOutcome(result: AttemptResult, sent: boolean): DeliveryOutcome {
  if (!sent) return 'secret_error';
  if (result.ok) return 'success';
  // A status means the receiver answered (non-2xx); none means no answer: refused, timed out, blocked by the SSRF guard.
  return result.statusCode === null ? 'network_error' : 'http_error';
}

/**
 * `webhook_deliveries_total{outcome}` and `webhook_delivery_duration_seconds{outcome}` (the request, as the sender
 * timed it). Returns the recorder the worker calls after each attempt; a no-op without metrics.
 */
export function deliveryRecorder(metrics: Metrics | undefined): (result: AttemptResult, sent: boolean) => void {
  if (!metrics) return () => undefined;
  const total = metrics.counter('webhook_deliveries_total', 'Webhook delivery attempts by outcome', ['outcome']);
  const duration = metrics.histogram('webhook_delivery_duration_seconds', 'Webhook delivery attempts: request duration by outcome', ['outcome']);
  return (result, sent) => {
    const outcome = deliveryOutcome(result, sent);
    total.labels(outcome).inc();
    if (sent) duration.labels(outcome).observe(result.durationMs / 1000);
  };
}
