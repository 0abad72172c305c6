-- Read receipts: a sent campaign message is seen when the chat network says its recipient read it
-- (messaging's message.seen). openRate = seen_count / sent_count; the reply measure stays as replyRate.
ALTER TABLE campaign_recipients ADD COLUMN seen_at timestamptz;
ALTER TABLE campaigns ADD COLUMN seen_count integer NOT NULL DEFAULT 0;
-- A receipt names messages: which recipient rows sent them?
CREATE INDEX campaign_recipients_message_idx ON campaign_recipients (org_id, message_id) WHERE message_id IS NOT NULL;
-- The rare receipt for a campaign message whose send is not recorded yet: is a send into that conversation in flight?
CREATE INDEX campaign_recipients_pending_conversation_idx ON campaign_recipients (org_id, conversation_id) WHERE status = 'pending';
