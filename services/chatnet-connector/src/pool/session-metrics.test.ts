import { Metrics, sampleValue } from '@crm/metrics';
import { sessionMetrics } from './session-metrics';

describe('chatnet_sessions', () => {
  it('reads the pool per state at every scrape, and stops when removed', async () => {
    const metrics = new Metrics('chatnet-connector', { processMetrics: false });
    let counts = { qr_pending: 1, connecting: 0, connected: 3 };
    const remove = sessionMetrics(metrics, { countByState: () => counts });
    let text = await metrics.scrape();
    expect(sampleValue(text, 'chatnet_sessions', { state: 'connected' })).toBe(3);
    expect(sampleValue(text, 'chatnet_sessions', { state: 'qr_pending' })).toBe(1);
    expect(sampleValue(text, 'chatnet_sessions', { state: 'connecting' })).toBe(0);
    counts = { qr_pending: 0, connecting: 0, connected: 2 };
    text = await metrics.scrape();
    expect(sampleValue(text, 'chatnet_sessions', { state: 'connected' })).toBe(2);
    remove();
    counts = { qr_pending: 0, connecting: 0, connected: 9 };
    expect(sampleValue(await metrics.scrape(), 'chatnet_sessions', { state: 'connected' })).toBe(2);
  });
});
