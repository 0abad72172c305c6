/**
 * Live sessions held across instances: leases in Redis, the session pool (login, restore, rebalancing, the commands a
 * live session runs) and the forwarding of a call to the instance holding an account's session.
 */
export { type AttachmentRef, type EntryState, type Outbound, SessionPool } from './session-pool';
export { Leases, type LiveInfo } from './leases';
export { Peers } from './peers';
export { notLive } from './remote-errors';
export { sessionMetrics } from './session-metrics';
