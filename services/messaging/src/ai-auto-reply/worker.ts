import { directDatabaseUrl } from '@crm/config';
import { ClaimLoop, iso, type Queryable, withTransaction } from '@crm/db';
import { recordAudit } from '@crm/events';
import { AppError, status as grpcStatus } from '@crm/grpc-kit';
import type { ai } from '@crm/proto-types';
import type { Deps } from '../deps';
import { convs, messages } from '../conversations';
import { insertAssistantNote } from '../notes';
import { sendOutcomeOf } from '../scheduled';
import { sendAutomatic } from '../send';
import { businessHoursFor, businessHoursStatusAt } from '../service-levels';
import { handOff } from './handoff';
import * as repo from './replies.repo';
import { autoReplySettings as settings } from '../auto-reply-settings';

/** ai not answering: asked again this many times (after 2, 4, 8… s), then a person takes over. */
const MAX_ATTEMPTS = 4;
/** The conversation's most recent messages sent to ai with the one to answer. */
const CONTEXT_MESSAGES = 20;

/**
 * The guarded auto-reply's worker (issue #32 item 5, ARCHITECTURE.md Timers): claims the rows the inbound batches
 * queued (FOR UPDATE SKIP LOCKED under a lease; woken by their NOTIFY), so each message is looked at once across
 * instances and restarts, outside the inbound path. For each: still on (messaging's copy of ai's settings), outside
 * business hours when asked, not handed over already, under the reply limit; then ai decides (its engine's confidence
 * against the threshold, a customer asking for a person) and this acts: the answer is sent with source `ai` (the
 * audit entry and a private note with its sources committed with it), or the conversation goes to a person.
 */
export class AutoReplyWorker {
  private readonly loop: ClaimLoop<repo.AutoReplyRow>;
  private readonly leaseMs: number;

