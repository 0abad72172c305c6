-- Lead scoring: each organization's config and rules, the facts scores are computed from (events counted
-- per contact, condition, value and hour), and per-contact scoring state. contacts.lead_score holds the result,
-- so the contact list filters and sorts on it with its existing index.

CREATE TABLE scoring_configs (
  org_id                uuid PRIMARY KEY,
  scoring_model         text NOT NULL DEFAULT 'weighted',
  base_score            integer NOT NULL DEFAULT 0,
  max_score             integer NOT NULL DEFAULT 100,
  -- Fraction of a contribution lost per decay_interval (exponential): weight = (1 - rate) ^ (age / interval).
  decay_rate            double precision NOT NULL DEFAULT 0.05 CHECK (decay_rate >= 0 AND decay_rate < 1),
  decay_interval        text NOT NULL DEFAULT 'daily' CHECK (decay_interval IN ('hourly', 'daily', 'weekly')),
  high_value_threshold  integer NOT NULL DEFAULT 80,
  -- Every change of rules or config bumps version; the worker recomputes the org's scores until
  -- recomputed_version catches up. The lease keeps two replicas from recomputing one org at once.
  version               bigint NOT NULL DEFAULT 1,
  recomputed_version    bigint NOT NULL DEFAULT 0,
  recompute_lease_until timestamptz,
  -- When the org's decay sweep is due next (claimed with SKIP LOCKED, so replicas share orgs).
  next_sweep_at         timestamptz NOT NULL DEFAULT now(),
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX scoring_configs_pending_idx ON scoring_configs (org_id) WHERE version > recomputed_version;
CREATE INDEX scoring_configs_sweep_idx ON scoring_configs (next_sweep_at) WHERE decay_rate > 0;

CREATE TABLE scoring_rules (
  id          uuid PRIMARY KEY,
  org_id      uuid NOT NULL,
  name        text NOT NULL,
  condition   text NOT NULL,
  -- '' matches any value; a lower-case tag for tag_added, a status for status_changed.
  value       text NOT NULL DEFAULT '',
  points      integer NOT NULL,
  weight      double precision NOT NULL DEFAULT 1,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX scoring_rules_org_idx ON scoring_rules (org_id, condition, created_at);

-- What happened to a contact, counted per hour: a chatty contact adds at most one row per condition and hour,
-- not one per message. Facts are kept whether or not a rule uses them, so a new or changed rule applies to the
-- history as well. last_at (the latest occurrence in the hour) is the age the decay is computed from.
CREATE TABLE contact_score_facts (
  org_id      uuid NOT NULL,
  contact_id  uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
  condition   text NOT NULL,
  value       text NOT NULL DEFAULT '',
  bucket      timestamptz NOT NULL,
  occurrences integer NOT NULL,
  last_at     timestamptz NOT NULL,
  PRIMARY KEY (contact_id, condition, value, bucket)
);
-- Pruning facts whose decayed weight is negligible.
CREATE INDEX contact_score_facts_age_idx ON contact_score_facts (org_id, last_at);

CREATE TABLE contact_score_state (
  contact_id          uuid PRIMARY KEY REFERENCES contacts (id) ON DELETE CASCADE,
  org_id              uuid NOT NULL,
  -- The contact's tags as last seen in a contact event (lower case), to tell which tags an update added;
  -- NULL until a contact event was seen. tags_as_of is that event's contact.updatedAt (older events are stale).
  tags                text[],
  tags_as_of          timestamptz,
  -- Sum of the rules' contributions as of computed_at. Exponential decay scales every contribution by the
  -- same factor, so the sweep derives the score at any later time from these two columns alone.
  contrib             double precision NOT NULL DEFAULT 0,
  computed_at         timestamptz,
  -- The moment contacts.lead_score was computed for (the breakdown is shown as of then).
  scored_at           timestamptz,
  -- What subscribers were last told in contact.updated, to publish only crossings and meaningful changes.
  published_score     integer NOT NULL DEFAULT 0,
  published_high      boolean NOT NULL DEFAULT false,
  published_threshold integer
);
-- The decay sweep visits only contacts whose score still moves.
CREATE INDEX contact_score_state_decaying_idx ON contact_score_state (org_id, contact_id) WHERE contrib <> 0;
