-- CRM: contacts, custom statuses, notes, friends, activities and appointments. Every row carries org_id and
-- every query filters on it.

CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE EXTENSION IF NOT EXISTS unaccent;

-- Search folds case and accents ("nguyen" finds "Nguyễn", "đ" folds to "d"). unaccent() is only STABLE (its
-- dictionary could change), so it cannot feed a generated column directly; naming the dictionary explicitly
-- makes the wrapper safe to declare IMMUTABLE, the usual pattern.
CREATE OR REPLACE FUNCTION crm_fold(text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  AS $$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, $1)) $$;

CREATE TABLE contact_statuses (
  id          uuid PRIMARY KEY,
  org_id      uuid NOT NULL,
  name        text NOT NULL,
  color       text NOT NULL DEFAULT '',
  position    integer NOT NULL DEFAULT 0,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX contact_statuses_name_uq ON contact_statuses (org_id, lower(name));

CREATE TABLE contacts (
  id               uuid PRIMARY KEY,
  org_id           uuid NOT NULL,
  name             text NOT NULL DEFAULT '',
  email            text NOT NULL DEFAULT '',
  -- Normalised (E.164 when the number can be parsed), so one person has one spelling of their number.
  phone            text NOT NULL DEFAULT '',
  source           text NOT NULL DEFAULT 'manual',
  status           text NOT NULL DEFAULT 'new',
  status_id        uuid REFERENCES contact_statuses (id) ON DELETE SET NULL,
  assigned_user_id uuid,
  avatar           text NOT NULL DEFAULT '',
  lead_score       integer NOT NULL DEFAULT 0,
  chatnet_uid      text,
  -- Thread types (user, group) this contact was seen in on the chat network.
  thread_types     text[] NOT NULL DEFAULT '{}',
  notes            text NOT NULL DEFAULT '',
  tags             text[] NOT NULL DEFAULT '{}',
  last_activity    timestamptz NOT NULL DEFAULT now(),
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  -- true: reachable on the chat network (identity known); false: no identity and no phone to look one up
  -- with; NULL (unknown): a phone but no chat-network identity yet.
  has_chatnet      boolean GENERATED ALWAYS AS (
                     CASE WHEN chatnet_uid IS NOT NULL THEN true WHEN phone = '' THEN false ELSE NULL END) STORED,
  -- Text search covers name and email; phone numbers are searched through their own indexes (below), since
  -- numbers share so many digit trigrams that a trigram index cannot narrow them down.
  search_text      text GENERATED ALWAYS AS (crm_fold(name || ' ' || email)) STORED
);

-- One contact per chat-network identity and per phone number in an organization: these make the upsert
-- from the chat network idempotent under concurrency and the duplicate rule hold under races.
CREATE UNIQUE INDEX contacts_chatnet_uid_uq ON contacts (org_id, chatnet_uid) WHERE chatnet_uid IS NOT NULL;
CREATE UNIQUE INDEX contacts_phone_uq ON contacts (org_id, phone) WHERE phone <> '';

-- List orderings (keyset-friendly: id breaks ties).
CREATE INDEX contacts_last_activity_idx ON contacts (org_id, last_activity DESC, id DESC);
CREATE INDEX contacts_created_at_idx ON contacts (org_id, created_at DESC, id DESC);
CREATE INDEX contacts_lead_score_idx ON contacts (org_id, lead_score DESC, id DESC);
CREATE INDEX contacts_status_idx ON contacts (org_id, status);
CREATE INDEX contacts_source_idx ON contacts (org_id, source);
CREATE INDEX contacts_status_id_idx ON contacts (org_id, status_id) WHERE status_id IS NOT NULL;
CREATE INDEX contacts_assigned_idx ON contacts (org_id, assigned_user_id) WHERE assigned_user_id IS NOT NULL;
-- Substring search over name, email and phone: trigrams, with org_id in the same GIN index (btree_gin) so a
-- big organization's neighbours never enter the bitmap.
CREATE INDEX contacts_search_trgm_idx ON contacts USING gin (org_id, search_text gin_trgm_ops);
CREATE INDEX contacts_has_chatnet_idx ON contacts (org_id, has_chatnet);
CREATE INDEX contacts_tags_idx ON contacts USING gin (tags);
CREATE INDEX contacts_thread_types_idx ON contacts USING gin (thread_types);
-- Phone search: the number's beginning (E.164 or national prefix) and its end (the last digits people quote).
CREATE INDEX contacts_phone_prefix_idx ON contacts (org_id, phone text_pattern_ops) WHERE phone <> '';
CREATE INDEX contacts_phone_suffix_idx ON contacts (org_id, reverse(phone) text_pattern_ops) WHERE phone <> '';

-- Contacts per organization without counting rows: every insert or delete statement appends its net change
-- per org (statement triggers, so concurrent writers never wait on one counter row); the service folds the
-- rows together now and then. The unfiltered list total is then a sum over a handful of rows.
CREATE TABLE contact_count_deltas (
  id      bigserial PRIMARY KEY,
  org_id  uuid NOT NULL,
  delta   bigint NOT NULL
);
CREATE INDEX contact_count_deltas_org_idx ON contact_count_deltas (org_id) INCLUDE (delta);

CREATE FUNCTION crm_contacts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO contact_count_deltas (org_id, delta) SELECT org_id, count(*) FROM new_rows GROUP BY org_id;
  RETURN NULL;
END $$;
CREATE FUNCTION crm_contacts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO contact_count_deltas (org_id, delta) SELECT org_id, -count(*) FROM old_rows GROUP BY org_id;
  RETURN NULL;
END $$;
CREATE TRIGGER contacts_count_inserted AFTER INSERT ON contacts
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION crm_contacts_inserted();
CREATE TRIGGER contacts_count_deleted AFTER DELETE ON contacts
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION crm_contacts_deleted();

CREATE TABLE contact_notes (
  id          uuid PRIMARY KEY,
  org_id      uuid NOT NULL,
  contact_id  uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
  content     text NOT NULL,
  created_by  uuid,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX contact_notes_contact_idx ON contact_notes (contact_id, created_at DESC);

-- Who is a friend of which connected chat-network account; fed by chatnet_account.friends.
CREATE TABLE contact_friends (
  id                uuid PRIMARY KEY,
  org_id            uuid NOT NULL,
  contact_id        uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
  account_id        uuid NOT NULL,
  chatnet_uid       text NOT NULL,
  display_name      text NOT NULL DEFAULT '',
  relationship_kind text NOT NULL DEFAULT 'friend',
  added_at          timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, account_id, chatnet_uid)
);
CREATE INDEX contact_friends_contact_idx ON contact_friends (contact_id);

-- The contact's timeline: created, updated, notes, appointments, messages.
CREATE TABLE contact_activities (
  id           bigserial PRIMARY KEY,
  org_id       uuid NOT NULL,
  contact_id   uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
  type         text NOT NULL,
  data         text NOT NULL DEFAULT '',
  occurred_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX contact_activities_contact_idx ON contact_activities (contact_id, occurred_at DESC, id DESC);

CREATE TABLE appointments (
  id               uuid PRIMARY KEY,
  org_id           uuid NOT NULL,
  contact_id       uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
  title            text NOT NULL DEFAULT '',
  description      text NOT NULL DEFAULT '',
  scheduled_at     timestamptz NOT NULL,
  duration         integer NOT NULL DEFAULT 60,
  type             text NOT NULL DEFAULT 'meeting',
  location         text NOT NULL DEFAULT '',
  assigned_user_id uuid,
  status           text NOT NULL DEFAULT 'scheduled' CHECK (status IN ('scheduled', 'completed', 'cancelled')),
  notes            text NOT NULL DEFAULT '',
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX appointments_scheduled_idx ON appointments (org_id, scheduled_at, id);
CREATE INDEX appointments_contact_idx ON appointments (contact_id, scheduled_at DESC);
