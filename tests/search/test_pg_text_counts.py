"""`PgTextIndex` keeps document frequencies between queries only while no process has written (issue 10).

The frequencies decide which words an "any of these words" query uses (a word no note
holds is left out), so a reader that kept a count past another writer's write would miss
the notes of a word that has just arrived. Runs on the session's private cluster (tests/pg.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search.base import Hit
from agent_memory.search.postgres import PgTextIndex
from pg import PgSchema, PostgresCluster, shared_cluster
from pg_indexes import drop_schema

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def record(body: str) -> MemoryRecord:
    provenance = Provenance(kind="conversation", ref="archive/2026-01-01.md#mem-2026-01-01-001")
    return MemoryRecord.create(type="fact", body=body, provenance=provenance, created_at=T0)


def ids(hits: list[Hit]) -> list[str]:
    return [hit.record_id for hit in hits]


@pytest.fixture
def postgres_schema() -> Iterator[PgSchema]:
    cluster: PostgresCluster = shared_cluster()
    schema = f"t_{uuid.uuid4().hex}"
    yield PgSchema(cluster.dsn, schema)
    drop_schema(cluster, schema)


def test_a_word_another_writer_just_added_is_searched_at_the_next_query(postgres_schema: PgSchema) -> None:
    dsn, schema = postgres_schema.dsn, postgres_schema.schema
    with PgTextIndex(dsn, schema=schema) as reader, PgTextIndex(dsn, schema=schema) as writer:
        writer.index([record(f"Notes about the garden, day {n}.") for n in range(12)])
        writer.index([record("The garden gate is painted green.")])
        question = "Who painted the zebra fence in the garden?"
        before = reader.query(question, k=5)
        assert before and all("zebra" not in h.record_id for h in before)
        zebra = record("A zebra crossing was painted near the school.")
        writer.index([zebra])  # another connection: the reader's counts are now out of date
        after = reader.query(question, k=5)
        with PgTextIndex(dsn, schema=schema) as fresh:
            assert ids(after) == ids(fresh.query(question, k=5))
        assert zebra.id in ids(after)


def test_the_readers_own_writes_and_removals_refresh_its_counts(postgres_schema: PgSchema) -> None:
    dsn, schema = postgres_schema.dsn, postgres_schema.schema
    with PgTextIndex(dsn, schema=schema) as index:
        index.index([record(f"Lunch with Ana on day {n}.") for n in range(8)])
        question = "lunch with ana or a walrus"
        first = index.query(question, k=20)
        walrus = record("The walrus at the zoo was fed at noon.")
        index.index([walrus])
        assert walrus.id in ids(index.query(question, k=20))
        index.remove([walrus.id])
        assert ids(index.query(question, k=20)) == ids(first)
        with PgTextIndex(dsn, schema=schema) as fresh:
            assert ids(index.query(question, k=20)) == ids(fresh.query(question, k=20))
