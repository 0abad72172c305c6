-- Inbox automation settings (issue #29 items 3 and 6), beside agent_visibility:
-- auto_close_after_minutes: an open conversation whose last message is ours closes after this many idle minutes
--   (NULL: never); auto_close_message is sent first when set.
-- out_of_hours_message: the answer to an inbound message while the account's business hours are closed, once per
--   conversation and closed period (NULL: none).
-- csat_enabled / csat_message: the satisfaction question sent when a conversation closes.
ALTER TABLE inbox_settings
  ADD COLUMN auto_close_after_minutes integer CHECK (auto_close_after_minutes BETWEEN 1 AND 43200),
  ADD COLUMN auto_close_message text,
  ADD COLUMN out_of_hours_message text,
  ADD COLUMN csat_enabled boolean NOT NULL DEFAULT false,
  ADD COLUMN csat_message text;
