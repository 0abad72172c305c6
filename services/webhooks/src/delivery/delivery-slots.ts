import type { Announcement, ClaimedDelivery } from '../db/deliveries.repo';

/** What the slots need of a claimed row: whose slot it takes. */
export type ClaimedRow = Pick<ClaimedDelivery, 'webhook_id'>;

/**
 * Announced ids kept while every slot is busy. Past this the list is dropped and the general claim (due
 * rows, oldest first) takes over: the rows are in the table either way, the ids only save a scan.
 */
export const MAX_ANNOUNCED = 20_000;
/**
 * An endpoint with a backlog (more announced than it has free slots) is claimed for once half its slots are free,
 * or this long after its first slot freed: behind a fast endpoint every finished request frees a slot, and a claim
 * per request would make the queue's round trips, not the requests, the cost of each delivery. Without a backlog
 * a new delivery is claimed at once.
 */
export const BACKLOG_CLAIM_WAIT_MS = 5;

export interface SlotOptions {
  /** Attempts in flight at once to one endpoint in this instance. */
  endpointConcurrency: number;
  maxAnnounced?: number;
  backlogClaimWaitMs?: number;
}

/** The claim by endpoint the worker should make now: rows wanted per endpoint, and what was heard of each. */
export interface EndpointClaimPlan {
  wants: Map<string, number>;
  heard: Map<string, number>;
  /** Some endpoint is gathering its free slots: come round again once it has waited long enough. */
  gatherLater: boolean;
}

/**
 * What the delivery worker knows of its endpoint slots and of the due rows it heard of, kept apart from the claiming
 * (SQL) and the timers so it can be reasoned about and tested alone: attempts in flight per endpoint (bounded by
 * `endpointConcurrency`), endpoints heard to have due rows, announced ids of no known endpoint, endpoints whose free
 * slots are being gathered for one claim, and whether a general claim (due rows, oldest first) is wanted. The worker
 * asks it what to claim and tells it what was claimed; the instance-wide bound is the ClaimLoop's, not this.
 */
export class DeliverySlots {
  private readonly bound: number;
  private readonly maxAnnounced: number;
  private readonly backlogClaimWaitMs: number;
  /** Attempts in flight per endpoint id (entries removed at zero). */
  private readonly inFlight = new Map<string, number>();
  /**
   * Endpoints that have due deliveries, as far as this instance heard (announced new ones, or left behind at their
   * bound): how many, at least. Their oldest due rows are claimed by endpoint, as many as each has free slots.
   * Insertion order is the order they are served in.
   */
  private readonly hinted = new Map<string, number>();
  /** Announced ids of no known endpoint (an earlier version's payload), oldest first. */
  private readonly unplaced = new Set<string>();
  /** Endpoints with a backlog whose free slots are being gathered for one claim: since when. */
  private readonly gathering = new Map<string, number>();
  /** A general claim may find due rows (a poll tick, a retry timer, rows left for lack of a slot). */
  private wanted = false;

  constructor(o: SlotOptions) {
    this.bound = o.endpointConcurrency;
    this.maxAnnounced = o.maxAnnounced ?? MAX_ANNOUNCED;
    this.backlogClaimWaitMs = o.backlogClaimWaitMs ?? BACKLOG_CLAIM_WAIT_MS;
  }

  /** Attempts in flight per endpoint, as the SQL claim takes them (`ClaimRequest.busy`). */
  get busy(): ReadonlyMap<string, number> {
    return this.inFlight;
  }

  inFlightTo(endpoint: string): number {
    return this.inFlight.get(endpoint) ?? 0;
  }

  /** Takes a slot of the endpoint when it has a free one (a first attempt made before its row is written). */
  tryTake(endpoint: string): boolean {
    const busy = this.inFlightTo(endpoint);
    if (busy >= this.bound) return false;
    this.inFlight.set(endpoint, busy + 1);
    return true;
  }

  /** Counts a claimed row's slot: the claim already kept to the bound, so this never refuses. */
  take(endpoint: string): void {
    this.inFlight.set(endpoint, this.inFlightTo(endpoint) + 1);
  }

  /** Gives back one slot of the endpoint; true when a claim may now find something (the endpoint or others wait). */
  release(endpoint: string): boolean {
    const n = (this.inFlight.get(endpoint) ?? 1) - 1;
    if (n > 0) this.inFlight.set(endpoint, n);
    else this.inFlight.delete(endpoint);
    return this.hinted.has(endpoint) || this.wanted;
  }

