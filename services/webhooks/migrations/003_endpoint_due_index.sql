-- A worker claims the oldest due deliveries of one endpoint (the endpoints it has heard new deliveries for, as
-- many as each has free slots): this index finds them without looking at other endpoints' queues.
CREATE INDEX webhook_deliveries_endpoint_due_idx ON webhook_deliveries (webhook_id, next_attempt_at) WHERE status = 'pending';
