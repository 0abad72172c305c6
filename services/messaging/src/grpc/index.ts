/** messaging.v1.MessagingService: the handlers over every module's requests. */
export { messagingHandlers } from './messaging.handler';
