import { traceFields, type OrgContext } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { networkAvatar } from '../contacts';

/**
 * What a contact made for a network user is called when the network does not say: never the bare uid (an agent
 * cannot tell two of those apart, and it reads as a bug), but a neutral name with the uid's end.
 */
export function fallbackName(uid: string): string {
  return `Chat user …${uid.slice(-4)}`;
}

/**
 * The network's display name and avatar for a uid, asked through the account (cached a day by the connector);
 * the fallback name when the network cannot answer now: a send never waits on, or fails for, the name.
 */
export async function networkName(deps: Deps, ctx: OrgContext, accountId: string, uid: string): Promise<{ displayName: string; avatar: string }> {
  try {
    const u = await deps.remote.findNetworkUser(ctx, { accountId, chatnetUid: uid });
    if (u.found && u.displayName) return { displayName: u.displayName, avatar: networkAvatar(u.avatarUrl) };
  } catch (err) {
    deps.log.warn({ err, accountId, ...traceFields(ctx) }, 'the network did not name a new contact; using a neutral name');
  }
  return { displayName: fallbackName(uid), avatar: '' };
}
