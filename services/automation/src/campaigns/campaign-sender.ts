import { randomUUID } from 'node:crypto';
import { directDatabaseUrl } from '@crm/config';
import { ClaimLoop, withTransaction } from '@crm/db';
import { AppError, type CallContext, decodeRemoteError, status as grpcStatus } from '@crm/grpc-kit';
import type { messaging } from '@crm/proto-types';
import type { Deps } from '../deps';
import * as repo from './campaigns.repo';
import type { CampaignRow, Outcome, RecordDetail } from './campaigns.repo';
import * as recipients from './recipients.repo';
import type { RecipientRow } from './recipients.repo';
import { renderFor } from './campaign-text';
import { CAMPAIGNS_CHANNEL } from './campaigns';
import { deliverEmail, SendHooks } from './email/delivery';
import { isUuid } from '@crm/validation';
import { isNotFound, type Member, memberPage } from '../lists';
import { notifications } from '../notifications';
import { lookUpBatch, NoConversationYet, targetOf } from './batch-conversations';

/** A claimed campaign is this instance's for this long, renewed before every send. */
const LEASE_MS = 60_000;
/** A campaign whose next send is further away than this is let go and claimed again when due. */
const HOLD_MAX_MS = 5_000;
/** Hold one campaign at most this long in one go, so other due campaigns get their turn. */
const SLICE_MS = 30_000;
/** Members asked of crm per snapshot page. */
export const SNAPSHOT_PAGE = 500;
/** Recipients read from the queue at a time. */
const BATCH = 50;
/** Waits while messaging (or crm for the snapshot) cannot be reached at all; the last one repeats. */
const SERVICE_BACKOFF_MS = [1_000, 2_000, 5_000, 10_000, 30_000, 60_000];

/**
 * Why a recipient is skipped (issue #26): every lead is reached but those the network cannot reach. The reason is
 * the recipient's `error`, as messaging names it.
 */
const SKIP_REASONS = ['not_on_network', 'no_phone', 'friend_required'] as const;
const skipReasonOf = (err: unknown): string | undefined => {
  if (err instanceof AppError) return (SKIP_REASONS as readonly string[]).includes(err.code) ? err.code : undefined;
  const e = decodeRemoteError(err as never);
  return e.grpcCode === grpcStatus.FAILED_PRECONDITION && (SKIP_REASONS as readonly string[]).includes(e.code) ? e.code : undefined;
};

/** Lanes at most per campaign, and the send time they are sized for (interval 5 ms → 8 lanes). */
const MAX_LANES = 8;
const LANE_LATENCY_MS = 40;
/** A send slot waited for at least this long checks again that the campaign is still active and ours. */
const RECHECK_AFTER_MS = 250;
/** How long a turn trusts what it read of the account holds. */
const HOLDS_REFRESH_MS = 1_000;

/** One recipient's result, for pacing: did it cost a send slot, is messaging down? */
interface Delivery {
  attempted: boolean;
  serviceDown?: string;
}

/** What the lanes of one campaign turn share. */
interface Turn {
  /** The next free send slot (ms). */
  nextSendAt: number;
  backoff: number;
  batch: RecipientRow[];
  refill?: Promise<void>;
  inFlight: Set<string>;
  holds: Map<string, Date>;
  holdsAt: number;
  /** Recipients of the batch messaging said have no conversation (when the batch's conversations were looked up at once). */
  none: NoConversationYet;
  /** Paused, cancelled, rescheduled or taken over: every lane stops. */
  stop: boolean;
  /** Nobody is due right now. */
  exhausted: boolean;
}

/**
 * Sends active campaigns. The campaigns table is the queue of work (a lease per campaign, so one instance
 * paces each campaign) and campaign_recipients the queue of sends; both survive restarts. Every send to a
 * recipient carries clientMessageId = derivedId(campaign, contact), fixed conversation and content, so a
 * send repeated after a crash or a lost answer is recognised by messaging and not sent again. The contact is the one
 * the row was made for, even after a contact merge moved the row (sendKeyContactOf).
 */
