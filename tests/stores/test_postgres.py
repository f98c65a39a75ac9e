"""PostgresStore beyond the shared contract: concurrent writer processes, erasure, opening, connecting."""

from __future__ import annotations

import multiprocessing
import os
import socket
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

import pg
from agent_memory.errors import RecordError, StoreError
from agent_memory.records.record import Kind, MemoryRecord, Provenance, RecordType
from agent_memory.stores.postgres import ERASURE_LIMITATIONS, PostgresStore, connect
from pg import PgSchema, PostgresCluster

T0 = datetime(2026, 1, 1, tzinfo=UTC)
WORKERS = 3


def make_record(body: str, **fields: Any) -> MemoryRecord:
    return MemoryRecord.create(
        type=RecordType.FACT,
        body=body,
        provenance=Provenance(kind="conversation", ref="archive/2026-01-01.md#mem-2026-01-01-001"),
        created_at=T0,
        **fields,
    )


@pytest.fixture
def pg_store(postgres_schema: PgSchema) -> Iterator[PostgresStore]:
    with PostgresStore(postgres_schema.dsn, schema=postgres_schema.schema) as store:
        yield store


# ---------------------------------------------------------------------- writer processes


def _append_worker(
    dsn: str, schema: str, worker: int, plan: list[tuple[str, int]], barrier: Any, results: Any, batch: int
) -> None:
    """Put the planned versions (body, tag number) as fast as possible once every worker is ready.

    ``batch`` above 1: ``put_many`` of that many versions at a time.
    """
    written: list[tuple[str, int]] = []
    try:
        with PostgresStore(dsn, schema=schema) as store:
            barrier.wait(timeout=60)
            versions = [make_record(body).evolve(tags=(f"w{worker}", f"n{n}")) for body, n in plan]
            for start in range(0, len(versions), batch):
                chunk = versions[start : start + batch]
                numbers = store.put_many(chunk) if batch > 1 else [store.put(chunk[0])]
                written.extend((record.id, number) for record, number in zip(chunk, numbers, strict=True))
    except Exception as exc:  # reported to the test instead of dying silently
        results.put((worker, f"worker {worker} failed: {exc!r}"))
    else:
        results.put((worker, written))


def run_workers(
    target: PgSchema, plans: list[list[tuple[str, int]]], *, batch: int = 1
) -> list[tuple[str, int]]:
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(len(plans)), ctx.Queue()
    processes = [
        ctx.Process(target=_append_worker, args=(target.dsn, target.schema, i, plan, barrier, results, batch))
        for i, plan in enumerate(plans)
    ]
    for process in processes:
        process.start()
    outcomes = [results.get(timeout=120)[1] for _ in processes]
    for outcome in outcomes:
        assert isinstance(outcome, list), outcome
    written = [item for outcome in outcomes for item in outcome]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    return written


def test_writer_processes_appending_to_one_record_lose_no_version_and_share_no_number(
    pg_store: PostgresStore, postgres_schema: PgSchema
) -> None:
    first = make_record("the deploy key rotates monthly")
    assert pg_store.put(first) == 1
    per_worker = 15
    written = run_workers(postgres_schema, [[(first.body, n) for n in range(per_worker)]] * WORKERS)

    total = 1 + WORKERS * per_worker
    assert sorted(version for _, version in written) == list(range(2, total + 1))
    history = pg_store.history(first.id)
    assert len(history) == total
    assert sorted(tuple(r.tags) for r in history[1:]) == sorted(
        (f"w{w}", f"n{n}") for w in range(WORKERS) for n in range(per_worker)
    )


@pytest.mark.parametrize("batch", [1, 4], ids=["put", "put_many"])
def test_writer_processes_creating_and_appending_many_records_keep_exact_counts(
    pg_store: PostgresStore, postgres_schema: PgSchema, batch: int
) -> None:
    # In batches, each worker's put_many locks several shared ids at once: taken in key order,
    # so batches racing over the same records in different orders never deadlock.
    shared = [f"shared fact {i}" for i in range(12)]
    plans = []
    for worker in range(WORKERS):
        # Every worker races to put the first version of each shared record, in its own order.
        order = shared[worker * 4 :] + shared[: worker * 4]
        plan = [(body, worker) for body in (order if worker % 2 else order[::-1])]
        own = [(f"worker {worker} fact {i}", n) for i in range(6) for n in (0, 1)]
        plans.append(plan + own)
    written = run_workers(postgres_schema, plans, batch=batch)

    records = pg_store.list()
    assert len(records) == len(shared) + WORKERS * 6
    for body in shared:
        record_id = make_record(body).id
        assert sorted(v for rid, v in written if rid == record_id) == list(range(1, WORKERS + 1))
        assert sorted(h.tags[0] for h in pg_store.history(record_id)) == [f"w{w}" for w in range(WORKERS)]
    for record in records:
        if record.body.startswith("worker"):
            assert [r.tags for r in pg_store.history(record.id)] == [
                (record.tags[0], "n0"),
                (record.tags[0], "n1"),
            ]


