/** connector.v1.ConnectorService and connector.v1.ConnectorPeerService: the handlers over every module's requests. */
export { connectorHandlers } from './connector.handler';
export { peerHandlers } from './peer.handler';