export class CampaignSender {
  private readonly owner = randomUUID();
  private readonly loop: ClaimLoop<CampaignRow>;
  private pruneTimer?: NodeJS.Timeout;

  constructor(private readonly deps: Deps) {
    this.loop = new ClaimLoop({
      name: 'campaign sender',
      databaseUrl: directDatabaseUrl(deps.config),
      channel: CAMPAIGNS_CHANNEL,
      pollMs: deps.config.CAMPAIGN_POLL_MS,
      concurrency: deps.config.CAMPAIGN_CONCURRENCY,
      claim: (free) => repo.claimDue(deps.pool, this.owner, free, LEASE_MS),
      work: (c) => this.work(c),
      describe: (c) => ({ campaignId: c.id }),
      log: deps.log,
    });
  }

  private get interval(): number {
    return 60_000 / this.deps.config.CAMPAIGN_SEND_PER_MINUTE;
  }

  private get stopping(): boolean {
    return this.loop.isStopping;
  }

  async start(): Promise<void> {
    await this.loop.start();
    this.pruneTimer = setInterval(() => void recipients.pruneHolds(this.deps.pool).catch(() => undefined), 3_600_000);
  }

  async stop(): Promise<void> {
    clearInterval(this.pruneTimer);
    // The send in hand finishes and is recorded; the campaigns are let go for the next instance at once.
    await this.loop.stop();
    await repo
      .releaseAll(this.deps.pool, this.owner)
      .catch((err) => this.deps.log.warn({ err }, 'campaign sender: could not release leases; they run out by themselves'));
  }

  wake(): void {
    this.loop.wake();
  }

  /** Sleep, cut short by stop(). */
  private sleep(ms: number): Promise<void> {
    return this.loop.sleep(ms);
  }

  /** One turn with a claimed campaign: finish its snapshot, then send, paced, until let go. */
  private async work(c: CampaignRow): Promise<void> {
    const { pool } = this.deps;
    let nextSendAt = c.next_send_at.getTime();
    try {
      if (!c.snapshot_done) {
        const retryAt = await this.snapshot(c);
        if (retryAt !== undefined) {
          nextSendAt = retryAt;
          return;
        }
        // Claimed again (schedule permitting) as soon as it is let go.
        if (this.stopping || (c.schedule && c.schedule.getTime() > Date.now())) return;
      }
      nextSendAt = await this.send(c, nextSendAt);
    } finally {
      await repo.release(pool, c.id, this.owner, new Date(nextSendAt));
    }
  }

