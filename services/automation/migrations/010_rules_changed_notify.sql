-- Every write to a rule tells the process-level rule caches (src/domain/rule-cache.ts) of every replica which org's
-- rules changed, at commit, whatever code path made the write.
CREATE OR REPLACE FUNCTION automation_rules_changed() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('automation_rules_changed', COALESCE(NEW.org_id, OLD.org_id)::text);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

DROP TRIGGER IF EXISTS rules_changed ON rules;
CREATE TRIGGER rules_changed AFTER INSERT OR UPDATE OR DELETE ON rules
  FOR EACH ROW EXECUTE FUNCTION automation_rules_changed();
