import { z } from 'zod';
import { nulls, proto, reply } from '../proto-schema';

const MSG = 'messaging/v1/messaging.proto';

/** Public conversation (chat.routes publicConversationOut): unset values as null. */
export const PublicConversation = nulls(proto(MSG, 'messaging.v1.PublicConversation'), ['lastMessageAt', 'assigneeId']).extend({
  contact: nulls(proto(MSG, 'messaging.v1.PublicContact'), ['avatarUrl']).nullable(),
});
export const PublicMessages = reply('messaging', 'ListPublicMessages');
export const Ok = z.object({ success: z.literal(true) });
