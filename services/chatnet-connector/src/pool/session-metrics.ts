import type { Metrics } from '@crm/metrics';
import type { EntryState, SessionPool } from './session-pool';

/**
 * `chatnet_sessions{state}`: the accounts this instance holds, by state (qr_pending, connecting, connected), read
 * from the pool at scrape time. Summed over instances it is the deployment's live sessions.
 */
export function sessionMetrics(metrics: Metrics, sessions: Pick<SessionPool, 'countByState'>): () => void {
  const gauge = metrics.gauge('chatnet_sessions', 'Chat-network accounts held by this connector instance, by session state', ['state']);
  return metrics.onCollect(() => {
    for (const [state, n] of Object.entries(sessions.countByState()) as Array<[EntryState, number]>) gauge.labels(state).set(n);
  });
}
