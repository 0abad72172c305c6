import { z } from '@crm/config';
import { type InboundMessage, networkMessageId, type SandboxNetwork } from '../drivers';

/**
 * A contact writes to an account: the body of `POST /accounts/:id/inbound` on the standalone network (what benchmarks
 * and demos push). Text only: a message with files goes through the connector's control route
 * (`POST /sandbox/accounts/:id/inbound`), which stores them in messaging first.
 */
export const ContactMessage = z
  .object({
    fromUid: z.string().trim().min(1, 'is required').max(64),
    fromName: z.string().trim().max(200).optional(),
    fromAvatar: z.string().trim().max(2000).optional(),
    content: z
      .string()
      .max(20_000)
      .refine((c) => c.trim().length > 0, 'is required'),
    contentType: z.string().trim().max(50).optional(),
    threadType: z.enum(['user', 'group']).default('user'),
    threadId: z.string().trim().max(64).optional(),
    groupName: z.string().trim().max(200).optional(),
    chatnetMessageId: z.string().trim().max(64).optional(),
    quoteChatnetMessageId: z.string().trim().max(64).optional(),
  })
  .superRefine((m, ctx) => {
    if (m.threadType === 'group' && !m.threadId) ctx.addIssue({ code: 'custom', path: ['threadId'], message: 'is required for group threads' });
    if (m.groupName && m.threadType !== 'group')
      ctx.addIssue({ code: 'custom', path: ['groupName'], message: 'is only allowed with threadType group' });
  });

export type ContactMessageBody = z.infer<typeof ContactMessage>;

/** The message as the network hands it to the account's connection, or undefined when the quote is not of this thread. */
export async function networkMessage(network: SandboxNetwork, accountId: string, b: ContactMessageBody): Promise<InboundMessage | undefined> {
  const threadId = b.threadId || b.fromUid;
  if (b.quoteChatnetMessageId) {
    const quoted = await network.messageOf(accountId, '', b.quoteChatnetMessageId);
    if (!quoted || quoted.threadId !== threadId || quoted.threadType !== b.threadType) return undefined;
  }
  return {
    chatnetMessageId: b.chatnetMessageId || networkMessageId(),
    // The sender's own id of the message, as the real network gives one with every message.
    cliMsgId: networkMessageId(),
    threadId,
    threadType: b.threadType,
    fromUid: b.fromUid,
    fromName: b.fromName || b.fromUid,
    fromAvatar: b.fromAvatar ?? '',
    content: b.content,
    contentType: b.contentType || 'text',
    sentAt: new Date(),
    ...(b.groupName ? { groupName: b.groupName } : {}),
    ...(b.quoteChatnetMessageId ? { quoteChatnetMessageId: b.quoteChatnetMessageId } : {}),
  };
}

/**
 * Hand the message to the account's live connection, or keep it for the next one when there is none, or when the
 * connection went before the connector acknowledged it (a real network keeps what its client did not take; handed over
 * twice, it is one message downstream: its event id is derived from the network id). True when delivered live.
 */
export async function deliverOrHold(network: SandboxNetwork, accountId: string, message: InboundMessage): Promise<boolean> {
  await network.recordInbound(accountId, message.chatnetMessageId, message);
  const delivered = await network.deliver(accountId, message).catch(() => false);
  if (!delivered) await network.hold(accountId, message);
  return delivered;
}
