-- The event feed (issue #31): every public event once per organization, in the order its batch committed, kept for
-- EVENT_FEED_RETENTION_DAYS. `position` orders it: fan-out writes take one transaction-level advisory lock before
-- they take positions, so positions are handed out in commit order and a reader that saw a position has seen every
-- smaller one (a cursor never skips an event committed late). `stored_at` is the clock when the row was written
-- (after that lock), so it grows with `position`; retention and a cursor's expiry are judged on it.
-- Three indexes, as the table is written for every public event (issue #28 counts the cost per message): the key
-- (an org's page after a position), the unique event (idempotency) and stored_at (the retention sweep). A replay finds
-- its window through the key (an org's kept rows, filtered by occurred_at): replays are rare, appends are not.
CREATE TABLE event_feed (
  position    bigserial NOT NULL,
  org_id      uuid NOT NULL,
  event_id    text NOT NULL,
  event_type  text NOT NULL,
  occurred_at timestamptz NOT NULL,
  -- The webhook body exactly as deliveries send it ({type, timestamp, data}): a replay sends the same bytes.
  payload     text NOT NULL,
  stored_at   timestamptz NOT NULL,
  PRIMARY KEY (org_id, position),
  -- An event consumed twice (a redelivered batch, a second instance) is kept once.
  UNIQUE (org_id, event_id)
);
CREATE INDEX event_feed_stored_idx ON event_feed (stored_at);

-- A replay of a window of the feed to one endpoint. Its deliveries are webhook_deliveries rows with replay_id set,
-- written pending without a due time; the replay pump (a timer) makes a few of them due at a time, so a replay runs at
-- a bounded rate and never holds more than a few of an endpoint's slots.
CREATE TABLE webhook_replays (
  id              uuid PRIMARY KEY,
  org_id          uuid NOT NULL,
  webhook_id      uuid NOT NULL REFERENCES webhook_settings (id) ON DELETE CASCADE,
  from_at         timestamptz NOT NULL,
  to_at           timestamptz NOT NULL,
  -- Empty: every type the endpoint subscribes to.
  types           text[] NOT NULL,
  count           integer NOT NULL,
  -- The pump's next look at this replay; NULL once every delivery of it has been made due.
  next_release_at timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_replays_due_idx ON webhook_replays (next_release_at) WHERE next_release_at IS NOT NULL;

-- A replayed delivery repeats the event id of the live one (receivers de-duplicate on it), so the unique
-- (webhook_id, event_id) holds for live deliveries only, and once per replay.
ALTER TABLE webhook_deliveries ADD COLUMN replay_id uuid REFERENCES webhook_replays (id) ON DELETE CASCADE;
-- A replayed delivery's event position in the feed: the pump makes a replay's deliveries due oldest event first.
ALTER TABLE webhook_deliveries ADD COLUMN feed_position bigint;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_webhook_id_event_id_key;
CREATE UNIQUE INDEX webhook_deliveries_live_event_idx ON webhook_deliveries (webhook_id, event_id) WHERE replay_id IS NULL;
CREATE UNIQUE INDEX webhook_deliveries_replay_event_idx ON webhook_deliveries (replay_id, event_id) WHERE replay_id IS NOT NULL;
-- The pump takes a replay's next deliveries not yet due, oldest event first; its status counts them.
CREATE INDEX webhook_deliveries_replay_idx ON webhook_deliveries (replay_id, feed_position) WHERE replay_id IS NOT NULL;
