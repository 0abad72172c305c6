-- The access token issued with each refresh token, so a detected refresh-token replay can revoke the access
-- tokens of the stolen session family too, not only its refresh tokens.
ALTER TABLE refresh_tokens ADD COLUMN access_jti text;
ALTER TABLE refresh_tokens ADD COLUMN access_expires_at timestamptz;
