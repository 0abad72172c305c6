import { randomUUID } from 'node:crypto';
import { invalid, requireCan, OrgContext } from '@crm/grpc-kit';
import type { Queryable } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import { isUuid } from '@crm/validation';
import type { Deps } from '../deps';
import { AUTO_MESSAGES_CHANNEL, type AutoMessageRow } from '../auto-messages';
import { convs, EVENTS } from '../conversations';
import { parseRating } from './rating';
import * as repo from './repo';

/**
 * CSAT (issue #29 item 6). A conversation that closes (by anyone: a person, a bulk change, a macro, auto-close) while
 * the org has CSAT enabled queues its question in the closing transaction; the auto-message sender sends it and the
 * survey opens for 24 hours from then. The contact's next message, while the conversation is still closed, answers
 * it: a rating (csat/rating.ts) is stored — and announced as `conversation.csat_received` — and, as in Chatwoot, does
 * not reopen the conversation; the message after it is its comment (not reopening either). A message that is no
 * rating reopens the conversation as any message does and ends the survey unanswered: the contact moved on.
 */

type Closed = Pick<convs.ConversationRow, 'id' | 'org_id' | 'chatnet_account_id' | 'assignee_id' | 'thread_type'>;

/**
 * Conversations of one org just closed (the caller's transaction holds their rows): each one-to-one conversation is
 * asked, in one statement. Group threads are not asked.
 */
export async function askOnClose(db: Queryable, closed: Closed | Closed[]): Promise<void> {
  const rows = (Array.isArray(closed) ? closed : [closed]).filter((c) => c.thread_type === 'user');
  if (rows.length === 0) return;
  const surveys = rows.map((c) => ({ id: randomUUID(), conversationId: c.id, chatnetAccountId: c.chatnet_account_id, assigneeId: c.assignee_id }));
  await repo.ask(db, rows[0].org_id, surveys, AUTO_MESSAGES_CHANNEL);
}

/** The question went out (in the transaction that stored it): the survey's window opens. */
export async function questionSent(db: Queryable, row: AutoMessageRow, sentAt: Date): Promise<void> {
  await repo.markAsked(db, row.id, sentAt);
}

/**
 * A message from the contact into a closed conversation (the inbound transaction, under the row lock): true when it
 * answered the open survey (rating or comment), so the conversation stays closed. `traceparent`: the inbound event's.
 */
export async function takeReply(
  db: Queryable,
  m: {
    orgId: string;
    conversationId: string;
    contactId: string | null;
    chatnetAccountId: string;
    assigneeId: string | null;
    content: string;
    at: Date;
    traceparent: string | undefined;
  },
): Promise<boolean> {
  const survey = await repo.openSurvey(db, m.orgId, m.conversationId, m.at);
  if (!survey) return false;
  if (survey.rating !== null) {
    const text = m.content.trim();
    if (!text) return false;
    await repo.comment(db, { id: survey.id, conversationId: m.conversationId, comment: text });
    return true;
  }
  const parsed = parseRating(m.content);
  if (!parsed) {
    await repo.end(db, survey.id);
    return false;
  }
  await repo.answer(db, { id: survey.id, conversationId: m.conversationId, rating: parsed.rating, comment: parsed.comment, respondedAt: m.at });
  await enqueueEvent(db, {
    type: EVENTS.conversationCsatReceived,
    orgId: m.orgId,
    data: {
      conversationId: m.conversationId,
      contactId: m.contactId,
      chatnetAccountId: m.chatnetAccountId,
      assigneeId: m.assigneeId,
      rating: parsed.rating,
      comment: parsed.comment,
      respondedAt: m.at.toISOString(),
    },
    traceparent: m.traceparent,
  });
  return true;
}

const ratio = (n: number) => Math.round(n * 100) / 100;

/** GET /analytics/csat (analytics:view, team lead and above): the answers to the questions asked in [from, to). */
export async function analytics(deps: Deps, ctx: OrgContext, req: { from?: string; to?: string; assigneeId?: string; chatnetAccountId?: string }) {
  requireCan(ctx, 'analytics:view');
  const at = (v: string | undefined, field: string) => {
    if (!v) return null;
    const d = new Date(v);
    if (Number.isNaN(d.getTime())) throw invalid(field, 'must be an ISO 8601 timestamp');
    return d;
  };
  const id = (v: string | undefined, field: string) => {
    if (!v) return null;
    if (!isUuid(v)) throw invalid(field, 'must be an id');
    return v;
  };
  const r = await repo.analytics(deps.pool, ctx.orgId, {
    from: at(req.from, 'from'),
    to: at(req.to, 'to'),
    assigneeId: id(req.assigneeId, 'assigneeId'),
    chatnetAccountId: id(req.chatnetAccountId, 'chatnetAccountId'),
  });
  return {
    responses: r.responses,
    questions: r.questions,
    average: r.average === null ? undefined : ratio(Number(r.average)),
    distribution: { '1': r.r1, '2': r.r2, '3': r.r3, '4': r.r4, '5': r.r5 },
    responseRate: r.questions === 0 ? undefined : ratio(r.responses / r.questions),
  };
}
