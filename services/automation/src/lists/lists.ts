import { AppError, CallContext, status as grpcStatus } from '@crm/grpc-kit';
import type { Deps } from '../deps';

/**
 * Customer lists belong to crm; campaigns only read them: a list's name and live count, and its members
 * evaluated live, a page at a time in contact-id order.
 */
export interface ListBrief {
  id: string;
  name: string;
  status: string;
  contactCount: number;
}

/** A member of the list as crm resolves it. */
export interface Member {
  id: string;
  name?: string;
  phone?: string;
  email?: string;
  chatnetUid?: string;
  status?: string;
  tags?: string[];
  assignedUserId?: string;
}

export interface MemberPage {
  members: Member[];
  nextAfter: string;
  total: number;
}

/** crm's client, once it is known to offer `name`. */
function crmOffering(deps: Deps, name: 'GetCustomerList' | 'ResolveListMembers') {
  const crm = deps.remote.crm();
  // An older crm contract without customer lists: say so, rather than a TypeError.
  if (typeof crm[name] !== 'function') throw new AppError('unavailable', `Customer lists are not available: crm does not offer ${name}`);
  return crm;
}

const isNotFound = (err: unknown) => (err as { code?: number })?.code === grpcStatus.NOT_FOUND;

/** The list, or undefined when the org has no such list. Throws `unavailable` when crm cannot answer. */
export async function findList(deps: Deps, ctx: Partial<CallContext>, id: string, deadlineMs?: number): Promise<ListBrief | undefined> {
  try {
    return await crmOffering(deps, 'GetCustomerList').GetCustomerList({ id }, ctx, deadlineMs ? { deadlineMs } : {});
  } catch (err) {
    if (isNotFound(err)) return undefined;
    if (err instanceof AppError) throw err;
    throw new AppError('unavailable', 'Cannot reach the customer lists right now (crm service unavailable); try again shortly');
  }
}

/** One page of members after `after` (a contact id; '' for the start). NOT_FOUND passes through. */
export async function memberPage(deps: Deps, ctx: Partial<CallContext>, listId: string, after: string, limit: number): Promise<MemberPage> {
  const res = await crmOffering(deps, 'ResolveListMembers').ResolveListMembers({ listId, afterContactId: after, limit }, ctx, {
    deadlineMs: Math.max(deps.config.GRPC_DEADLINE_MS, 15_000),
  });
  return { members: res.members ?? [], nextAfter: res.nextAfter ?? '', total: res.total ?? 0 };
}

export { isNotFound };
