import { type Pool, type PoolClient, type Queryable, withTransaction } from '@crm/db';
import { enqueueEvents, eventToSend, type EventEnvelope } from '@crm/events';
import type { FamilyModule } from '../events';
import { type ActivityType, recordActivities, recordActivity } from './db/activities.repo';
import * as batches from './db/contact-batches.repo';
import { insertContactAlone, type NewContactStateSql } from './db/contact-create.repo';
import { type ContactJsonRow, insertContactJsonRow, setContactJsonColumns } from './db/contact-json-rows.repo';
import * as repo from './db/contacts.repo';
import { clearStatusFromContacts } from './db/statuses.repo';
import { contactCreatedEvent, contactDeleted, contactUpdated } from './domain/contact-events';
import { describe, diff } from './domain/contact-diff';

/** An activity line a change records on the contact's timeline. */
export interface ActivityLine {
  type: ActivityType;
  data: string;
}

/** One contact an import batch changes: its new values, the locked row before, and the fields that differ. */
export interface ImportedChange {
  values: batches.ImportedValues;
  before: repo.ContactRow;
  changes: string[];
}

const nothingToScore: FamilyModule = async () => undefined;

/**
 * What lead scoring tells the writer about a contact it is about to create (scoring/index.ts): the state row's tags
 * when scoring needs nothing else for it (undefined: score it the usual way, in a transaction), and its statement parts.
 */
export interface NewContactScoring {
  tagsOf(db: Queryable, created: EventEnvelope): Promise<string[] | undefined>;
  sql: NewContactStateSql;
}

/**
 * The contact writer as Deps holds it: a write first names the trace its events continue (`inTrace`), so none can fall
 * back on the active context, which the service goes without unless spans are exported (main.ts).
 */
export interface ContactWriters {
  /**
   * The writer for work in the trace `traceparent`: a handler's `ctx.traceparent`, a consumed event's
   * `eventTraceparent(event)`, or undefined for a timer's or a worker's work (a trace of its own).
   */
  inTrace(traceparent: string | undefined): ContactWriter;
}

/**
 * The one place a contact is created, changed or deleted (issues #14, #30): every path (the contacts API, bulk actions,
 * chat-network identities and friend lists, CSV import, socialnet leads, merges and their undoing, a deleted status or
 * custom field) writes the row, its activity and its outbox event here, in the caller's transaction, and hands the
 * events to `recordFacts` (lead scoring, wired by app.ts) in that same transaction: a contact's scoring facts (created,
 * status, stage, tags added) exist exactly when the change does, instead of crm consuming its own events back from
 * the broker. The rows themselves are written only through contacts/db, the one place that names the table.
 * Callers validate and lock first; the writer does not check permissions.
 *
 * Every event it enqueues (and scoring's announcements of the scores they move) continues `traceparent`, the trace of
 * the work it writes for (see ContactWriters.inTrace); none, a trace of its own.
 */
export class ContactWriter implements ContactWriters {
  constructor(
    private readonly recordFacts: FamilyModule = nothingToScore,
    private readonly newContacts?: NewContactScoring,
    private readonly traceparent?: string,
  ) {}

  inTrace(traceparent: string | undefined): ContactWriter {
    return new ContactWriter(this.recordFacts, this.newContacts, traceparent);
  }

  /** A new contact: the row, its `created` activity, contact.created. A duplicate phone fails as the insert does. */
  async create(tx: PoolClient, c: repo.NewContact, activity: string): Promise<repo.ContactRow> {
    const row = await repo.insertContact(tx, c);
    await this.created(tx, c.orgId, [row], () => activity);
    return row;
  }

  /**
   * A contact the contacts API creates, with no transaction of the caller's around it: when scoring needs nothing but
   * its state row (NewContactScoring) and the org's baseScore is 0, the row, its activity, contact.created and the
   * state row are one statement (insertContactAlone: one round trip instead of six); otherwise create() in a
   * transaction. Either way the same rows and the same event.
   */
  async createAlone(pool: Pool, c: repo.NewContact, activity: string): Promise<repo.ContactRow> {
    if (this.newContacts) {
      const { event, data } = eventToSend(contactCreatedEvent(c.orgId, repo.provisionalContactRow(c, new Date()), this.traceparent));
      const envelope: EventEnvelope = {
        id: event.id,
        type: event.type,
        orgId: event.orgId,
        occurredAt: event.occurredAt.toISOString(),
        version: event.version,
        data,
      };
      const tags = await this.newContacts.tagsOf(pool, envelope);
      const row = tags && (await insertContactAlone(pool, c, { activity, event, tags, state: this.newContacts.sql }));
      if (row) return row;
    }
    return withTransaction(pool, (tx) => this.create(tx, c, activity));
  }

