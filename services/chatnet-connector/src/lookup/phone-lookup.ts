import { AppError, invalid, traceFields, OrgContext } from '@crm/grpc-kit';
import type { connector } from '@crm/proto-types';
import type { Deps } from '../deps';
import { connectedAccountIds } from '../account-store';

export type PhoneLookupResult = connector.PhoneLookupResult__Output;

/** Connected accounts tried per lookup: one held by no instance right now (moving) passes to the next. */
const ACCOUNTS_TRIED = 3;

/** The number's digits (crm sends E.164); INVALID_ARGUMENT naming `phone` for anything that is not a phone number. */
export function lookupDigits(phone: string | undefined): string {
  const v = (phone ?? '').trim();
  if (!/^\+?[0-9 ().-]+$/.test(v)) throw invalid('phone', 'must be a phone number (digits, spaces, + - . ( ) only)');
  const digits = v.replace(/\D/g, '');
  if (digits.length < 5 || digits.length > 15) throw invalid('phone', 'must be a phone number of 5 to 15 digits');
  return digits;
}

/** Ask the network through the live session this instance holds (the holder's half of LookupPhone; `call`: the call served). */
export async function lookupHere(
  deps: Deps,
  orgId: string,
  accountId: string,
  digits: string,
  call: { traceparent?: string } = {},
): Promise<PhoneLookupResult> {
  const session = deps.sessions.liveSession(accountId, orgId);
  let user;
  try {
    user = await session.findUserByPhone(digits);
  } catch (err) {
    deps.log.warn({ err, accountId, ...traceFields(call) }, 'phone lookup: the network did not answer');
    throw new AppError('unavailable', 'The chat network did not answer the phone lookup; try again later', { code: 'lookup_failed' });
  }
  return user ? { found: true, chatnetUid: user.uid, displayName: user.displayName, accountId } : { found: false, accountId };
}

/**
 * LookupPhone (crm): whether the number belongs to a network user, asked through one of the caller's org's
 * connected accounts; one held here goes first (no forwarding), else the holder is asked over the peer service.
 */
export async function lookupPhone(deps: Deps, ctx: OrgContext, req: { phone?: string }): Promise<PhoneLookupResult> {
  const { orgId } = ctx;
  const digits = lookupDigits(req.phone);
  const ids = await connectedAccountIds(deps.pool, orgId, 20);
  const ordered = [...ids.filter((id) => deps.sessions.isLive(id, orgId)), ...ids.filter((id) => !deps.sessions.isLive(id, orgId))];
  for (const accountId of ordered.slice(0, ACCOUNTS_TRIED)) {
    try {
      return await deps.peers.onHolder(
        accountId,
        () => lookupHere(deps, orgId, accountId, digits, ctx),
        (peer) => peer.PeerLookupPhone({ accountId, phone: digits }, { orgId, requestId: ctx.requestId, traceparent: ctx.traceparent }),
      );
    } catch (err) {
      // Connected on paper but between instances right now: another account may do.
      if ((err as AppError).code !== 'account_not_live') throw err;
    }
  }
  throw new AppError('failed_precondition', 'No chat-network account of the organization is connected to look the number up with', {
    code: 'no_connected_account',
  });
}
