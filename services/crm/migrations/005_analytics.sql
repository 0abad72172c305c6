-- Analytics read model, fed by events (see src/analytics/analytics.consumer.ts) and read by the analytics
-- queries. Raw tables keep one row per message, response, resolution, contact and assignment; daily aggregates
-- make a period of any length cost about the same. A query sums the whole UTC days of its period from the
-- aggregates and reads the partial days at its edges from the raw tables, so results are exact either way.

-- ----------------------------------------------------------------------------------------- conversations

-- What a conversation's events reduce to so far, so an event arriving in order is applied in O(1).
-- (last_at, last_kind, last_item) is the ordering key of the newest item applied; an item that sorts before it
-- arrived late and makes the conversation be replayed from its items.
CREATE TABLE analytics_conversations (
  org_id          uuid NOT NULL,
  conversation_id uuid NOT NULL,
  last_at         timestamptz NOT NULL,
  last_kind       smallint NOT NULL,
  last_item       uuid NOT NULL,
  -- First inbound message of the open episode (since the conversation started or was last archived).
  episode_start   timestamptz,
  -- First inbound message still awaiting a human reply.
  turn_start      timestamptz,
  -- Whether the open episode already had its first response.
  episode_replied boolean NOT NULL DEFAULT false,
  PRIMARY KEY (org_id, conversation_id)
);

-- The events of one-to-one conversations that matter for response times: kind 1 inbound message, 2 reply by a
-- person (message.sent with sentByUserId, not automation or campaign), 3 conversation archived (item_id = the
-- event id). Automated sends and group threads are not stored.
CREATE TABLE analytics_items (
  org_id          uuid NOT NULL,
  item_id         uuid NOT NULL,
  conversation_id uuid NOT NULL,
  at              timestamptz NOT NULL,
  kind            smallint NOT NULL CHECK (kind IN (1, 2, 3)),
  user_id         uuid,
  PRIMARY KEY (org_id, item_id)
);
CREATE INDEX analytics_items_conversation ON analytics_items (org_id, conversation_id, at, kind, item_id);
-- Replies per user on the partial days at a period's edges.
CREATE INDEX analytics_items_replies ON analytics_items (org_id, at) INCLUDE (user_id) WHERE kind = 2;

-- Derived from the items: kind 1 a response (first inbound awaiting a reply → the reply; `first` when it is
-- the first response of its episode), kind 2 a resolution (first inbound of an episode → archived).
-- `bucket` is the histogram bucket of `ms` (src/analytics/buckets.ts).
CREATE TABLE analytics_durations (
  org_id          uuid NOT NULL,
  conversation_id uuid NOT NULL,
  kind            smallint NOT NULL CHECK (kind IN (1, 2)),
  first           boolean NOT NULL,
  started_at      timestamptz NOT NULL,
  ended_at        timestamptz NOT NULL,
  ms              bigint NOT NULL,
  bucket          smallint NOT NULL,
  user_id         uuid
);
CREATE INDEX analytics_durations_conversation ON analytics_durations (org_id, conversation_id);
CREATE INDEX analytics_durations_ended ON analytics_durations (org_id, kind, ended_at) INCLUDE (ms, bucket, first, user_id);
-- Exact percentiles: the values of one bucket in a period, read in order.
CREATE INDEX analytics_durations_bucket ON analytics_durations (org_id, kind, bucket, ended_at) INCLUDE (ms);

-- Per UTC day (unit 'd') and per UTC month (unit 'm', start = its first day) of the end, and bucket: series 1
-- responses, 2 first responses, 3 resolutions. Every duration counts in both its day and its month, so a year
-- is read as about twelve months plus the days of the partial months at its ends.
CREATE TABLE analytics_histogram (
  org_id uuid NOT NULL,
  unit   "char" NOT NULL CHECK (unit IN ('d', 'm')),
  start  date NOT NULL,
  series smallint NOT NULL,
  bucket smallint NOT NULL,
  n      integer NOT NULL,
  sum_ms bigint NOT NULL,
  PRIMARY KEY (org_id, unit, start, series, bucket)
);

-- Per UTC day and month (as above) and user: messages the user sent (replies), responses the user gave (with their
-- total time), contacts first assigned to the user (assigned; see analytics_assignments) and, of those, the ones
-- whose conversion is credited to the user (converted; counted on the assignment's day, whenever it converted).
CREATE TABLE analytics_user_stats (
  org_id      uuid NOT NULL,
  unit        "char" NOT NULL CHECK (unit IN ('d', 'm')),
  start       date NOT NULL,
  user_id     uuid NOT NULL,
  replies     integer NOT NULL DEFAULT 0,
  responses   integer NOT NULL DEFAULT 0,
  response_ms bigint NOT NULL DEFAULT 0,
  assigned    integer NOT NULL DEFAULT 0,
  converted   integer NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, unit, start, user_id)
);