  constructor(private readonly deps: Deps) {
    this.leaseMs = deps.config.AI_AUTO_REPLY_DEADLINE_MS + deps.config.CONNECTOR_DEADLINE_MS + 30_000;
    this.loop = new ClaimLoop({
      name: 'AI auto-replies',
      databaseUrl: directDatabaseUrl(deps.config),
      channel: repo.AUTO_REPLIES_CHANNEL,
      concurrency: 4,
      claim: (free) => repo.claimDue(deps.pool, free, this.leaseMs),
      nextDueInMs: () => repo.nextDueInMs(deps.pool),
      work: (r) => this.handle(r),
      describe: (r) => ({ autoReplyId: r.id, orgId: r.org_id, conversationId: r.conversation_id }),
      log: deps.log,
    });
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async handle(r: repo.AutoReplyRow): Promise<void> {
    const { deps } = this;
    const orgId = r.org_id;
    const skip = (why: string) => repo.finish(deps.pool, r, 'skipped', why);
    const conv = await convs.findById(deps.pool, orgId, r.conversation_id);
    if (!conv) return skip('not_found');
    const s = await settings.find(deps.pool, orgId);
    if (!s?.enabled || !s.account_ids.includes(conv.chatnet_account_id)) return skip('off');
    if (s.only_outside_hours) {
      const { hours } = await businessHoursFor(deps, orgId, conv.chatnet_account_id);
      if (businessHoursStatusAt(hours, new Date()).open) return skip('business_hours');
    }
    const standing = await repo.standing(deps.pool, orgId, conv.id);
    if (standing.handedOff) return skip('waiting_for_person');
    if (standing.aiInRow >= s.max_replies) {
      return handOff(
        deps,
        r,
        'max_replies',
        `it already answered ${standing.aiInRow} times in a row without a person replying (the limit is ${s.max_replies})`,
      );
    }
    const page = await messages.page(deps.pool, orgId, conv.id, CONTEXT_MESSAGES, 0);
    const turns = page.rows.reverse().map((m) => ({
      id: m.id,
      content: m.content,
      contentType: m.content_type,
      fromCustomer: m.direction === 'inbound',
      senderName: m.sender_name,
      sentAt: iso(m.sent_at),
    }));
    // Another message came after it and will have its own row (or is this row's now): nothing older is answered.
    if (!turns.some((t) => t.id === r.message_id)) return skip('not_found');
    let decision: ai.AutoReplyResult__Output;
    try {
      decision = await deps.remote.autoReply(
        // Under the stamp of the customer's message: ai answers only for the org the connector received it in.
        { orgId, requestId: `ai-auto-reply:${r.id}`, origin: r.origin ?? undefined },
        {
          conversationId: conv.id,
          messageId: r.message_id,
          contactName: conv.contact_name ?? '',
          chatnetAccountId: conv.chatnet_account_id,
          messages: turns,
        },
      );
    } catch (err) {
      deps.log.warn({ err, autoReplyId: r.id, attempts: r.attempts }, 'ai did not answer the auto-reply');
      // Refused (no stamp on a row queued before they were kept): asking again changes nothing.
      const refused = (err as { code?: number }).code === grpcStatus.PERMISSION_DENIED;
      if (!refused && r.attempts < MAX_ATTEMPTS) return repo.retryLater(deps.pool, r.id, 1000 * 2 ** r.attempts, 'ai_unavailable');
      return handOff(deps, r, 'ai_unavailable', 'the AI service did not answer');
    }
    if (decision.decision === 'off') return skip('off');
    if (decision.decision !== 'reply') return handOff(deps, r, decision.reason, lowerFirst(decision.reasonText || decision.reason));
    await this.reply(r, conv.id, decision);
  }

  /** The answer to the customer, source `ai`; stored with its audit entry, its note and the row's outcome. */
  private async reply(r: repo.AutoReplyRow, conversationId: string, d: ai.AutoReplyResult__Output): Promise<void> {
    const { deps } = this;
    const orgId = r.org_id;
    const stored = async (db: Queryable, messageId: string) => {
      await repo.finish(db, r, 'replied', d.engine, messageId);
      await insertAssistantNote(db, orgId, conversationId, noteOf(d));
      // Every AI answer a customer received is in the audit log (issue #32 item 6): what was asked (its hash: the
      // prompt as it left, personal data replaced), who answered, how sure it was.
      await recordAudit(
        db,
        { orgId, requestId: `ai-auto-reply:${r.id}` },
        {
          action: 'ai_reply.sent',
          resourceType: 'conversation',
          resourceId: conversationId,
          details: {
            messageId,
            inReplyTo: r.message_id,
            promptHash: d.promptHash,
            provider: d.engine,
            model: d.model,
            confidence: d.confidence,
            minConfidence: d.minConfidence,
            ...(d.fallbackReason ? { fallbackReason: d.fallbackReason } : {}),
          },
        },
      );
    };
    try {
      // Keyed by the row and the message answered: a row taken by a newer message meanwhile sends that one's answer anew.
      const key = `ai:${r.id}:${r.message_id}`;
      const sent = await sendAutomatic(deps, { key, orgId, conversationId, content: d.answer }, stored, 'ai');
      if (sent.replayed) await withTransaction(deps.pool, (db) => stored(db, sent.id));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const outcome = sendOutcomeOf(err, deps.config.IDEMPOTENCY_PENDING_TIMEOUT_MS);
      if ('failed' in outcome || r.attempts >= MAX_ATTEMPTS) {
        return handOff(deps, r, 'send_failed', `its answer could not be sent (${'failed' in outcome ? outcome.failed : outcome.error})`);
      }
      await repo.retryLater(deps.pool, r.id, outcome.retryInMs, outcome.error);
    }
  }
}

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

/** The private note beside an AI answer: who answered, how sure, and what it drew on. */
function noteOf(d: ai.AutoReplyResult__Output): string {
  const head = `AI assistant answered (${d.engine}, ${d.model}; confidence ${d.confidence}, threshold ${d.minConfidence}).`;
  const fallback = d.fallbackReason ? ` ${d.fallbackReason}.` : '';
  const sources = d.sources.length
    ? `\nSources:\n${d.sources.map((s) => `- ${s.title}${s.excerpt ? `: ${s.excerpt}` : ''}`).join('\n')}`
    : '\nSources: none (answered from the conversation alone).';
  return `${head}${fallback}${sources}`;
}
