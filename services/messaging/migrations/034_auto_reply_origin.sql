-- The event stamp of the customer's message an auto-reply row answers (issue #27 item 3): the worker asks ai under it,
-- so ai's AutoReply is bound to an organization the connector vouched for (a message it received there), not one
-- messaging chose. A newer message of the same conversation replaces both the message and its stamp. Rows queued
-- before this migration have none: ai refuses them (origin_required) and the worker hands the conversation to a person.
ALTER TABLE ai_auto_replies ADD COLUMN origin text;