-- ----------------------------------------------------------------------------------------------- contacts

-- Each contact as the funnel and team performance see it. `reached_*` are every stage the contact ever held
-- (a union, so the order events arrive in does not matter); converted_* the first time it became a customer
-- and who it was assigned to then. A deleted contact stays as a tombstone (ids and times only) so a late
-- event cannot bring it back.
CREATE TABLE analytics_contacts (
  org_id             uuid NOT NULL,
  contact_id         uuid NOT NULL,
  created_at         timestamptz NOT NULL,
  -- Time of the newest snapshot applied to the "current" fields (assigned_user_id, deal_value).
  snapshot_at        timestamptz NOT NULL,
  assigned_user_id   uuid,
  deal_value         numeric(14, 2) NOT NULL DEFAULT 0,
  reached_lead       boolean NOT NULL DEFAULT false,
  reached_customer   boolean NOT NULL DEFAULT false,
  -- Custom statuses (statusId) ever held, sorted.
  reached_status_ids uuid[] NOT NULL DEFAULT '{}',
  converted_at       timestamptz,
  converted_by       uuid,
  deleted            boolean NOT NULL DEFAULT false,
  PRIMARY KEY (org_id, contact_id)
);
CREATE INDEX analytics_contacts_created ON analytics_contacts (org_id, created_at)
  INCLUDE (reached_lead, reached_customer, reached_status_ids) WHERE NOT deleted;
CREATE INDEX analytics_contacts_converted ON analytics_contacts (org_id, converted_at)
  INCLUDE (converted_by, deal_value) WHERE converted_at IS NOT NULL AND NOT deleted;

-- When each contact was first assigned to each user (created with them as assignee, or assignedUserId changed to
-- them; the earliest such event wins, whatever order events arrive in). `credited`: the contact's conversion is
-- credited to this user (kept in step with analytics_contacts.converted_by). The partial days of a period are
-- read from here; whole days and months from analytics_user_stats.
CREATE TABLE analytics_assignments (
  org_id     uuid NOT NULL,
  contact_id uuid NOT NULL,
  user_id    uuid NOT NULL,
  at         timestamptz NOT NULL,
  credited   boolean NOT NULL DEFAULT false,
  PRIMARY KEY (org_id, contact_id, user_id)
);
CREATE INDEX analytics_assignments_at ON analytics_assignments (org_id, at) INCLUDE (user_id, credited);

-- Contacts per UTC creation day and set of stages reached: a handful of rows per day, whatever the contacts.
CREATE TABLE analytics_funnel_days (
  org_id             uuid NOT NULL,
  day                date NOT NULL,
  reached_lead       boolean NOT NULL,
  reached_customer   boolean NOT NULL,
  reached_status_ids uuid[] NOT NULL,
  n                  integer NOT NULL,
  PRIMARY KEY (org_id, day, reached_lead, reached_customer, reached_status_ids)
);

-- Contacts that exist already enter with their current state (the history before this migration is unknown:
-- a customer counts as converted at its last update, an assignee as assigned at creation). Messages live in
-- messaging's database, so response times start with the events that arrive from now on.
INSERT INTO analytics_contacts (org_id, contact_id, created_at, snapshot_at, assigned_user_id, deal_value, reached_lead,
                                reached_customer, reached_status_ids, converted_at, converted_by)
SELECT org_id, id, created_at, updated_at, assigned_user_id, deal_value, status = 'lead', status = 'customer',
       CASE WHEN status_id IS NULL THEN '{}'::uuid[] ELSE ARRAY[status_id] END,
       CASE WHEN status = 'customer' THEN updated_at END, CASE WHEN status = 'customer' THEN assigned_user_id END
FROM contacts;

INSERT INTO analytics_assignments (org_id, contact_id, user_id, at, credited)
SELECT org_id, id, assigned_user_id, created_at, status = 'customer' FROM contacts WHERE assigned_user_id IS NOT NULL;

INSERT INTO analytics_user_stats (org_id, unit, start, user_id, assigned, converted)
SELECT a.org_id, u.unit, u.start, a.user_id, count(*), count(*) FILTER (WHERE a.credited)
FROM analytics_assignments a,
     LATERAL (VALUES ('d'::"char", (a.at AT TIME ZONE 'UTC')::date), ('m'::"char", date_trunc('month', a.at AT TIME ZONE 'UTC')::date)) u(unit, start)
GROUP BY 1, 2, 3, 4;

INSERT INTO analytics_funnel_days (org_id, day, reached_lead, reached_customer, reached_status_ids, n)
SELECT org_id, (created_at AT TIME ZONE 'UTC')::date, reached_lead, reached_customer, reached_status_ids, count(*)
FROM analytics_contacts GROUP BY 1, 2, 3, 4, 5;
