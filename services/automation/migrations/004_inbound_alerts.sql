-- Inbound-message alerts. A user has at most one unread `new_message` notification per conversation: each inbound
-- message looks for it (this index) and bumps it instead of adding another.
CREATE INDEX notifications_new_message_idx ON notifications (org_id, user_id, resource_id) WHERE type = 'new_message';

-- When each user was last emailed about each conversation: at most one alert email per user and conversation per
-- throttle window. Only sends the mail server accepted are recorded, so a failed send does not silence the next one.
CREATE TABLE email_alerts_sent (
  org_id          uuid NOT NULL,
  user_id         uuid NOT NULL,
  conversation_id uuid NOT NULL,
  sent_at         timestamptz NOT NULL,
  PRIMARY KEY (org_id, user_id, conversation_id)
);
