-- Email campaigns: the same campaign rows and recipient queue as broadcasts, sent over SMTP instead of messaging.
ALTER TABLE campaigns DROP CONSTRAINT campaigns_type_check;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_type_check CHECK (type IN ('broadcast', 'email'));
-- The email's subject line (a template like the body; empty for broadcasts).
ALTER TABLE campaigns ADD COLUMN subject text NOT NULL DEFAULT '';

-- An organization's own mail server for campaigns. Without one, the server's SMTP_URL is used when set.
-- The password is encrypted with ENCRYPTION_KEY (AES-GCM, bound to the org) and never leaves the service.
CREATE TABLE email_channels (
  org_id        uuid PRIMARY KEY,
  host          text NOT NULL,
  port          integer NOT NULL CHECK (port BETWEEN 1 AND 65535),
  -- true: TLS from the first byte (port 465); false: plain, upgraded with STARTTLS when the server offers it.
  secure        boolean NOT NULL,
  username      text NOT NULL DEFAULT '',
  password_enc  text,
  from_address  text NOT NULL,
  from_name     text NOT NULL DEFAULT '',
  updated_by    uuid,
  updated_at    timestamptz NOT NULL DEFAULT now()
);

-- Addresses an organization never emails again (a recipient followed the unsubscribe link). Stored lower-case.
CREATE TABLE email_suppressions (
  org_id       uuid NOT NULL,
  email        text NOT NULL,
  reason       text NOT NULL DEFAULT 'unsubscribed',
  -- The campaign whose email carried the link, when there was one.
  campaign_id  uuid,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, email)
);
CREATE INDEX email_suppressions_list_idx ON email_suppressions (org_id, created_at DESC, email);