  /** A chat-network identity's contact, unless the org has one for it already (undefined then). */
  async createChatnetIfMissing(tx: PoolClient, c: repo.NewContact, activity: string): Promise<repo.ContactRow | undefined> {
    const row = await repo.insertChatnetContactIfMissing(tx, c);
    if (row) await this.created(tx, c.orgId, [row], () => activity);
    return row;
  }

  /** createChatnetIfMissing for many identities of one org in one statement; returns the contacts it created. */
  async createChatnetManyIfMissing(
    tx: PoolClient,
    orgId: string,
    items: repo.NewChatnetContact[],
    activity: (row: repo.ContactRow) => string,
  ): Promise<repo.ContactRow[]> {
    const rows = await repo.insertChatnetContactsIfMissing(tx, orgId, items);
    await this.created(tx, orgId, rows, activity);
    return rows;
  }

  /**
   * Give a contact without one the network identity a phone lookup found (issue #26): activity and contact.updated.
   * Returns the row as it is now (unchanged when it had an identity already).
   */
  async linkIdentity(tx: PoolClient, orgId: string, id: string, chatnetUid: string): Promise<repo.ContactRow> {
    const row = await repo.setChatnetUidIfNone(tx, orgId, id, chatnetUid);
    if (!row) return (await repo.findContact(tx, orgId, id))!;
    // The UPDATE answered the row as it is now: no second read (a campaign links one lead after another).
    await recordActivity(tx, { orgId, contactId: id, type: 'updated', data: 'Chat-network identity found for the phone number' });
    await this.score(tx, [await contactUpdated(tx, orgId, row, ['chatnetUid'], this.traceparent)]);
    return row;
  }

  /** Contacts (source chatnet) for the friend-list identities the org has none for yet; returns the new ones. */
  async createForIdentities(
    tx: PoolClient,
    orgId: string,
    identities: { uid: string; name: string }[],
    activity: string,
  ): Promise<repo.ContactRow[]> {
    const rows = await batches.insertChatnetContacts(tx, orgId, identities);
    await this.created(tx, orgId, rows, () => activity);
    return rows;
  }

  /**
   * Apply `patch` to the locked row `before`: only fields that really differ are written and reported. With a
   * change, the contact gets an `updated` activity (describing it, unless `activity` is false) and contact.updated
   * listing the changes, except those in `quiet` (bookkeeping nobody subscribes to: written without touching
   * updatedAt or publishing when nothing else changed).
   */
  async update(
    tx: PoolClient,
    orgId: string,
    before: repo.ContactRow,
    patch: repo.ContactPatch,
    opts: { activity?: boolean; quiet?: string[] } = {},
  ): Promise<{ row: repo.ContactRow; changes: string[] }> {
    const { changed, changes } = diff(before, patch);
    if (changes.length === 0) return { row: before, changes };
    const announced = changes.filter((c) => !opts.quiet?.includes(c));
    const row = (await repo.updateContact(tx, orgId, before.id, changed, announced.length > 0))!;
    if (announced.length === 0) return { row, changes };
    if (opts.activity !== false) await recordActivity(tx, { orgId, contactId: row.id, type: 'updated', data: describe(before, row, announced) });
    await this.score(tx, [await contactUpdated(tx, orgId, row, announced, this.traceparent)]);
    return { row, changes };
  }

