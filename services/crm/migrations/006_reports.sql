-- Custom reports: a saved request, generated in the background into a CSV kept with the row. The row is the
-- durable unit of work: workers claim `generating` rows under a lease (FOR UPDATE SKIP LOCKED), so several
-- instances share the table and a report whose worker died is taken up again when the lease ends.
CREATE TABLE reports (
  id            uuid PRIMARY KEY,
  org_id        uuid NOT NULL,
  name          text NOT NULL,
  -- {metrics, dimensions, dateFrom, dateTo, filters}, validated and normalised by the service before it is stored.
  request       jsonb NOT NULL,
  status        text NOT NULL DEFAULT 'generating' CHECK (status IN ('generating', 'ready', 'failed')),
  -- Why a failed report failed, in words for the user.
  error         text,
  csv           text,
  row_count     integer,
  created_by    uuid,
  created_at    timestamptz NOT NULL DEFAULT now(),
  completed_at  timestamptz,
  -- Claims: a worker holds the report until lease_until; attempts counts claims, so a report that keeps
  -- killing its worker ends failed instead of looping.
  lease_until   timestamptz,
  attempts      integer NOT NULL DEFAULT 0
);
CREATE INDEX reports_org_idx ON reports (org_id, created_at DESC, id DESC);
CREATE INDEX reports_generating_idx ON reports (created_at) WHERE status = 'generating';

-- Message metrics count the message activities of a time range per organization; without this the only way
-- in is per contact. Partial: notes, appointments and updates never need it.
CREATE INDEX contact_activities_messages_idx ON contact_activities (org_id, occurred_at)
  INCLUDE (contact_id, type) WHERE type IN ('message_received', 'message_sent');
