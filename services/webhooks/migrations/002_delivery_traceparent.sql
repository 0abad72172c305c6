-- The W3C trace context of the event that caused the delivery (its consumer span), so every attempt's
-- request carries a `traceparent` of the same trace as the request that changed the data. NULL for rows
-- made before tracing and for events that carried none: their attempts start a trace of their own.
ALTER TABLE webhook_deliveries ADD COLUMN traceparent text;