  /**
   * A bulk action's patches of locked rows, as `update` would apply them one by one (only real changes written, each
   * changed contact with its `updated` activity and one contact.updated), in three statements for all of them rather
   * than three per contact: a 1,000-contact bulk request stays well inside a call's deadline on a loaded machine.
   */
  async updateBulk(tx: PoolClient, orgId: string, items: { before: repo.ContactRow; patch: batches.BulkPatch }[]): Promise<void> {
    const changed = items.map(({ before, patch }) => ({ before, ...diff(before, patch) })).filter((c) => c.changes.length > 0);
    if (changed.length === 0) return;
    const byId = new Map(changed.map((c) => [c.before.id, c]));
    const rows = await batches.updateBulk(
      tx,
      orgId,
      changed.map((c) => ({ id: c.before.id, patch: c.changed as batches.BulkPatch })),
    );
    await recordActivities(
      tx,
      orgId,
      rows.map((r) => ({
        contactId: r.id,
        type: 'updated' as const,
        data: describe(byId.get(r.id)!.before, r, byId.get(r.id)!.changes),
        at: r.updated_at,
      })),
    );
    const { traceparent } = this;
    const events = await enqueueEvents(
      tx,
      rows.map((r) => ({
        type: 'contact.updated',
        orgId,
        data: { contact: repo.toEventContact(r), changes: byId.get(r.id)!.changes },
        traceparent,
      })),
    );
    await this.score(tx, events);
  }

  /**
   * A change written by a statement of its own (an identity linked, a merge copying columns, a merge undone giving
   * them back): the activity, and contact.updated when `changes` lists any field. Returns the row as it is now.
   */
  private async changed(tx: PoolClient, orgId: string, id: string, changes: string[], activity: ActivityLine): Promise<repo.ContactRow> {
    await recordActivity(tx, { orgId, contactId: id, ...activity });
    const row = (await repo.findContact(tx, orgId, id))!;
    if (changes.length > 0) await this.score(tx, [await contactUpdated(tx, orgId, row, changes, this.traceparent)]);
    return row;
  }

  /**
   * A merge (issue #15) as the contact rows see it: the source contact leaves (no contact.deleted: the merges module
   * publishes contact.merged), then the target takes `fill` ({column: value}: what it lacked), with its `merged`
   * activity and contact.updated listing `changes` (the fields filled, as the API names them). The source goes first
   * so the target can take over its phone and chat-network identity (unique per org). Returns the target as it is now.
   */
  async merge(
    tx: PoolClient,
    orgId: string,
    m: { targetId: string; sourceId: string; fill: ContactJsonRow; changes: string[]; activity: ActivityLine },
  ): Promise<repo.ContactRow> {
    await repo.deleteContact(tx, orgId, m.sourceId);
    await setContactJsonColumns(tx, orgId, m.targetId, m.fill, m.changes.length > 0);
    return this.changed(tx, orgId, m.targetId, m.changes, m.activity);
  }

  /**
   * A merge undone: the target gives back `restore` ({column: value}: what the merge filled, freeing the phone and
   * identity the source had), then the source row returns exactly as the merge kept it (same id, timestamps, score;
   * no contact.created: the merges module publishes contact.merge_undone), and the target gets its activity and
   * contact.updated listing `changes`. A unique-violation (another contact took the phone or identity since) fails the
   * insert as it is. Returns the target as it is now.
   */
  async unmerge(
    tx: PoolClient,
    orgId: string,
    u: { targetId: string; restore: ContactJsonRow; changes: string[]; source: ContactJsonRow; activity: ActivityLine },
  ): Promise<repo.ContactRow> {
    await setContactJsonColumns(tx, orgId, u.targetId, u.restore, u.changes.length > 0);
    await insertContactJsonRow(tx, orgId, u.source);
    return this.changed(tx, orgId, u.targetId, u.changes, u.activity);
  }

  /** A custom status deleted: its contacts lose it, each with a contact.updated saying so (no activity, as before). */
  async clearStatus(tx: PoolClient, orgId: string, statusId: string): Promise<void> {
    // One statement for the contacts and one for their events, however many contacts had the status.
    const rows = await clearStatusFromContacts(tx, orgId, statusId);
    const { traceparent } = this;
    const events = await enqueueEvents(
      tx,
      rows.map((row) => ({
        type: 'contact.updated' as const,
        orgId,
        data: { contact: repo.toEventContact(row), changes: ['statusId'] },
        traceparent,
      })),
    );
    await this.score(tx, events);
  }