  /** A NOTIFY of new due deliveries: by endpoint, or (an earlier version's payload) ids alone. */
  announce({ webhookId, ids }: Announcement): void {
    if (ids.length === 0) return;
    if (webhookId !== undefined) this.hint(webhookId, ids.length);
    else if (this.unplaced.size + ids.length > this.maxAnnounced) {
      this.unplaced.clear();
      this.wanted = true;
    } else for (const id of ids) this.unplaced.add(id);
  }

  /** The endpoint has at least `n` more due rows. */
  hint(endpoint: string, n: number): void {
    this.hinted.set(endpoint, (this.hinted.get(endpoint) ?? 0) + n);
  }

  /** Endpoints heard of, in the order they are served (the general claim skips them: they have their own). */
  heardOf(): string[] {
    return [...this.hinted.keys()];
  }

  /** Ask for a general claim (due rows, oldest first). */
  want(): void {
    this.wanted = true;
  }

  /** Whether a general claim is wanted; asking takes the wish (a claim made now answers it). */
  takeWanted(): boolean {
    const wanted = this.wanted;
    this.wanted = false;
    return wanted;
  }

  get unplacedCount(): number {
    return this.unplaced.size;
  }

  /** Takes up to `n` announced ids of no known endpoint, oldest first, out of the list. */
  takeUnplaced(n: number): string[] {
    const ids = [...this.unplaced].slice(0, n);
    for (const id of ids) this.unplaced.delete(id);
    return ids;
  }

  /** Rows may be left behind: something heard of or wanted that a claim has not served yet. */
  get left(): boolean {
    return this.wanted || this.hinted.size > 0 || this.unplaced.size > 0;
  }

  /**
   * Which endpoints heard of to claim for now (`now` in performance.now() milliseconds), and how many rows of each:
   * as many as it has free slots, within the instance's `free`; an endpoint with a backlog waits until half its slots
   * are free or the backlog wait has passed. Endpoints planned are taken out of the hints (`claimedByEndpoint` or
   * `endpointClaimFailed` puts them back).
   */
  planEndpointClaims(free: number, now: number): EndpointClaimPlan {
    const plan: EndpointClaimPlan = { wants: new Map(), heard: new Map(), gatherLater: false };
    let total = 0;
    for (const [endpoint, count] of [...this.hinted]) {
      const room = free - total;
      if (room <= 0) break;
      const inFlight = this.inFlightTo(endpoint);
      const slots = this.bound - inFlight;
      if (slots <= 0) continue;
      if (inFlight > 0 && slots < Math.min(Math.ceil(this.bound / 2), count)) {
        const since = this.gathering.get(endpoint);
        if (since === undefined) this.gathering.set(endpoint, now);
        if (since === undefined || now - since < this.backlogClaimWaitMs) {
          plan.gatherLater = true;
          continue;
        }
      }
      this.gathering.delete(endpoint);
      const n = Math.min(slots, room);
      plan.wants.set(endpoint, n);
      plan.heard.set(endpoint, count);
      this.hinted.delete(endpoint);
      total += n;
    }
    return plan;
  }

  /** The planned claim failed: what was heard of is heard of still. */
  endpointClaimFailed(plan: EndpointClaimPlan): void {
    for (const [endpoint, count] of plan.heard) this.hint(endpoint, count);
  }

  /**
   * The planned claim returned these rows: their slots are taken. An endpoint that gave as many as asked for may have
   * more (heard of meanwhile or not), so it moves behind the others; one that gave fewer has none due now and is
   * forgotten until it is announced again.
   */
  claimedByEndpoint(plan: EndpointClaimPlan, rows: readonly ClaimedRow[]): void {
    const got = new Map<string, number>();
    for (const { webhook_id: endpoint } of rows) {
      got.set(endpoint, (got.get(endpoint) ?? 0) + 1);
      this.take(endpoint);
    }
    for (const [endpoint, n] of plan.wants) {
      const taken = got.get(endpoint) ?? 0;
      if (taken === n) this.hint(endpoint, Math.max(1, plan.heard.get(endpoint)! - taken));
    }
  }

  /** Endpoints at their bound: the general claim does not scan them. */
  full(): string[] {
    return [...this.inFlight].filter(([, n]) => n >= this.bound).map(([id]) => id);
  }

  /**
   * After a general claim (whose rows' slots are taken): what it did not look at is looked at by endpoint once a slot
   * frees: the endpoints that were at their bound before it (`full`) and those it filled.
   */
  afterGeneralClaim(full: string[], rows: readonly ClaimedRow[]): void {
    for (const id of full) this.hint(id, 1);
    for (const { webhook_id: endpoint } of rows)
      if (this.inFlightTo(endpoint) >= this.bound) this.hinted.set(endpoint, this.hinted.get(endpoint) ?? 1);
  }
}
