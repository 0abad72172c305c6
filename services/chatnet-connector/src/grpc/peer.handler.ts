import { type HandlersFor, invalid } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { sendHere } from '../friend-requests';
import { findHere, lookupDigits, lookupHere } from '../lookup';
import { emojiOf, markSeenOf, messageRefOf, outboundOf } from '../messages';
import { runLocal, sandboxAction } from '../sandbox-control';

/**
 * connector.v1.ConnectorPeerService: calls forwarded by another connector instance to the one holding the
 * account's live session. The forwarding instance already checked the caller's org and permissions; the
 * org comes from its signed credential (only connector instances may call this service), and each call
 * acts only on a session held locally and of that org.
 */
export function peerHandlers(deps: Deps): HandlersFor<'connector.v1.ConnectorPeerService'> {
  return {
    PeerSend: (req, ctx) => {
      // A message field decodes as null when the sender left it out.
      if (!req.message) throw invalid('message', 'is required');
      const m = outboundOf(req.message, deps.config.ATTACHMENT_MAX_BYTES);
      return deps.sessions.send(req.message.accountId, ctx.orgId, m, m.clientMessageId, {
        requestId: ctx.requestId,
        origin: ctx.origin,
        traceparent: ctx.traceparent,
      });
    },
    PeerMarkSeen: async (req, ctx) => {
      await deps.sessions.markSeen(req.accountId, ctx.orgId, markSeenOf(req), ctx);
      return { ok: true, message: 'Marked seen on the network' };
    },
    PeerRecall: async (req, ctx) => {
      await deps.sessions.recall(req.accountId, ctx.orgId, messageRefOf(req), ctx);
      return { ok: true, message: 'Recalled on the network' };
    },
    PeerReact: async (req, ctx) => {
      await deps.sessions.react(req.accountId, ctx.orgId, messageRefOf(req), emojiOf(req.emoji), ctx);
      return { ok: true, message: 'Reaction sent to the network' };
    },
    PeerSandbox: async (req, ctx) => ({
      resultJson: JSON.stringify(
        (await runLocal(deps, ctx.orgId, req.accountId, sandboxAction(req.action), JSON.parse(req.payloadJson || '{}'), ctx.traceparent)) ?? {},
      ),
    }),
    PeerLookupPhone: (req, ctx) => lookupHere(deps, ctx.orgId, req.accountId, lookupDigits(req.phone), ctx),
    PeerFindUser: (req, ctx) => findHere(deps, ctx.orgId, req.accountId, req.chatnetUid ? { uid: req.chatnetUid } : { phone: req.phone }, ctx),
    PeerSendFriendRequest: async (req, ctx) => {
      await sendHere(deps, ctx.orgId, req.accountId, req.chatnetUid, req.message, ctx);
      return { ok: true, message: 'Friend request sent' };
    },
    PeerRelease: async (req, ctx) => ({ ok: await deps.sessions.release(req.accountId, req.restart, ctx.traceparent), message: '' }),
  };
}