  /**
   * Copy the list's members into the recipients, a page at a time; each page and the cursor after it are
   * written in one transaction, so a restart continues after the last page written, and a repeated page
   * inserts nobody twice. Returns when to try again if it could not finish, undefined when done.
   */
  private async snapshot(c: CampaignRow): Promise<number | undefined> {
    const { pool, log } = this.deps;
    let after = c.snapshot_after;
    let added = after ? await recipients.countRecipients(pool, c.id) : 0;
    for (;;) {
      if (this.stopping) return Date.now();
      const kept = await repo.keep(pool, c.id, this.owner, LEASE_MS).then((k) => k ?? this.stillSnapshotting(c.id));
      if (!kept) return Date.now();
      let page;
      try {
        const sys = await this.deps.remote.actingFor(c.org_id, `campaign:${c.id}`);
        page = await memberPage(this.deps, sys, c.list_id, after, SNAPSHOT_PAGE);
      } catch (err) {
        if (isNotFound(err)) {
          await this.stopWithError(c, 'The customer list no longer exists; the campaign was paused');
          return Date.now();
        }
        // crm unreachable: try again later, waiting longer each time (the level is kept with the campaign).
        const wait = SERVICE_BACKOFF_MS[Math.min(c.backoff_level, SERVICE_BACKOFF_MS.length - 1)];
        const reason = `Reading the customer list failed: ${messageOf(err)}`;
        log.warn({ campaignId: c.id, retryInMs: wait, reason }, 'campaign sender: snapshot page failed');
        await repo.pace(pool, c.id, new Date(Date.now() + wait), c.backoff_level + 1, reason);
        return Date.now() + wait;
      }
      const members = page.members
        .filter((m): m is Member => typeof m?.id === 'string' && isUuid(m.id))
        .map((m) => ({ ...m, id: m.id.toLowerCase() }));
      if (members.length !== page.members.length)
        log.warn(
          { campaignId: c.id, dropped: page.members.length - members.length },
          'campaign sender: list members without a valid id were left out',
        );
      // An empty page or a cursor that does not move ends the walk (a list cannot loop us forever).
      const next = members.length > 0 && page.nextAfter && page.nextAfter !== after ? page.nextAfter : '';
      const done = next === '';
      const moved = await withTransaction(pool, async (db) => {
        await recipients.insertMembers(db, c.org_id, c.id, members);
        const count = done ? await recipients.countRecipients(db, c.id) : (added += members.length);
        return repo.snapshotProgress(db, c.id, after, next, done, count);
      });
      // Someone else moved the snapshot on (our lease had run out): they carry on.
      if (!moved) return Date.now();
      if (done) {
        log.info({ campaignId: c.id }, 'campaign sender: recipients snapshotted');
        return undefined;
      }
      after = next;
    }
  }

  /** keep() also asks that the schedule has come; the snapshot is taken at activation whatever the schedule. */
  private async stillSnapshotting(id: string): Promise<CampaignRow | undefined> {
    const { rows } = await this.deps.pool.query<CampaignRow>(
      `UPDATE campaigns SET lease_until = now() + $3 * interval '1 millisecond' WHERE id = $1 AND lease_owner = $2 AND status = 'active' AND NOT snapshot_done RETURNING *`,
      [id, this.owner, LEASE_MS],
    );
    return rows[0];
  }

  private async stopWithError(c: CampaignRow, error: string): Promise<void> {
    await withTransaction(this.deps.pool, async (db) => {
      const paused = await repo.pause(db, c.org_id, c.id, error);
      if (!paused) return;
      await notifications.create(db, notifications.derivedId('campaign_paused', c.id, paused.updated_at.toISOString()), {
        orgId: c.org_id,
        userId: c.created_by ?? undefined,
        audienceRole: c.created_by ? undefined : 'team_lead',
        type: 'campaign_paused',
        title: 'Campaign paused',
        message: `"${c.name}" was paused: ${error}`,
        resourceId: c.id,
        // The sender's loop: a trace of its own.
        traceparent: undefined,
      });
    });
  }

  /**
   * Send to due recipients in list order at the campaign's pace; returns when the campaign wants to send
   * next. At high rates (an interval shorter than a send takes) a few lanes send side by side, still one
   * send slot per interval; at the default rate one lane does.
   */
  private async send(c: CampaignRow, nextSendAt: number): Promise<number> {
    const st: Turn = {
      nextSendAt,
      backoff: c.backoff_level,
      batch: [],
      inFlight: new Set(),
      holds: new Map(),
      holdsAt: 0,
      none: new NoConversationYet(HOLD_MAX_MS),
      stop: false,
      exhausted: false,
    };
    const sliceEnd = Date.now() + SLICE_MS;
    const lanes = Math.max(1, Math.min(MAX_LANES, Math.ceil(LANE_LATENCY_MS / this.interval)));
    // A lane that fails (the database went away) stops the others before the campaign is let go, so no
    // lane goes on sending for a campaign another instance may claim next.
    let failure: unknown;
    await Promise.all(
      Array.from({ length: lanes }, () =>
        this.lane(c, st, sliceEnd).catch((err) => {
          st.stop = true;
          failure ??= err;
        }),
      ),
    );
    if (failure) throw failure;
    if (st.exhausted && !st.stop && !this.stopping) {
      if (await this.completeIfDone(c)) return st.nextSendAt;
      const at = await recipients.nextPendingAt(this.deps.pool, c.id);
      if (at) st.nextSendAt = Math.max(st.nextSendAt, at.getTime());
    }
    return st.nextSendAt;
  }

