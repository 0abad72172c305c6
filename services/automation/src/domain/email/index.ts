/**
 * Email campaigns' channel, links and delivery. Other folders import from here only.
 */
export { channelUnavailable, deleteChannel, getChannel, hasChannel, testChannel, updateChannel } from './channel';
export { deliverEmail, type SendHooks } from './delivery';
export { LinkSigner } from './links';
export * as suppressions from './suppressions';
