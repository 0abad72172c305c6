-- An organization's own settings for one AI provider. The key is stored only encrypted
-- (AES-256-GCM, versioned, org + provider as additional authenticated data); key_last4 feeds the mask.
CREATE TABLE provider_settings (
  org_id uuid NOT NULL,
  provider text NOT NULL,
  api_key_enc text,
  key_last4 text,
  base_url text,
  updated_by uuid,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, provider),
  CHECK ((api_key_enc IS NULL) = (key_last4 IS NULL))
);

-- The organization's AI assistant: which provider and model answer, the daily call quota, on/off.
-- No row means the defaults: the local engine, the deployment's default quota, enabled.
CREATE TABLE assistant_settings (
  org_id uuid PRIMARY KEY,
  provider text NOT NULL DEFAULT 'local',
  model text NOT NULL DEFAULT '',
  daily_quota integer NOT NULL CHECK (daily_quota >= 1),
  enabled boolean NOT NULL DEFAULT true,
  updated_by uuid,
  updated_at timestamptz NOT NULL DEFAULT now()
);