  private async lane(c: CampaignRow, st: Turn, sliceEnd: number): Promise<void> {
    const { pool, log } = this.deps;
    while (!st.stop && !st.exhausted && !this.stopping && Date.now() < sliceEnd) {
      if (st.nextSendAt - Date.now() > HOLD_MAX_MS) return;
      const rec = await this.nextRecipient(c, st);
      if (!rec) return;
      let outcome: Delivery;
      try {
        outcome = await this.deliver(c, rec, st);
      } finally {
        st.inFlight.delete(rec.contact_id);
      }
      if (outcome.serviceDown) {
        const wait = SERVICE_BACKOFF_MS[Math.min(st.backoff++, SERVICE_BACKOFF_MS.length - 1)];
        log.warn(
          { campaignId: c.id, retryInMs: wait, reason: outcome.serviceDown },
          'campaign sender: messaging (or the mail server) unreachable; backing off',
        );
        st.nextSendAt = Math.max(st.nextSendAt, Date.now() + wait);
        st.batch = [];
        await repo.pace(pool, c.id, new Date(st.nextSendAt), st.backoff, outcome.serviceDown);
      } else if (outcome.attempted) {
        st.backoff = 0;
      }
    }
  }

  /** The next due recipient nobody in this turn is working on; the queue is read a batch at a time. */
  private async nextRecipient(c: CampaignRow, st: Turn): Promise<RecipientRow | undefined> {
    while (st.batch.length === 0 && !st.stop && !st.exhausted) {
      if (!st.refill) {
        st.refill = (async () => {
          // Sends in flight now may still read as pending to the query below even if they are recorded
          // before it answers; nobody starts while the batch is empty, so these are all it must leave out.
          const busy = new Set(st.inFlight);
          // Paused, cancelled, rescheduled to later, or taken over: let go.
          if (!(await repo.keep(this.deps.pool, c.id, this.owner, LEASE_MS))) {
            st.stop = true;
            return;
          }
          const rows = await recipients.due(this.deps.pool, c.id, BATCH + busy.size);
          st.batch = rows.filter((r) => !busy.has(r.contact_id));
          if (st.batch.length === 0) st.exhausted = true;
          else if (this.batchLookups(c)) await lookUpBatch(this.deps, c, st.batch, st.none);
        })().finally(() => (st.refill = undefined));
      }
      await st.refill;
    }
    // Marked busy in the same tick it leaves the batch, before any other lane can start a refill.
    const rec = st.batch.shift();
    if (rec) st.inFlight.add(rec.contact_id);
    return rec;
  }

  /**
   * A batch sent within HOLD_MAX_MS has its conversations looked up at once (at a high rate, one call per recipient
   * is a large share of its cost); at a slower pace the answers would be stale by the time a recipient's turn
   * comes, and a call per recipient costs nothing that matters, so each asks right before its send.
   */
  private batchLookups(c: CampaignRow): boolean {
    return c.type !== 'email' && BATCH * this.interval <= HOLD_MAX_MS;
  }

  /**
   * Wait for this send's slot: one per interval across the lanes. False when the slot is too far away
   * (backing off) or the sender is stopping: the recipient stays pending for the next turn.
   */
  private async takeSlot(c: CampaignRow, st: Turn): Promise<boolean> {
    const slot = Math.max(Date.now(), st.nextSendAt);
    const wait = slot - Date.now();
    if (wait > HOLD_MAX_MS) return false;
    st.nextSendAt = slot + this.interval;
    if (wait > 0) await this.sleep(wait);
    if (this.stopping || st.stop) return false;
    // A late wake-up (a busy event loop, a slow recheck) moves the next slot too: pacing counts from when
    // this send really starts, so a late send is never followed by a short gap that catches up.
    st.nextSendAt = Math.max(st.nextSendAt, Date.now() + this.interval);
    // After a real wait (the default pace is seconds), a pause or cancel made meanwhile must win.
    if (wait >= RECHECK_AFTER_MS && !(await repo.keep(this.deps.pool, c.id, this.owner, LEASE_MS))) {
      st.stop = true;
      return false;
    }
    return true;
  }