def test_a_batch_larger_than_the_servers_lock_table_is_written_whole(pg_store: PostgresStore) -> None:
    # A lock per id would hold 12,000 entries of a lock table this cluster sizes from
    # max_locks_per_transaction (64) x max_connections (40): "out of shared memory" (seen
    # with the first put_many). The batch takes one lock per bucket of its ids instead.
    batch = [make_record(f"bulk fact number {n}") for n in range(12_000)]
    assert pg_store.put_many(batch) == [1] * len(batch)
    assert len(pg_store.list()) == len(batch)


def test_a_batch_that_fails_after_its_first_rows_went_in_writes_nothing(
    pg_store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = make_record("written before")
    pg_store.put(kept)
    # The heads are upserted, then the version rows fail: the whole transaction rolls back.
    broken = dict(pg_store._q, insert_version=sql.SQL("INSERT INTO no_such_table VALUES (%s, %s, %s, %s)"))
    monkeypatch.setattr(pg_store, "_q", broken)
    with pytest.raises(StoreError, match="no_such_table"):
        pg_store.put_many([make_record("first of a failed batch"), kept.evolve(tags=("again",))])
    monkeypatch.undo()
    assert [r.id for r in pg_store.list()] == [kept.id]
    assert pg_store.history(kept.id) == [kept]


# ---------------------------------------------------------------------- erasure


def _files_containing(root: Path, needle: bytes) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and "pg_wal" not in path.parts and needle in path.read_bytes():
            found.append(str(path.relative_to(root)))
    return found


def test_erasure_leaves_no_erased_byte_in_any_row_or_table_file(
    pg_store: PostgresStore, postgres_schema: PgSchema, postgres_cluster: PostgresCluster
) -> None:
    secret = f"s3cret-{uuid.uuid4().hex}"
    record = make_record(
        f"the vault code is {secret}", kind=Kind.STATE, subject=f"vault:{secret}", tags=[secret]
    )
    pg_store.put(record)
    pg_store.put(record.evolve(confidence=0.5))
    # Large enough for TOAST and not compressible, so the secret sits in the TOAST table's file.
    toasted = make_record(f"{secret} {os.urandom(6000).hex()}")
    pg_store.put(toasted)
    bystander = make_record("an unrelated fact stays")
    pg_store.put(bystander)
    with psycopg.connect(postgres_cluster.dsn, autocommit=True) as admin:
        admin.execute(
            sql.SQL("ANALYZE {}.records, {}.versions").format(*[sql.Identifier(pg_store.schema)] * 2)
        )
        admin.execute("CHECKPOINT")
        assert _files_containing(postgres_cluster.data_dir, secret.encode()), "the scan must see live rows"

        tombstone = pg_store.erase(record.id, "user asked", now=T0)
        pg_store.erase(toasted.id, "user asked", now=T0)

        admin.execute("CHECKPOINT")
        tables = admin.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s", (postgres_schema.schema,)
        ).fetchall()
        for (table,) in tables:
            query = sql.SQL("SELECT t::text FROM {}.{} t").format(
                sql.Identifier(postgres_schema.schema), sql.Identifier(table)
            )
            for (row,) in admin.execute(query).fetchall():
                assert secret not in row and secret.encode().hex() not in row, table
    assert _files_containing(postgres_cluster.data_dir, secret.encode()) == []
    assert pg_store.history(record.id) == [tombstone, tombstone]
    assert pg_store.get(bystander.id) == bystander
    assert pg_store.list(subject=record.subject) == []


def test_erasing_twice_is_refused_and_limitations_are_stated(pg_store: PostgresStore) -> None:
    record = make_record("short-lived")
    pg_store.put(record)
    pg_store.erase(record.id, "test")
    with pytest.raises(RecordError, match="already redacted"):
        pg_store.erase(record.id, "again")
    assert any("pg_wal" in line for line in ERASURE_LIMITATIONS)
    assert pg_store.erasure_limitations == ERASURE_LIMITATIONS


def test_erase_by_a_role_that_cannot_vacuum_says_old_row_versions_may_remain(
    pg_store: PostgresStore, postgres_cluster: PostgresCluster
) -> None:
    role = f"writer_{uuid.uuid4().hex[:12]}"
    schema = sql.Identifier(pg_store.schema)
    with psycopg.connect(postgres_cluster.dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        admin.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(schema, sql.Identifier(role)))
        admin.execute(
            sql.SQL("GRANT ALL ON ALL TABLES IN SCHEMA {} TO {}").format(schema, sql.Identifier(role))
        )
    record = make_record("written by a plain role")
    dsn = f"postgresql://{role}@127.0.0.1:{postgres_cluster.port}/postgres"
    with PostgresStore(dsn, schema=pg_store.schema) as writer:
        writer.put(record)
        with pytest.raises(StoreError, match="VACUUM FULL did not rewrite") as caught:
            writer.erase(record.id, "test")
    assert caught.value.record_id == record.id
    assert pg_store.get(record.id).redacted
    with psycopg.connect(postgres_cluster.dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
        admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


# ---------------------------------------------------------------------- opening and rows


def test_opening_one_schema_from_many_connections_at_once_is_idempotent(postgres_schema: PgSchema) -> None:
    def open_and_put(i: int) -> int:
        with PostgresStore(postgres_schema.dsn, schema=postgres_schema.schema) as store:
            return store.put(make_record(f"opened by {i}"))

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(open_and_put, range(4))) == [1, 1, 1, 1]
    with PostgresStore(postgres_schema.dsn, schema=postgres_schema.schema) as reopened:
        assert len(reopened.list()) == 4


