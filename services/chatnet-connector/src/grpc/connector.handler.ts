import type { HandlersFor } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { accounts } from '../accounts';
import { friendRequests } from '../friend-requests';
import { findUser, lookupPhone } from '../lookup';
import { markThreadSeen, reactToChatMessage, recallChatMessage, sendChatMessage } from '../messages';
import { sandbox } from '../sandbox-control';

/** connector.v1.ConnectorService: decode, call the domain, return; errors are mapped by grpc-kit. */
export function connectorHandlers(deps: Deps): HandlersFor<'connector.v1.ConnectorService'> {
  return {
    // The gateway's grant for the connector to act for the org on its own (issue #27): kept, sent with stored files.
    RenewGrant: async (req, ctx) => {
      await deps.grants.renew(ctx, req.grant);
      return { ok: true };
    },
    ListAccounts: (req, ctx) => accounts.list(deps, ctx, req),
    GetAccount: (req, ctx) => accounts.get(deps, ctx, req.id),
    CreateAccount: (req, ctx) => accounts.create(deps, ctx, req),
    Login: (req, ctx) => accounts.login(deps, ctx, req.id),
    Reconnect: (req, ctx) => accounts.reconnect(deps, ctx, req.id),
    GetStatus: (req, ctx) => accounts.status(deps, ctx, req.id),
    GetPendingQr: (req, ctx) => accounts.pendingQr(deps, ctx, req.id),
    SetProxy: (req, ctx) => accounts.setProxy(deps, ctx, req),
    DeleteAccount: (req, ctx) => accounts.remove(deps, ctx, req),

    SendChatMessage: (req, ctx) => sendChatMessage(deps, ctx, req),
    LookupPhone: (req, ctx) => lookupPhone(deps, ctx, req),
    MarkThreadSeen: (req, ctx) => markThreadSeen(deps, ctx, req),
    RecallChatMessage: (req, ctx) => recallChatMessage(deps, ctx, req),
    ReactToChatMessage: (req, ctx) => reactToChatMessage(deps, ctx, req),
    FindUser: (req, ctx) => findUser(deps, ctx, req),
    SendFriendRequest: (req, ctx) => friendRequests.send(deps, ctx, req),
    ListFriendRequests: (req, ctx) => friendRequests.list(deps, ctx, req),

    SandboxScan: (req, ctx) => sandbox.scan(deps, ctx, req),
    SandboxInbound: (req, ctx) => sandbox.inbound(deps, ctx, req),
    SandboxSeen: (req, ctx) => sandbox.seen(deps, ctx, req),
    SandboxSelf: (req, ctx) => sandbox.self(deps, ctx, req),
    SandboxDrop: (req, ctx) => sandbox.drop(deps, ctx, req),
    SandboxSetFriends: (req, ctx) => sandbox.setFriends(deps, ctx, req),
    SandboxSentMessages: (req, ctx) => sandbox.sentMessages(deps, ctx, req.id),
    SandboxSetPhones: (req, ctx) => sandbox.setPhones(deps, ctx, req),
    SandboxSeenByAgent: (req, ctx) => sandbox.seenByAgent(deps, ctx, req.id),
    SandboxRecall: (req, ctx) => sandbox.recall(deps, ctx, req),
    SandboxReact: (req, ctx) => sandbox.react(deps, ctx, req),
    SandboxAcceptFriendRequest: (req, ctx) => sandbox.acceptFriendRequest(deps, ctx, req),
  };
}
