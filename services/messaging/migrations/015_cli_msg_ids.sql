-- The sender's own id of an inbound message (zca `cliMsgId`), as the connector announces it: telling the network the
-- account read a message (sendSeenEvent after an agent marks the conversation read) needs it with the network id.
-- Null for messages stored before, for outbound messages, and when the network gives none.
ALTER TABLE messages ADD COLUMN cli_msg_id text;