def test_rows_hold_the_exact_canonical_bytes(
    pg_store: PostgresStore, postgres_cluster: PostgresCluster
) -> None:
    record = make_record("naïve café — 🧠", slots={"a": [1, {"b": None}]})
    pg_store.put(record)
    with psycopg.connect(postgres_cluster.dsn) as admin:
        query = sql.SQL("SELECT canonical FROM {}.versions").format(sql.Identifier(pg_store.schema))
        (data,) = admin.execute(query).fetchone() or (None,)
    assert data == record.canonical_bytes()
    assert pg_store.get(record.id).canonical_bytes() == record.canonical_bytes()


def test_a_row_changed_outside_the_store_is_reported_with_its_location(
    pg_store: PostgresStore, postgres_cluster: PostgresCluster
) -> None:
    record = make_record("tampered later")
    pg_store.put(record)
    with psycopg.connect(postgres_cluster.dsn, autocommit=True) as admin:
        query = sql.SQL(
            "UPDATE {}.versions SET canonical"
            " = convert_to(replace(convert_from(canonical, 'UTF8'), 'later', 'today'), 'UTF8')"
        )
        admin.execute(query.format(sql.Identifier(pg_store.schema)))
    with pytest.raises(StoreError) as caught:
        pg_store.get(record.id)
    assert f"{pg_store.schema}.versions[{record.id} v1]" in str(caught.value)
    assert caught.value.hint


def test_a_schema_of_another_format_is_refused(
    pg_store: PostgresStore, postgres_cluster: PostgresCluster
) -> None:
    with psycopg.connect(postgres_cluster.dsn, autocommit=True) as admin:
        query = sql.SQL("UPDATE {}.meta SET value = 'agent-memory-postgres/99'")
        admin.execute(query.format(sql.Identifier(pg_store.schema)))
    with pytest.raises(StoreError, match="agent-memory-postgres/99"):
        PostgresStore(postgres_cluster.dsn, schema=pg_store.schema)


def test_a_schema_name_that_is_not_a_plain_identifier_is_refused() -> None:
    with pytest.raises(StoreError, match="schema name"):
        PostgresStore("postgresql://nobody@127.0.0.1:1/x", schema='x"; DROP TABLE y; --')


# ---------------------------------------------------------------------- connecting


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_an_unreachable_server_gives_a_store_error_naming_host_and_port_but_not_the_password() -> None:
    port = _closed_port()
    with pytest.raises(StoreError) as caught:
        PostgresStore(f"postgresql://alice:pw-{os.getpid()}-hidden@127.0.0.1:{port}/memory")
    message = f"{caught.value}\n{caught.value.hint}"
    assert f"127.0.0.1:{port}" in message
    assert "memory" in message and "alice" in message
    assert "hidden" not in message


def test_a_malformed_dsn_is_refused_without_echoing_it() -> None:
    with pytest.raises(StoreError, match="not a valid PostgreSQL DSN") as caught:
        connect("postgresql://alice:pw-hidden@[::1")
    assert "hidden" not in f"{caught.value}\n{caught.value.hint}"


# ---------------------------------------------------------------------- the test cluster itself


def test_without_postgresql_the_tests_skip_locally_but_fail_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pg, "_cluster", None)
    monkeypatch.setattr(pg, "_not_started", None)
    monkeypatch.setattr(pg, "find_bin_dir", lambda: None)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="PostgreSQL is not installed"):
        pg.shared_cluster()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI is set"):
        pg.shared_cluster()


def test_puts_stay_exact_when_the_server_defaults_to_serializable_transactions(
    postgres_schema: PgSchema,
) -> None:
    dsn = f"{postgres_schema.dsn}?options=-c%20default_transaction_isolation%3Dserializable"
    first = make_record("isolation does not matter")
    with PostgresStore(dsn, schema=postgres_schema.schema) as store:
        store.put(first)

    def append(worker: int) -> list[int]:
        with PostgresStore(dsn, schema=postgres_schema.schema) as store:
            return [store.put(first.evolve(tags=(f"w{worker}", f"n{n}"))) for n in range(10)]

    with ThreadPoolExecutor(max_workers=4) as pool:
        versions = sorted(v for batch in pool.map(append, range(4)) for v in batch)
    assert versions == list(range(2, 42))
