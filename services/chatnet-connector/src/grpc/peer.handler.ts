import type { Handlers } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { runLocal } from '../domain/sandbox';
import { outboundOf } from '../domain/send';

/**
 * connector.v1.ConnectorPeerService: calls forwarded by another connector instance to the one holding the
 * account's live session. The forwarding instance already checked the caller's org and permissions;
 * each call here acts only on a session held locally and of the stated org.
 */
export function peerHandlers(deps: Deps): Handlers {
  return {
    PeerSend: (req) => {
      const m = outboundOf(req.message);
      return deps.sessions.send(req.message.accountId, req.orgId, m, m.clientMessageId);
    },
    PeerSandbox: async (req) => ({
      resultJson: JSON.stringify((await runLocal(deps, req.orgId, req.accountId, req.action, JSON.parse(req.payloadJson || '{}'))) ?? {}),
    }),
    PeerRelease: async (req) => ({ ok: await deps.sessions.release(req.accountId, req.restart), message: '' }),
  };
}
