import { randomUUID } from 'node:crypto';
import { AppError, notFound, OrgContext } from '@crm/grpc-kit';
import { withTransaction } from '@crm/db';
import type { crm } from '@crm/proto-types';
import type { ContactsDeps } from '../deps';
import { findByChatnetUid, findContact, findIdByPhone, lockForIdentity, type ContactRow } from '../db/contacts.repo';
import { isUuid, networkUrl, optionalText } from '../../shared';
import { normalisePhone } from './phone';
import { viewerOf } from './visibility';

type Request = crm.LinkOutreachContactRequest__Output;

const toOutreach = (r: ContactRow, created: boolean): crm.OutreachContact => ({
  id: r.id,
  name: r.name,
  avatar: r.avatar,
  phone: r.phone,
  ...(r.chatnet_uid ? { chatnetUid: r.chatnet_uid } : {}),
  created,
});

/**
 * The contact a conversation started from the CRM belongs to (issue #26). A lead imported with only a phone number
 * gets the network identity the lookup found, so its next inbound message joins the same contact; a number or uid
 * the org has no contact for becomes one, named as the network names the person. Racing calls end on one contact:
 * the uid and phone indexes are unique per org, and a lost race reads the winner.
 */
export async function linkOutreachContact(deps: ContactsDeps, ctx: OrgContext, req: Request): Promise<crm.OutreachContact> {
  const { orgId } = ctx;
  const uid = optionalText(req.chatnetUid, 'chatnetUid', 200);
  const displayName = optionalText(req.displayName, 'displayName');
  const avatar = networkUrl(deps.log, ctx, req.avatar, 'avatar');
  const phone = normalisePhone(req.phone, deps.config.PHONE_DEFAULT_COUNTRY);
  const viewer = viewerOf(ctx);
  const contacts = deps.contactWriter.inTrace(ctx.traceparent);

  if (req.contactId !== undefined && req.contactId !== null) {
    if (!isUuid(req.contactId)) throw notFound('Contact');
    // Only read (messaging asks first who the contact is, then links the identity it found): no transaction, no lock.
    if (!uid) {
      const row = await findContact(deps.pool, orgId, req.contactId, false, viewer);
      if (!row) throw notFound('Contact');
      return toOutreach(row, false);
    }
    return withTransaction(deps.pool, async (tx) => {
      const row = await lockForIdentity(tx, orgId, req.contactId!, uid, viewer);
      if (!row) throw notFound('Contact');
      const { uid_taken: taken, ...contact } = row;
      // Another contact of the org already has this identity: leave both as they are (a merge is the agent's call).
      if (contact.chatnet_uid || taken) return toOutreach(contact, false);
      return toOutreach(await contacts.linkIdentity(tx, orgId, contact.id, uid), false);
    });
  }
  if (!uid)
    throw new AppError('invalid_argument', 'chatnetUid is required without contactId', {
      details: [{ field: 'chatnetUid', message: 'is required' }],
    });

  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await withTransaction(deps.pool, async (tx) => {
        const byUid = await findByChatnetUid(tx, orgId, uid, true);
        if (byUid) return toOutreach(byUid, false);
        const byPhoneId = phone ? await findIdByPhone(tx, orgId, phone) : undefined;
        if (byPhoneId) {
          const row = (await findContact(tx, orgId, byPhoneId, true))!;
          if (!row.chatnet_uid) return toOutreach(await contacts.linkIdentity(tx, orgId, row.id, uid), false);
          // The number's contact is another network identity (a number that changed hands): a contact of its own.
        }
        const via = req.chatnetAccountId ? ` via account ${req.chatnetAccountId}` : '';
        const created = await contacts.createChatnetIfMissing(
          tx,
          {
            id: randomUUID(),
            orgId,
            name: displayName,
            email: '',
            phone: byPhoneId ? '' : phone,
            source: 'chatnet',
            status: 'new',
            statusId: null,
            assignedUserId: null,
            notes: '',
            tags: [],
            avatar,
            chatnetUid: uid,
            threadTypes: ['user'],
          },
          `Created (source chatnet${via}, started from the CRM)`,
        );
        if (created) return toOutreach(created, true);
        const raced = await findByChatnetUid(tx, orgId, uid);
        if (!raced) throw new AppError('unavailable', 'Contact changed concurrently; try again');
        return toOutreach(raced, false);
      });
    } catch (err) {
      // A concurrent call took the phone number first: the next pass finds its contact.
      if ((err as { code?: string }).code !== '23505' || attempt === 2) throw err;
    }
  }
  throw new AppError('unavailable', 'Contact changed concurrently; try again');
}
