/**
 * Inbox visibility: which conversations an agent may see (the org's setting, the accounts they are given) as one
 * SQL fragment every conversation query takes, and the viewer a request stands for.
 */
export * as visibility from './visibility';
export { viewerOf } from './visibility';
export { AGENT_VISIBILITIES, type AgentVisibility, visibleSql } from './visibility.repo';
