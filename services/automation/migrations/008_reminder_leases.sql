-- The reminder sender sleeps until the nearest due reminder (the timer facility, no poll). A claimed reminder
-- falls due again when its lease ends: this index finds the earliest live lease without reading every pending row.
CREATE INDEX appointment_reminders_lease_idx ON appointment_reminders (lease_until) WHERE sent_at IS NULL AND lease_until IS NOT NULL;
