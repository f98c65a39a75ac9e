"""The SQL text of :class:`~agent_memory.stores.sqlite.SQLiteStore`: tables, triggers, statements.

Kept apart from the adapter so the schema reads in one place (as :mod:`.postgres_sql` does for
PostgreSQL). Invariant: ``SCHEMA_VERSION`` changes whenever ``SCHEMA`` or ``TRIGGERS`` do, and
the store upgrades older files on open.
"""

from __future__ import annotations

__all__ = ["LATEST_OF_MANY", "LIST_SELECT", "SCHEMA", "SCHEMA_VERSION", "TRIGGERS"]

SCHEMA_VERSION = 2
SCHEMA = """
CREATE TABLE IF NOT EXISTS versions (
    record_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    payload BLOB NOT NULL,
    PRIMARY KEY (record_id, version)
);
CREATE TABLE IF NOT EXISTS records (
    record_id TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    state TEXT NOT NULL,
    type TEXT NOT NULL,
    kind TEXT NOT NULL,
    subject TEXT,
    namespace TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    change INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS records_order ON records (created_at, record_id);
CREATE INDEX IF NOT EXISTS records_subject ON records (namespace, subject);
CREATE TABLE IF NOT EXISTS record_tags (
    record_id TEXT NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY (record_id, tag)
);
CREATE INDEX IF NOT EXISTS record_tags_tag ON record_tags (tag);
CREATE TABLE IF NOT EXISTS changes (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    counter INTEGER NOT NULL,
    removals INTEGER NOT NULL
);
INSERT OR IGNORE INTO changes VALUES (1, 0, 0);
CREATE INDEX IF NOT EXISTS records_change ON records (change);
"""
# Triggers hold ";" inside BEGIN … END, so they are run one by one, not split like SCHEMA.
# The inner UPDATE sets only ``change``, which is outside records_updated's column list.
_BUMP = "UPDATE changes SET counter = counter + 1;"
_STAMP = "UPDATE records SET change = (SELECT counter FROM changes) WHERE record_id = {row}.record_id;"
TRIGGERS = (
    f"CREATE TRIGGER IF NOT EXISTS records_inserted AFTER INSERT ON records"
    f" BEGIN {_BUMP} {_STAMP.format(row='NEW')} END",
    "CREATE TRIGGER IF NOT EXISTS records_updated"
    " AFTER UPDATE OF record_id, version, state, type, kind, subject, namespace, created_at ON records"
    f" BEGIN {_BUMP} {_STAMP.format(row='NEW')} END",
    "CREATE TRIGGER IF NOT EXISTS records_deleted AFTER DELETE ON records"
    " BEGIN UPDATE changes SET counter = counter + 1, removals = removals + 1; END",
    f"CREATE TRIGGER IF NOT EXISTS versions_updated AFTER UPDATE ON versions"
    f" BEGIN {_BUMP} {_STAMP.format(row='NEW')} END",
    f"CREATE TRIGGER IF NOT EXISTS versions_deleted AFTER DELETE ON versions"
    f" BEGIN {_BUMP} {_STAMP.format(row='OLD')} END",
)
LIST_SELECT = (
    "SELECT v.record_id, v.version, v.payload FROM records r"
    " JOIN versions v ON v.record_id = r.record_id AND v.version = r.version"
)
LATEST_OF_MANY = (
    "SELECT v.record_id, v.version, v.payload FROM records r"
    " JOIN versions v ON v.record_id = r.record_id AND v.version = r.version"
    " WHERE r.record_id IN (SELECT value FROM json_each(?))"
)
