-- Whether an endpoint is active as committed now, not as the calling statement's snapshot saw it: a VOLATILE
-- function takes a fresh snapshot for its query (READ COMMITTED). The fan-out's write calls it after taking the feed
-- lock, which a switch-off's follow-up takes too (deliveries.repo failPendingAfterWrites): a write that waited for a
-- switch-off sees it and writes nothing pending for that endpoint, and a write that went first is failed by the
-- follow-up. Without it a write whose statement began before the switch-off committed (its snapshot: still active)
-- left a row pending for a disabled endpoint.
CREATE FUNCTION webhook_active_now(webhook uuid) RETURNS boolean
  LANGUAGE sql VOLATILE
  AS $$ SELECT active FROM webhook_settings WHERE id = webhook $$;
