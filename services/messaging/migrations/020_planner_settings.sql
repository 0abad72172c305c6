-- Issue #28 item 8: messaging's planner settings belong to its database, not to the pool's start-up packet. The pool
-- used to send them as `-c` options when connecting, which a transaction pooler (PgBouncer) refuses or drops; set on
-- the database, every new session has them, whichever way it connects.
--
-- No parallel query: messaging's queries are short index walks (the search walks the newest messages until enough
-- match), where starting parallel workers cost 50-60 ms per query and, under concurrent searches, multiplied the CPU
-- (bench/search: "Đà Nẵng" 81 ms parallel, 15 ms without). random_page_cost 1.1: a table read at random costs about
-- what a sequential one does when it is in memory or on SSD (PostgreSQL's default of 4 prices a disk seek), and at 4
-- the planner collected every match of a dated search through the indexes rather than walk the newest messages in
-- the range ("xuất hóa đơn" in the last 7 days: 20 → 4 ms; the name "Đặng Hiếu": 389 → 15 ms).
--
-- The database's name differs per deployment (and per test), hence current_database(). Sessions opened before this
-- ran keep the old values until they reconnect.
DO $$
BEGIN
  EXECUTE format('ALTER DATABASE %I SET max_parallel_workers_per_gather = 0', current_database());
  EXECUTE format('ALTER DATABASE %I SET random_page_cost = 1.1', current_database());
END
$$;
