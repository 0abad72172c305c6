-- Integrations: social-network pages an organization connected, their lead syncs, and the link from each
-- imported lead to its contact. Every row carries org_id and every query filters on it.

-- One row per connected (or once connected) page. Disconnecting keeps the row (status 'disconnected', token
-- erased) so lastSync and the lead links keep their history; connecting the same page again reuses it.
CREATE TABLE integrations (
  id               uuid PRIMARY KEY,
  org_id           uuid NOT NULL,
  type             text NOT NULL CHECK (type IN ('socialnet')),
  name             text NOT NULL,
  status           text NOT NULL CHECK (status IN ('connected', 'disconnected', 'auth_expired')),
  -- The network's id of the page.
  external_id      text NOT NULL,
  -- Shown to clients as is: {pageId, formCount}.
  config           jsonb NOT NULL DEFAULT '{}',
  -- The page access token (SecretBox, AAD "socialnet-page:<org>:<id>"); never returned. NULL once disconnected.
  access_token_enc text,
  last_sync        timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX integrations_external_uq ON integrations (org_id, type, external_id);

-- The org's user token on the social network (graph driver): it lists the pages the user manages, each with
-- its own page token. SecretBox, AAD "socialnet-user:<org>"; only a mask is ever shown.
CREATE TABLE socialnet_credentials (
  org_id          uuid PRIMARY KEY,
  user_token_enc  text NOT NULL,
  token_mask      text NOT NULL,
  updated_at      timestamptz NOT NULL DEFAULT now()
);

-- A lead sync: one form of one connected page, worked page by page by the sync worker. `cursor` is where the
-- next page starts; it is saved in the same transaction as that page's contacts and counts, so a sync
-- interrupted by a restart or a crash resumes exactly after the last committed page.
CREATE TABLE socialnet_syncs (
  id               uuid PRIMARY KEY,
  org_id           uuid NOT NULL,
  integration_id   uuid NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
  page_id          text NOT NULL,
  form_id          text NOT NULL,
  status           text NOT NULL DEFAULT 'processing' CHECK (status IN ('processing', 'completed', 'failed')),
  estimated_count  integer NOT NULL DEFAULT 0,
  cursor           text,
  created_count    integer NOT NULL DEFAULT 0,
  linked_count     integer NOT NULL DEFAULT 0,
  existing_count   integer NOT NULL DEFAULT 0,
  skipped_count    integer NOT NULL DEFAULT 0,
  -- The first skipped rows with their reasons: [{leadId, reason}].
  skipped_leads    jsonb NOT NULL DEFAULT '[]',
  -- Consecutive failed attempts (reset by every committed page) and when the next one may run.
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  -- Claimed by a worker until then; a lapsed lease (crashed worker) lets another claim it.
  lease_until      timestamptz,
  worker_id        text,
  error_code       text,
  error_message    text,
  requested_by     uuid,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  completed_at     timestamptz
);
-- The worker's claim: due syncs still processing.
CREATE INDEX socialnet_syncs_due_idx ON socialnet_syncs (next_attempt_at) WHERE status = 'processing';
-- At most one running sync per form: asking again while one runs returns the running one.
CREATE UNIQUE INDEX socialnet_syncs_running_uq ON socialnet_syncs (org_id, page_id, form_id) WHERE status = 'processing';
CREATE INDEX socialnet_syncs_integration_idx ON socialnet_syncs (integration_id);

-- Which contact each imported lead became (or was linked to). The primary key makes imports idempotent on
-- the network's lead id: a lead is imported at most once per organization, however many syncs see it.
-- A deleted contact leaves the link with contact_id NULL, so a later sync does not bring the lead back. The
-- link is written before the contact it names (claiming the lead first), hence the deferred foreign key.
CREATE TABLE socialnet_lead_links (
  org_id       uuid NOT NULL,
  lead_id      text NOT NULL,
  page_id      text NOT NULL,
  form_id      text NOT NULL,
  contact_id   uuid REFERENCES contacts (id) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED,
  -- created: the lead made a new contact; linked: its phone matched an existing contact.
  outcome      text NOT NULL CHECK (outcome IN ('created', 'linked')),
  sync_id      uuid NOT NULL,
  imported_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, lead_id)
);
-- ON DELETE SET NULL looks links up by contact.
CREATE INDEX socialnet_lead_links_contact_idx ON socialnet_lead_links (contact_id) WHERE contact_id IS NOT NULL;

-- The sandbox network (SOCIALNET_DRIVER=sandbox): the simulated network's own pages, forms and leads, seeded
-- through the sandbox control routes. They live here so a demo or a test survives a restart of crm. They
-- stand for the third-party network's data, not ours: nothing but the sandbox driver reads them.
CREATE TABLE socialnet_sandbox_pages (
  id            text PRIMARY KEY,
  org_id        uuid NOT NULL,
  name          text NOT NULL,
  followers     integer NOT NULL DEFAULT 0,
  -- The token the network currently accepts for the page (a revoke replaces it, expiring the one we hold).
  access_token  text NOT NULL,
  -- Simulated outage: fetching beyond this many leads of a form fails as "unavailable"; NULL = none.
  outage_after  integer,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX socialnet_sandbox_pages_org_idx ON socialnet_sandbox_pages (org_id, created_at);

CREATE TABLE socialnet_sandbox_forms (
  id          text PRIMARY KEY,
  org_id      uuid NOT NULL,
  page_id     text NOT NULL REFERENCES socialnet_sandbox_pages (id) ON DELETE CASCADE,
  name        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX socialnet_sandbox_forms_page_idx ON socialnet_sandbox_forms (page_id, created_at);

CREATE TABLE socialnet_sandbox_leads (
  seq         bigserial PRIMARY KEY,
  org_id      uuid NOT NULL,
  form_id     text NOT NULL REFERENCES socialnet_sandbox_forms (id) ON DELETE CASCADE,
  lead_id     text NOT NULL,
  -- {fullName, phone, email, fields: {name: value}} as the network would hand them over.
  data        jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX socialnet_sandbox_leads_uq ON socialnet_sandbox_leads (org_id, lead_id);
-- Paging a form's leads in order.
CREATE INDEX socialnet_sandbox_leads_form_idx ON socialnet_sandbox_leads (form_id, seq);
