import { Metrics, sampleValue } from '@crm/metrics';
import { deliveryOutcome, deliveryRecorder } from './delivery-metrics';
import type { AttemptResult } from './sender';

const result = (r: Partial<AttemptResult>): AttemptResult => ({
  ok: false,
  statusCode: null,
  durationMs: 120,
  error: null,
  responseBody: '',
  responseBodyTruncated: false,
  startedAt: new Date(),
  ...r,
});

describe('webhook delivery outcome', () => {
  it('tells a 2xx, a non-2xx answer, no answer and an unusable secret apart', () => {
    expect(deliveryOutcome(result({ ok: true, statusCode: 204 }), true)).toBe('success');
    expect(deliveryOutcome(result({ statusCode: 500 }), true)).toBe('http_error');
    expect(deliveryOutcome(result({ statusCode: 410 }), true)).toBe('http_error');
    expect(deliveryOutcome(result({ error: 'connect ECONNREFUSED' }), true)).toBe('network_error');
    expect(deliveryOutcome(result({ error: 'the signing secret cannot be decrypted' }), false)).toBe('secret_error');
  });

  it('counts every attempt and times only the ones that were sent', async () => {
    const metrics = new Metrics('webhooks', { processMetrics: false });
    const record = deliveryRecorder(metrics);
    record(result({ ok: true, statusCode: 200, durationMs: 40 }), true);
    record(result({}), false);
    const text = await metrics.scrape();
    expect(sampleValue(text, 'webhook_deliveries_total', { outcome: 'success' })).toBe(1);
    expect(sampleValue(text, 'webhook_deliveries_total', { outcome: 'secret_error' })).toBe(1);
    expect(sampleValue(text, 'webhook_delivery_duration_seconds_sum', { outcome: 'success' })).toBeCloseTo(0.04);
    expect(sampleValue(text, 'webhook_delivery_duration_seconds_count', { outcome: 'secret_error' })).toBeUndefined();
  });
});