  private async holds(c: CampaignRow, st: Turn): Promise<Map<string, Date>> {
    if (Date.now() - st.holdsAt > HOLDS_REFRESH_MS) {
      st.holds = await recipients.activeHolds(this.deps.pool, c.org_id);
      st.holdsAt = Date.now();
    }
    return st.holds;
  }

  /** When nobody is pending any more: completed, with a notification to whoever created the campaign. */
  private async completeIfDone(c: CampaignRow): Promise<boolean> {
    return withTransaction(this.deps.pool, async (db) => {
      const done = await repo.completeIfDone(db, c.id);
      if (!done) return false;
      const n = repo.countsOf(done);
      await notifications.create(db, notifications.derivedId('campaign_completed', c.id), {
        orgId: c.org_id,
        userId: c.created_by ?? undefined,
        audienceRole: c.created_by ? undefined : 'team_lead',
        type: 'campaign_completed',
        title: 'Campaign completed',
        message: `"${c.name}" finished: ${n.sent} sent, ${n.failed} failed, ${n.skipped} skipped of ${n.total}`,
        resourceId: c.id,
        // The sender's loop: a trace of its own.
        traceparent: undefined,
      });
      this.deps.log.info({ campaignId: c.id, ...n }, 'campaign completed');
      return true;
    });
  }

  /** Record a recipient's outcome; a campaign no longer active (or no longer ours) ends the turn. */
  private async record(c: CampaignRow, st: Turn, rec: RecipientRow, outcome: Outcome, detail: RecordDetail): Promise<void> {
    const state = await repo.recordOutcome(this.deps.pool, c.id, rec.contact_id, outcome, detail, this.owner, LEASE_MS);
    if (!state || state.status !== 'active' || state.lease_owner !== this.owner || (state.schedule && state.schedule.getTime() > Date.now()))
      st.stop = true;
  }

  private async defer(c: CampaignRow, rec: RecipientRow, at: Date, reason: string, countAttempt: boolean): Promise<void> {
    await recipients.defer(this.deps.pool, c.id, rec.contact_id, at, reason, countAttempt);
  }

  /** What an email send borrows from this turn: outcome records, pacing, and pausing the campaign. */
  private emailHooks(c: CampaignRow, st: Turn, rec: RecipientRow): SendHooks {
    return {
      record: (outcome, detail) => this.record(c, st, rec, outcome, detail),
      defer: (at, reason, countAttempt) => this.defer(c, rec, at, reason, countAttempt),
      takeSlot: () => this.takeSlot(c, st),
      pause: async (reason) => {
        st.stop = true;
        await this.stopWithError(c, reason);
      },
      nextSendAt: () => new Date(st.nextSendAt),
    };
  }

