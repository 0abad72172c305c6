import type { Deps } from '../deps';

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

/**
 * The contact a thread belongs to: the other person of a one-to-one thread, the group itself for a group
 * thread (the network tells us no group name, so the group is named after its id until someone renames it).
 */
export function contactTarget(
  accountId: string,
  threadType: 'user' | 'group',
  threadId: string,
  from: { uid?: string; name?: string; avatar?: string } = {},
): ContactTarget {
  if (threadType === 'group') {
    return { chatnetUid: threadId, displayName: `Group ${threadId}`, avatar: '', chatnetAccountId: accountId, threadType };
  }
  return {
    chatnetUid: from.uid || threadId,
    displayName: from.name || threadId,
    avatar: from.avatar ?? '',
    chatnetAccountId: accountId,
    threadType,
  };
}

/** Upsert the contact in crm; throws when crm cannot answer (callers decide whether to degrade or retry). */
export async function upsertContact(deps: Deps, orgId: string, target: ContactTarget): Promise<LinkedContact> {
  const c = await deps.remote.upsertChatnetContact({ orgId, role: 'agent' }, target);
  // A contact that already existed may have a phone; a new one from the network has none.
  const phone = c.created ? '' : await deps.remote.contactPhone({ orgId, role: 'agent' }, c.id);
  return { id: c.id, name: c.name, avatar: c.avatar, phone };
}

/** Upsert, or undefined with a warning when crm is unreachable: the message is stored anyway and linked later. */
export async function tryUpsertContact(deps: Deps, orgId: string, target: ContactTarget): Promise<LinkedContact | undefined> {
  try {
    return await upsertContact(deps, orgId, target);
  } catch (err) {
    deps.log.warn({ err, orgId, chatnetUid: target.chatnetUid }, 'crm UpsertChatnetContact failed; storing the conversation without a contact and linking it later');
    return undefined;
  }
}
