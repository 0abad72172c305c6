-- One-time jobs that run at start after the migrations (they need the outbox, which is installed after them):
-- a row here means the job has run in this database, so several instances and restarts run it once.
CREATE TABLE backfills (
  name    text PRIMARY KEY,
  done_at timestamptz NOT NULL DEFAULT now()
);
