import { invalid, OrgContext } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { findMessages, clampPage, load, highlight, MAX_TERM, MAX_WORDS, wordsOf } from '../conversations';
import { isUuid, messagingRules as rules } from '@crm/validation';
import { viewerOf } from '../visibility';
import { readerOf } from '../reactions';

export interface SearchRequest {
  q?: string;
  conversationId?: string;
  chatnetAccountId?: string;
  /** ISO 8601; the gateway has turned dates into the [from, to) instants already. */
  dateFrom?: string;
  dateTo?: string;
  page?: number;
  limit?: number;
}

function instant(value: string | undefined, field: string): Date | undefined {
  if (!value) return undefined;
  const t = new Date(value);
  if (Number.isNaN(t.getTime())) throw invalid(field, 'must be an ISO 8601 timestamp');
  return t;
}

/**
 * GET /api/v1/messages/search: every word of `q` (folded: case and accents do not matter) in the message,
 * one- and two-letter words as whole words (the last one as the start of a word; README "Search"), best match
 * first, then newest. An explicit conversation of another org is 404, like any other of its ids.
 */
export async function searchMessages(deps: Deps, ctx: OrgContext, req: SearchRequest) {
  const { orgId } = ctx;
  const q = (req.q ?? '').trim();
  if (!q) throw invalid('q', 'is required');
  if (q.length < rules.SEARCH_QUERY_MIN) throw invalid('q', rules.SEARCH_QUERY_TOO_SHORT);
  if (q.length > MAX_TERM) throw invalid('q', `must be at most ${MAX_TERM} characters`);
  const words = wordsOf(q);
  // A term of marks only ("̀̀") folds to nothing: there is nothing to look for.
  if (words.length === 0) throw invalid('q', 'must contain letters or digits');
  if (words.length > MAX_WORDS) throw invalid('q', `must have at most ${MAX_WORDS} words`);
  if (req.chatnetAccountId && !isUuid(req.chatnetAccountId)) throw invalid('chatnetAccountId', 'must be an id');
  const from = instant(req.dateFrom, 'from');
  const to = instant(req.dateTo, 'to');
  if (from && to && to <= from) throw invalid('to', 'must not be before from');
  const conversationId = req.conversationId ? (await load(deps, ctx, req.conversationId)).id : undefined;

  const out = await findMessages(deps.pool, orgId, {
    ...clampPage(req.page, req.limit, 20, 100),
    words,
    typed: q.normalize('NFC').toLowerCase(),
    conversationId,
    chatnetAccountId: req.chatnetAccountId || undefined,
    from,
    to,
    window: deps.config.MESSAGE_SEARCH_WINDOW,
    viewer: viewerOf(ctx),
    withholdRecalled: readerOf(ctx).withholdRecalled,
  });
  return { data: out.data.map((m) => ({ ...m, highlight: highlight(m.content, q) })), pagination: out.pagination };
}
