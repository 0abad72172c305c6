/**
 * What a new contact made for a network user is called: the network's display name, never the bare uid (issue #26).
 * Used by the send pipeline (public send to a new thread) and by outreach; other folders use only this face.
 */
export { fallbackName, networkName } from './network-name';