  /** One recipient: find the conversation, respect account holds, render, take a send slot, send once. */
  private async deliver(c: CampaignRow, rec: RecipientRow, st: Turn): Promise<Delivery> {
    if (c.type === 'email') return deliverEmail(this.deps, c, rec, this.emailHooks(c, st, rec));
    const { pool, remote } = this.deps;
    let sys: Partial<CallContext>;
    try {
      sys = await remote.actingFor(c.org_id, `campaign:${c.id}:${rec.contact_id}`);
    } catch (err) {
      return this.failed(c, st, rec, err, 'automation grant', false);
    }
    let conversationId = rec.conversation_id;
    let accountId = rec.chatnet_account_id;
    if (!conversationId) {
      let conversation: { id: string; chatnetAccountId: string } | undefined;
      // Known to have none (the batch was looked up a moment ago): no call of its own.
      if (!st.none.take(rec.contact_id)) {
        let res: messaging.LatestConversation__Output;
        try {
          res = await remote.messaging().LatestConversationForContact({ contactId: rec.contact_id }, sys);
        } catch (err) {
          return this.failed(c, st, rec, err, 'messaging LatestConversationForContact', false);
        }
        conversation = res.conversation?.id ? res.conversation : undefined;
      }
      if (!conversation) {
        // A lead who never wrote: a conversation is started on the campaign's account (issue #26).
        const started = await this.startConversation(c, st, rec, sys);
        if ('delivery' in started) return started.delivery;
        conversation = started.conversation;
      }
      ({ conversationId, accountId } = targetOf({ conversationId: conversation.id, chatnetAccountId: conversation.chatnetAccountId }));
      // Fixed before the first attempt: a retry goes to the same conversation, as messaging's de-duplication needs.
      await recipients.setTarget(pool, c.id, rec.contact_id, conversationId, accountId);
      rec.conversation_id = conversationId;
      rec.chatnet_account_id = accountId;
    }
    if (accountId) {
      const until = (await this.holds(c, st)).get(accountId);
      if (until && until.getTime() > Date.now()) {
        await this.defer(c, rec, until, 'Waiting: the chat-network account is at its send limit or offline', false);
        return { attempted: false };
      }
    }
    const content = renderFor(
      c.content ?? '',
      { name: rec.name, phone: rec.phone, email: rec.email, status: rec.contact_status, tags: rec.tags, chatnetUid: rec.chatnet_uid },
      c.variables,
    ).trim();
    if (!content) {
      await this.record(c, st, rec, 'failed', { error: 'The rendered message is empty', attempted: false });
      return { attempted: false };
    }
    if (!(await this.takeSlot(c, st))) return { attempted: false };
    let sent: { id?: string; sentAt?: string };
    try {
      sent = await remote.messaging().SendMessage(
        {
          conversationId,
          content,
          contentType: 'text',
          clientMessageId: notifications.derivedId('campaign', c.id, recipients.sendKeyContactOf(rec)),
          source: 'campaign',
        },
        sys,
      );
    } catch (err) {
      // Takes messages only from friends: skipped with its reason, never retried (a friend request is the way).
      const reason = skipReasonOf(err);
      if (reason) {
        await this.record(c, st, rec, 'skipped', { error: reason, attempted: true, nextSendAt: new Date(st.nextSendAt) });
        return { attempted: true };
      }
      return this.failed(c, st, rec, err, 'messaging SendMessage', true);
    }
    const sentAt = sent.sentAt ? new Date(sent.sentAt) : new Date();
    await this.record(c, st, rec, 'sent', {
      messageId: sent.id && isUuid(sent.id) ? sent.id : undefined,
      sentAt: Number.isNaN(sentAt.getTime()) ? new Date() : sentAt,
      attempted: true,
      nextSendAt: new Date(st.nextSendAt),
    });
    return { attempted: true };
  }

  /**
   * Start a conversation with a recipient who has none (messaging StartConversation: the campaign's account, else
   * the one messaging picks). Unreachable leads are skipped with their reason; a lookup over the account's pace
   * waits for Retry-After (holding the campaign's account, so its other recipients wait too).
   */
  private async startConversation(
    c: CampaignRow,
    st: Turn,
    rec: RecipientRow,
    sys: Partial<CallContext>,
  ): Promise<{ conversation: { id: string; chatnetAccountId: string } } | { delivery: Delivery }> {
    try {
      const out = await this.deps.remote
        .messaging()
        .StartConversation({ chatnetAccountId: c.chatnet_account_id ?? '', contactId: rec.contact_id, source: 'campaign' }, sys);
      if (!out.conversation?.id) throw new AppError('unavailable', 'messaging StartConversation answered without a conversation');
      return { conversation: out.conversation };
    } catch (err) {
      const reason = skipReasonOf(err);
      if (reason) {
        await this.record(c, st, rec, 'skipped', { error: reason, attempted: false });
        return { delivery: { attempted: false } };
      }
      const e = err instanceof AppError ? undefined : decodeRemoteError(err as never);
      if (e?.grpcCode === grpcStatus.RESOURCE_EXHAUSTED) {
        const until = new Date(Date.now() + Math.max(1, e.retryAfter ?? 1) * 1000);
        const why = `Waiting: looking people up on the chat network is paced (${e.message})`;
        if (c.chatnet_account_id) {
          await recipients.hold(this.deps.pool, c.org_id, c.chatnet_account_id, until, why);
          st.holds.set(c.chatnet_account_id, until);
        }
        await this.defer(c, rec, until, why, false);
        return { delivery: { attempted: false } };
      }
      return { delivery: await this.failed(c, st, rec, err, 'messaging StartConversation', false) };
    }
  }