  /**
   * A deleted custom field's values leave every contact of the org that has one: a change of those contacts
   * (updated_at moves, so incremental sync sees it), with no activity and no contact.updated per contact (see the
   * README). Returns how many contacts had a value.
   */
  async removeCustomField(tx: PoolClient, orgId: string, key: string): Promise<number> {
    return batches.removeCustomFieldKey(tx, orgId, key);
  }

  /**
   * A CSV import batch in multi-row statements: new contacts (source import) and changed ones, each with its
   * activity (at the row's own time) and its contact.created / contact.updated.
   */
  async importBatch(tx: PoolClient, orgId: string, inserts: batches.ImportedValues[], updates: ImportedChange[]): Promise<void> {
    const inserted = await batches.insertImported(tx, orgId, inserts);
    const byId = new Map(updates.map((u) => [u.values.id, u]));
    const rewritten = await batches.updateImported(
      tx,
      orgId,
      updates.map((u) => u.values),
    );
    await recordActivities(tx, orgId, [
      ...inserted.map((r) => ({ contactId: r.id, type: 'created' as const, data: 'Created (source import)', at: r.created_at })),
      ...rewritten.map((r) => ({
        contactId: r.id,
        type: 'updated' as const,
        data: `${describe(byId.get(r.id)!.before, r, byId.get(r.id)!.changes)} (import)`,
        at: r.updated_at,
      })),
    ]);
    const { traceparent } = this;
    const events = await enqueueEvents(tx, [
      ...inserted.map((r) => ({ type: 'contact.created' as const, orgId, data: { contact: repo.toEventContact(r) }, traceparent })),
      ...rewritten.map((r) => ({
        type: 'contact.updated' as const,
        orgId,
        data: { contact: repo.toEventContact(r), changes: byId.get(r.id)!.changes },
        traceparent,
      })),
    ]);
    await this.recordFacts(events, tx, traceparent);
  }

  /** The org's contact deleted, with contact.deleted; what it was (for the audit log), or undefined when unknown. */
  async delete(tx: PoolClient, orgId: string, id: string): Promise<{ name: string; phone: string } | undefined> {
    const deleted = await repo.deleteContact(tx, orgId, id);
    if (deleted) await contactDeleted(tx, orgId, id, this.traceparent);
    return deleted;
  }

  /** Many of the org's contacts deleted in one statement, one contact.deleted each. */
  async deleteMany(tx: PoolClient, orgId: string, ids: string[]): Promise<void> {
    for (const d of await repo.deleteMany(tx, orgId, ids)) await contactDeleted(tx, orgId, d.id, this.traceparent);
  }

  /**
   * Runs `write` with a writer whose scoring facts wait until it is done, then are recorded in one pass for all
   * its changes (a bulk action over 1,000 contacts: one multi-row scoring pass, not one per contact).
   */
  async batch<T>(tx: PoolClient, write: (contacts: ContactWriter) => Promise<T>): Promise<T> {
    const pending: EventEnvelope[] = [];
    const out = await write(new ContactWriter(async (events) => void pending.push(...events), undefined, this.traceparent));
    await this.score(tx, pending);
    return out;
  }

  /**
   * Scoring facts of another event crm publishes about a contact (appointment.created), in the transaction that
   * made it.
   */
  async recordEventFacts(tx: PoolClient, events: EventEnvelope[]): Promise<void> {
    await this.score(tx, events);
  }

  /** New rows' `created` activities and contact.created events, two statements for any number of them. */
  private async created(tx: PoolClient, orgId: string, rows: repo.ContactRow[], activity: (row: repo.ContactRow) => string): Promise<void> {
    if (rows.length === 0) return;
    await recordActivities(
      tx,
      orgId,
      rows.map((row) => ({ contactId: row.id, type: 'created' as const, data: activity(row), at: row.created_at })),
    );
    await this.score(
      tx,
      await enqueueEvents(
        tx,
        rows.map((row) => contactCreatedEvent(orgId, row, this.traceparent)),
      ),
    );
  }

  private async score(tx: PoolClient, events: EventEnvelope[]): Promise<void> {
    if (events.length > 0) await this.recordFacts(events, tx, this.traceparent);
  }
}
