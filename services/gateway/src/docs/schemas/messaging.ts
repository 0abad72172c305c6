import { z } from 'zod';
import { nulls, proto } from '../proto-schema';

const MSG = 'messaging/v1/messaging.proto';

/** Public conversation (chat.routes publicConversationOut): unset values as null. */
export const PublicConversation = nulls(proto(MSG, 'messaging.v1.PublicConversation'), ['lastMessageAt', 'assigneeId']).extend({
  contact: nulls(proto(MSG, 'messaging.v1.PublicContact'), ['phone', 'avatarUrl']).nullable(),
});
export const PublicMessage = proto(MSG, 'messaging.v1.PublicMessage');
/** POST /api/public/messages/send. */
export const PublicSent = z.object({
  success: z.literal(true),
  messageId: z.string().describe('the stored message; read it with GET /api/public/messages/{id}'),
  status: z.string().describe('delivery status as stored: sent'),
});
