/**
 * The send governor: how many sends of each kind an account may make in a window (GOVERNOR_LIMITS, config.ts) and
 * the reservations a send takes. No Deps here: deps.ts and config.ts import this face.
 */
export { SendGovernor } from './governor';
export { DEFAULT_SEND_LIMITS, type GovernorLimits, parseGovernorSpec, SEND_SOURCES, type SendSource } from './governor-spec';
