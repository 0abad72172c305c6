import { traceFields } from '@crm/grpc-kit';
import { networkHttpUrl } from '@crm/validation';
import type { Deps } from '../deps';
import type { InboundData } from '../conversations';

/**
 * An avatar the chat network gave (stored in the conversation's copy of its contact, shown as an image's src): only an
 * http(s) URL is kept; anything else (javascript:, data:, over 2,000 characters) becomes '' — crm drops it the same way.
 */
export const networkAvatar = (value: string | undefined): string => networkHttpUrl(value).url;

/** What crm needs to find or create the contact of a thread. */
export interface ContactTarget {
  chatnetUid: string;
  displayName: string;
  avatar: string;
  chatnetAccountId: string;
  threadType: 'user' | 'group';
}

export interface LinkedContact {
  id: string;
  name: string;
  avatar: string;
  phone?: string;
}

/** Only the fields crm takes (a contact link's data carries its conversation and origin beside them). */
const contactTargetOnly = ({ chatnetUid, displayName, avatar, chatnetAccountId, threadType }: ContactTarget): ContactTarget => ({
  chatnetUid,
  displayName,
  avatar,
  chatnetAccountId,
  threadType,
});

/**
 * The contact a thread belongs to: the other person of a one-to-one thread. A group thread has none: it is a
 * conversation among many people, named after the group (groupDisplayName), and each of its messages links its
 * own sender (senderTarget). Creating a contact for the group itself would put the group in customer lists and
 * campaigns (issue #15).
 */
export function contactTarget(
  accountId: string,
  threadType: 'user' | 'group',
  threadId: string,
  from: { uid?: string; name?: string; avatar?: string } = {},
): ContactTarget | undefined {
  if (threadType === 'group') return undefined;
  return {
    chatnetUid: from.uid || threadId,
    displayName: from.name || threadId,
    avatar: networkAvatar(from.avatar),
    chatnetAccountId: accountId,
    threadType,
  };
}

/**
 * The name a group's conversation shows: the group's name from the network; without one (a network that did not
 * say, a group we write to first), "Group" and the end of its id, which an agent can tell apart in a list.
 */
export function groupFallbackName(threadId: string): string {
  return `Group ${threadId.slice(-6)}`;
}

/**
 * The person who wrote a message in a group, as crm knows them: by their own network uid and name, as if they had
 * written one-to-one; the thread type tells crm where they were seen (crm keeps the thread types of a contact).
 * Undefined when the network named no sender.
 */
export function senderTarget(accountId: string, from: { uid: string; name: string; avatar: string }): ContactTarget | undefined {
  if (!from.uid) return undefined;
  return {
    chatnetUid: from.uid,
    displayName: from.name || from.uid,
    avatar: networkAvatar(from.avatar),
    chatnetAccountId: accountId,
    threadType: 'group',
  };
}

/**
 * crm's contact id for a group message's sender (asked once a while per org and uid); throws when crm cannot answer.
 * `origin` vouches for the org at crm (the inbound event's stamp, or the request's origin): without one crm refuses.
 * `traceparent`: the trace the call continues (the event's or the request's), explicit (main.ts).
 */
export async function resolveSender(
  deps: Deps,
  orgId: string,
  target: ContactTarget,
  origin: string | undefined,
  traceparent: string | undefined,
): Promise<string> {
  const known = deps.senderContacts.get(orgId, target.chatnetUid);
  if (known) return known;
  // Only the id: a sender's phone is not shown on a message, so no second call for it.
  const c = await deps.remote.upsertChatnetContact({ orgId, role: 'agent', origin, traceparent }, contactTargetOnly(target));
  deps.senderContacts.set(orgId, target.chatnetUid, c.id);
  return c.id;
}

/** resolveSender, or undefined with a warning when crm is unreachable: the message is stored anyway and its sender linked later. */
export async function tryResolveSender(
  deps: Deps,
  orgId: string,
  target: ContactTarget,
  origin: string | undefined,
  traceparent: string | undefined,
): Promise<string | undefined> {
  try {
    return await resolveSender(deps, orgId, target, origin, traceparent);
  } catch (err) {
    deps.log.warn(
      { err, orgId, chatnetUid: target.chatnetUid, ...traceFields({ traceparent }) },
      'crm UpsertChatnetContact failed for a group sender; storing the message without its sender contact and linking it later',
    );
    return undefined;
  }
}

/**
 * The thread's contact; undefined for a group (a conversation, never a contact). The account's own message names
 * the account as its sender, so the contact is known by the thread's id alone (as when the CRM writes first).
 */
export function threadTarget(d: InboundData): ContactTarget | undefined {
  if (d.fromSelf) return contactTarget(d.accountId, d.threadType, d.threadId);
  return contactTarget(d.accountId, d.threadType, d.threadId, { uid: d.fromUid, name: d.fromName, avatar: d.fromAvatar });
}

/** Upsert the contact in crm; throws when crm cannot answer (callers decide whether to degrade or retry). `origin`, `traceparent`: see resolveSender. */
export async function upsertContact(
  deps: Deps,
  orgId: string,
  target: ContactTarget,
  origin: string | undefined,
  traceparent: string | undefined,
): Promise<LinkedContact> {
  const c = await deps.remote.upsertChatnetContact({ orgId, role: 'agent', origin, traceparent }, contactTargetOnly(target));
  // A contact that already existed may have a phone (crm answers it); a new one from the network has none.
  return { id: c.id, name: c.name, avatar: c.avatar, phone: c.phone };
}

/** The most threads one call to crm asks for (crm takes 500). */
const UPSERTS_PER_CALL = 200;

/**
 * upsertContact for several threads of one org (an inbound batch's new threads): one call to crm, one transaction
 * there, per 200. Where crm does not answer, each is undefined with a warning: the conversations are stored without
 * their contact and linked later, as with tryUpsertContact.
 */
export async function tryUpsertContacts(
  deps: Deps,
  orgId: string,
  targets: ContactTarget[],
  origin: string | undefined,
  traceparent: string | undefined,
): Promise<Array<LinkedContact | undefined>> {
  const out: Array<LinkedContact | undefined> = [];
  for (let i = 0; i < targets.length; i += UPSERTS_PER_CALL) {
    const part = targets.slice(i, i + UPSERTS_PER_CALL);
    try {
      const found = await deps.remote.upsertChatnetContacts({ orgId, role: 'agent', origin, traceparent }, part.map(contactTargetOnly));
      out.push(...found.map((c) => ({ id: c.id, name: c.name, avatar: c.avatar, phone: c.phone })));
    } catch (err) {
      deps.log.warn(
        { err, orgId, threads: part.length, ...traceFields({ traceparent }) },
        'crm UpsertChatnetContacts failed; storing the conversations without their contacts and linking them later',
      );
      out.push(...part.map(() => undefined));
    }
  }
  return out;
}

/** Upsert, or undefined with a warning when crm is unreachable: the message is stored anyway and linked later. */
export async function tryUpsertContact(
  deps: Deps,
  orgId: string,
  target: ContactTarget,
  origin: string | undefined,
  traceparent: string | undefined,
): Promise<LinkedContact | undefined> {
  try {
    return await upsertContact(deps, orgId, target, origin, traceparent);
  } catch (err) {
    deps.log.warn(
      { err, orgId, chatnetUid: target.chatnetUid, ...traceFields({ traceparent }) },
      'crm UpsertChatnetContact failed; storing the conversation without a contact and linking it later',
    );
    return undefined;
  }
}
