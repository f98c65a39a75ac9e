"""The SQL text of :class:`~agent_memory.stores.postgres.PostgresStore`: tables, triggers, statements.

Kept apart from the adapter so the schema reads in one place. ``{s}`` is the store's schema
(an identifier formatted in by psycopg's ``sql`` module, never by string concatenation);
``%s`` are bound parameters. Invariant: every statement here names only its own schema.
"""

from __future__ import annotations

__all__ = ["CHANGES_DDL", "DDL", "STATEMENTS", "UPSERT_HEAD"]

DDL = """
CREATE SCHEMA IF NOT EXISTS {s};
CREATE TABLE IF NOT EXISTS {s}.meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS {s}.records (
    record_id text COLLATE "C" PRIMARY KEY,
    latest integer NOT NULL CHECK (latest >= 1), created_at timestamptz NOT NULL,
    state text NOT NULL, type text NOT NULL, kind text NOT NULL,
    subject text, namespace text NOT NULL, tags text[] NOT NULL
);
CREATE INDEX IF NOT EXISTS records_order ON {s}.records (created_at, record_id);
CREATE INDEX IF NOT EXISTS records_subject ON {s}.records (namespace, subject) WHERE subject IS NOT NULL;
CREATE TABLE IF NOT EXISTS {s}.versions (
    record_id text COLLATE "C" NOT NULL REFERENCES {s}.records (record_id),
    version integer NOT NULL CHECK (version >= 1), updated_at timestamptz NOT NULL,
    canonical bytea NOT NULL, PRIMARY KEY (record_id, version)
);
-- No planner statistics on content: pg_statistic would keep samples of erased values.
ALTER TABLE {s}.records ALTER subject SET STATISTICS 0, ALTER namespace SET STATISTICS 0,
    ALTER tags SET STATISTICS 0;
ALTER TABLE {s}.versions ALTER canonical SET STATISTICS 0;
INSERT INTO {s}.meta (key, value) VALUES ('format', {format}) ON CONFLICT (key) DO NOTHING;
"""

# The change counter, added to new schemas and to those made before it (under the schema lock).
CHANGES_DDL = """
CREATE TABLE IF NOT EXISTS {s}.changes (
    one boolean PRIMARY KEY DEFAULT true CHECK (one), counter bigint NOT NULL, removals bigint NOT NULL
);
INSERT INTO {s}.changes VALUES (true, 0, 0) ON CONFLICT (one) DO NOTHING;
ALTER TABLE {s}.records ADD COLUMN IF NOT EXISTS change bigint NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS records_change ON {s}.records (change);
CREATE OR REPLACE FUNCTION {s}.records_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        UPDATE {s}.changes SET counter = counter + 1, removals = removals + 1;
        RETURN OLD;
    END IF;
    UPDATE {s}.changes SET counter = counter + 1 RETURNING counter INTO NEW.change;
    RETURN NEW;
END $$;
CREATE OR REPLACE FUNCTION {s}.versions_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        UPDATE {s}.records SET change = change WHERE record_id = OLD.record_id;
    ELSE
        UPDATE {s}.records SET change = change WHERE record_id = NEW.record_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER records_changed BEFORE INSERT OR UPDATE OR DELETE ON {s}.records
    FOR EACH ROW EXECUTE FUNCTION {s}.records_changed();
CREATE TRIGGER versions_changed AFTER UPDATE OR DELETE ON {s}.versions
    FOR EACH ROW EXECUTE FUNCTION {s}.versions_changed();
"""

UPSERT_HEAD = """
INSERT INTO {s}.records (record_id, latest, created_at, state, type, kind, subject, namespace, tags)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (record_id) DO UPDATE SET latest = EXCLUDED.latest, created_at = EXCLUDED.created_at,
    state = EXCLUDED.state, type = EXCLUDED.type, kind = EXCLUDED.kind, subject = EXCLUDED.subject,
    namespace = EXCLUDED.namespace, tags = EXCLUDED.tags
"""

STATEMENTS = {
    "format": "SELECT value FROM {s}.meta WHERE key = 'format'",
    "lock": "SELECT pg_advisory_xact_lock(%s)",
    # A batch's bucket locks in one round trip, taken in ascending key order (the subquery's),
    # so two batches never wait on each other in a cycle; a single put holds one lock only.
    "lock_many": "SELECT count(pg_advisory_xact_lock(k)) FROM"
    " (SELECT k FROM unnest(%s::bigint[]) AS k ORDER BY k) AS ordered",
    "latest_many": "SELECT DISTINCT ON (record_id) record_id, version, canonical FROM {s}.versions"
    " WHERE record_id = ANY(%s) ORDER BY record_id, version DESC",
    "latest": "SELECT version, canonical FROM {s}.versions WHERE record_id = %s"
    " ORDER BY version DESC LIMIT 1",
    "history": "SELECT version, canonical FROM {s}.versions WHERE record_id = %s ORDER BY version",
    "contains": "SELECT 1 FROM {s}.records WHERE record_id = %s",
    "upsert_head": UPSERT_HEAD,
    "insert_version": "INSERT INTO {s}.versions (record_id, version, updated_at, canonical)"
    " VALUES (%s, %s, %s, %s)",
    "erase_versions": "UPDATE {s}.versions SET updated_at = %s, canonical = %s WHERE record_id = %s",
    "vacuum": "VACUUM FULL {s}.versions, {s}.records",
    "filenodes": "SELECT pg_relation_filenode(c.oid) FROM pg_class c"
    " WHERE c.relnamespace = %s::regnamespace AND c.relname IN ('versions', 'records')",
    "has_counter": "SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass(%s) AND tgname = 'records_changed'",
    "tokens": "SELECT record_id, latest, change FROM {s}.records",
    "tokens_of": "SELECT record_id, latest, change FROM {s}.records WHERE record_id = ANY(%s)",
    "counter": "SELECT counter, removals FROM {s}.changes",
    # No JIT, no sequential scan: a stale row estimate must not turn a look at the few
    # records written lately into a compiled walk over all of them.
    "plan_news": "SELECT set_config('jit', 'off', true), set_config('enable_seqscan', 'off', true)",
    "news": "SELECT record_id, latest, change FROM {s}.records WHERE change > %s",
    "list": "SELECT r.record_id, v.version, v.canonical FROM {s}.records r"
    " JOIN {s}.versions v ON v.record_id = r.record_id AND v.version = r.latest"
    " WHERE {where} ORDER BY r.created_at, r.record_id",
}
