-- Read receipts from the chat network: an outbound message goes from status 'sent' to 'seen' (never back)
-- when the recipient read it; seen_at is when the network said so. Nullable without a default, so adding it
-- rewrites nothing. No index: receipts find their messages through messages_network_id_idx and
-- messages_conversation_idx.
ALTER TABLE messages ADD COLUMN seen_at timestamptz;
