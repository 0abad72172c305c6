import { withTransaction, type Pool } from '@crm/db';

/** LISTEN/NOTIFY channel the outbox uses; notifications are per database, so one name serves every service. */
export const OUTBOX_CHANNEL = 'crm_events_outbox';

// Any fixed number works; it only has to differ from the other advisory locks (migrate uses 72707369).
const INSTALL_LOCK = 72707370;

const SQL = `
CREATE TABLE IF NOT EXISTS outbox (
  seq          bigserial PRIMARY KEY,
  id           uuid NOT NULL UNIQUE,
  type         text NOT NULL,
  org_id       text NOT NULL,
  occurred_at  timestamptz NOT NULL,
  data         jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz
);
-- The W3C trace context of the span that enqueued the event; the relay sends it as the AMQP header
-- \`traceparent\`. Added here, not in CREATE TABLE, so outboxes created before it get the column too; looked
-- up first because ALTER TABLE would lock the outbox at every start even when the column exists.
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                  WHERE table_schema = current_schema() AND table_name = 'outbox' AND column_name = 'traceparent') THEN
    ALTER TABLE outbox ADD COLUMN traceparent text;
  END IF;
  -- The schema version of the event's data (packages/events schemas); the relay puts it in the envelope.
  IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                  WHERE table_schema = current_schema() AND table_name = 'outbox' AND column_name = 'version') THEN
    ALTER TABLE outbox ADD COLUMN version int NOT NULL DEFAULT 1;
  END IF;
END $$;
-- The relay only ever reads the unpublished tail, in order; this index stays as small as that tail.
CREATE INDEX IF NOT EXISTS outbox_unpublished_idx ON outbox (seq) WHERE published_at IS NULL;
CREATE INDEX IF NOT EXISTS outbox_published_at_idx ON outbox (published_at) WHERE published_at IS NOT NULL;

CREATE TABLE IF NOT EXISTS processed_events (
  event_id     uuid NOT NULL,
  consumer     text NOT NULL,
  processed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (event_id, consumer)
);
CREATE INDEX IF NOT EXISTS processed_events_prune_idx ON processed_events (consumer, processed_at);
`;

/**
 * Create the outbox and processed_events tables when missing. Idempotent; services call it at start after
 * their own migrations. CREATE ... IF NOT EXISTS is not safe against a concurrent CREATE of the same table
 * (two replicas starting together), hence the advisory lock.
 */
export async function installEventTables(pool: Pool): Promise<void> {
  await withTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [INSTALL_LOCK]);
    await client.query(SQL);
  });
}