  /**
   * Sort a failed call: messaging unreachable (the whole campaign backs off, nobody's attempts count), a
   * send limit (the account is held until Retry-After), a passing problem (this recipient retries on
   * CAMPAIGN_RETRY_SCHEDULE, then fails), or a final answer (failed now).
   */
  private async failed(c: CampaignRow, st: Turn, rec: RecipientRow, err: unknown, what: string, sending: boolean): Promise<Delivery> {
    const { pool, config } = this.deps;
    const fail = async (error: string) => {
      await this.record(c, st, rec, 'failed', { error, attempted: sending });
      return { attempted: sending };
    };
    if (err instanceof AppError) {
      if (err.kind === 'unavailable') return { attempted: false, serviceDown: `${what}: ${err.message}` };
      return fail(`${what}: ${err.message}`);
    }
    const e = decodeRemoteError(err as never);
    const reason = `${what}: ${e.message}`;
    const accountId = rec.chatnet_account_id;
    const holdAccount = async (until: Date) => {
      if (!accountId) return;
      await recipients.hold(pool, c.org_id, accountId, until, reason);
      st.holds.set(accountId, until);
    };
    switch (e.grpcCode) {
      case grpcStatus.UNAVAILABLE:
      case grpcStatus.DEADLINE_EXCEEDED:
      case grpcStatus.CANCELLED:
        return { attempted: false, serviceDown: reason };
      case grpcStatus.RESOURCE_EXHAUSTED: {
        // messaging's governor: this account has had enough for now; its recipients wait until Retry-After.
        const until = new Date(Date.now() + Math.max(1, e.retryAfter ?? 1) * 1000);
        await holdAccount(until);
        await this.defer(c, rec, until, reason, false);
        return { attempted: true };
      }
      case grpcStatus.ALREADY_EXISTS:
        // An earlier attempt with the same key is still in flight at messaging: look again shortly.
        await this.defer(c, rec, new Date(Date.now() + 5_000), reason, false);
        return { attempted: sending };
      case grpcStatus.NOT_FOUND:
      case grpcStatus.INVALID_ARGUMENT:
      case grpcStatus.PERMISSION_DENIED:
      case grpcStatus.UNAUTHENTICATED:
      case grpcStatus.OUT_OF_RANGE:
        return fail(reason);
      default: {
        if (e.code === 'idempotency_key_reused') return fail(reason);
        const wait = config.CAMPAIGN_RETRY_SCHEDULE[rec.attempts];
        if (wait === undefined) return fail(reason);
        const at = new Date(Date.now() + wait);
        // e.g. the account is not connected: its other recipients wait too instead of failing one by one.
        if (e.grpcCode === grpcStatus.FAILED_PRECONDITION) await holdAccount(at);
        await this.defer(c, rec, at, reason, true);
        return { attempted: sending };
      }
    }
  }
}

function messageOf(err: unknown): string {
  if (err instanceof AppError) return err.message;
  const e = err as { code?: unknown };
  if (typeof e?.code === 'number') return decodeRemoteError(err as never).message;
  return (err as Error)?.message ?? String(err);
}
