import { notFound, type OrgContext } from '@crm/grpc-kit';
import type { Queryable } from '@crm/db';
import { isUuid } from '@crm/validation';
import type { Deps } from '../deps';
import { files } from '../attachments';
import { convs, messages } from '../conversations';
import { viewerOf } from '../visibility';

/**
 * Who reads a message: an agent does not see the content of a message the contact recalled (it was taken back on the
 * network); team leads and above, and API keys acting for the organization, still do.
 */
export function readerOf(ctx: OrgContext): messages.Reader {
  return { withholdRecalled: ctx.role === 'agent' };
}

/**
 * A message and its conversation if the caller may see them: their org, and a conversation their inbox visibility
 * shows them. Anything else is 404, like an unknown id.
 */
export async function loadVisibleMessage(db: Queryable, ctx: OrgContext, id: string, lock = false) {
  const row = isUuid(id) ? await messages.findById(db, ctx.orgId, id) : undefined;
  const conv = row ? await convs.findById(db, ctx.orgId, row.conversation_id, lock, viewerOf(ctx)) : undefined;
  if (!row || !conv) throw notFound('Message');
  return { row, conv };
}

/** The message as the caller sees it, with its files. */
export async function messageFor(deps: Deps, ctx: OrgContext, row: messages.MessageRow, db: Queryable = deps.pool) {
  const attached = await files.forMessages(db, ctx.orgId, [row.id]);
  return messages.toMessage(row, attached.get(row.id), readerOf(ctx));
}
