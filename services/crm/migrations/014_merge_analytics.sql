-- Contact merges fold the source's analytics (funnel stages, conversion, assignments) into the target's and leave
-- the source's row as a tombstone; what undo needs to take that apart again is recorded here. NULL for merges
-- made before this column: their undo leaves the analytics as they are.
ALTER TABLE contact_merges ADD COLUMN analytics jsonb;
