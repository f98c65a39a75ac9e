"""Concurrency: 4 writer processes and a recall loop on one memory, per store (issue 11 item 3).

Each writer remembers :data:`REMEMBERS_PER_WRITER` distinct texts while a fifth process
recalls in a loop. On the file store (a Home: writes take turns on its lock file), SQLite
(store and log in one WAL database, indexes in a shared cache folder) and PostgreSQL (store,
log and full-text index in one schema), the test asserts:

- exact final counts: every text is one record, once; one ``put`` event per record; the log's
  hash chain verifies;
- no error reached any caller (a lock timeout included);
- every index holds exactly the store's records (count and inputs digest), with nothing stale.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from reliability_kit import REMEMBERS_PER_WRITER, WRITERS, make_home, record_figures

from agent_memory.log.base import OperationLog
from agent_memory.memory import Memory
from agent_memory.search.catalog import IndexCatalog
from agent_memory.search.recipes import SearchSettings
from agent_memory.stores.base import RecordStore

CHILD = Path(__file__).with_name("concurrency_child.py")
TIMEOUT_SECONDS = 1800


def run_processes(
    kind: str, location: str, folder: Path, *, writers: int = WRITERS, count: int = REMEMBERS_PER_WRITER
) -> tuple[list[dict[str, Any]], dict[str, Any], float]:
    """Start the writers and the reader, release them together, and collect their summaries."""
    go, stop = folder / "go", folder / "stop"

    def start(role: str, number: int, remembers: int) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [
                sys.executable,
                str(CHILD),
                role,
                kind,
                location,
                str(number),
                str(remembers),
                str(go),
                str(stop),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    processes = [start("writer", n, count) for n in range(writers)] + [start("reader", 0, 0)]
    time.sleep(0.5)
    started = time.perf_counter()
    go.touch()
    outputs = [process.communicate(timeout=TIMEOUT_SECONDS) for process in processes[:-1]]
    seconds = time.perf_counter() - started
    stop.touch()
    outputs.append(processes[-1].communicate(timeout=TIMEOUT_SECONDS))
    failed = [err[-3000:] for process, (_, err) in zip(processes, outputs, strict=True) if process.returncode]
    assert not failed, failed[0]
    summaries = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    return summaries[:-1], summaries[-1], seconds


@contextmanager
def shared(kind: str, folder: Path) -> Iterator[tuple[str, Any]]:
    """Yield the location the processes share and a function opening (store, log, index counts)."""
    if kind == "file":
        root = make_home(folder / "home")
        Memory.open(root).close()  # the indexes exist before the writers start (see the startup test)
        yield str(root), lambda stack: _file_parts(root, stack)
    elif kind == "sqlite":
        with ExitStack() as stack:
            _sqlite_parts(folder, stack)
        yield str(folder), lambda stack: _sqlite_parts(folder, stack)
    else:
        from pg import shared_cluster
        from pg_indexes import drop_schema

        cluster = shared_cluster()
        schema = f"t_{uuid.uuid4().hex}"
        try:
            yield f"{cluster.dsn}|{schema}", lambda stack: _pg_parts(cluster.dsn, schema, stack)
        finally:
            drop_schema(cluster, schema)


def _catalog_counts(catalog: IndexCatalog) -> dict[str, tuple[int, int, bool]]:
    return {e["name"]: (e["indexed"], e["records"], e["dirty"]) for e in catalog.status()}


def _file_parts(root: Path, stack: ExitStack) -> tuple[RecordStore, OperationLog, dict[str, Any]]:
    from agent_memory.home import Home

    home = Home.open(root)
    store = home.store()
    catalog = IndexCatalog.for_home(home.cache_dir, store, search=home.settings.search)
    stack.callback(catalog.close)
    return store, home.log(), _catalog_counts(catalog)


def _sqlite_parts(folder: Path, stack: ExitStack) -> tuple[RecordStore, OperationLog, dict[str, Any]]:
    from agent_memory.log.sqlite import SQLiteLog
    from agent_memory.stores.sqlite import SQLiteStore

    store = stack.enter_context(SQLiteStore(folder / "memory.sqlite"))
    log = stack.enter_context(SQLiteLog(folder / "memory.sqlite"))
    catalog = IndexCatalog.for_home(folder / "cache", store, search=SearchSettings(("bm25",)))
    stack.callback(catalog.close)
    return store, log, _catalog_counts(catalog)


def _pg_parts(dsn: str, schema: str, stack: ExitStack) -> tuple[RecordStore, OperationLog, dict[str, Any]]:
    from agent_memory.log.postgres import PostgresLog
    from agent_memory.search.base import inputs_digest, version_digest
    from agent_memory.search.postgres import PgTextIndex
    from agent_memory.stores.postgres import PostgresStore

    store = stack.enter_context(PostgresStore(dsn, schema=schema))
    log = stack.enter_context(PostgresLog(dsn, schema=schema))
    index = stack.enter_context(PgTextIndex(dsn, schema=schema))
    held = index.inputs()
    expected = inputs_digest((r.id, version_digest(r)) for r in store.list())
    return store, log, {"fulltext": (held.count, len(store.list()), held.digest != expected)}


@pytest.mark.parametrize("kind", ["file", "sqlite", "postgres"])
def test_four_writers_and_a_reader_end_with_exact_counts_and_indexes_in_step(
    kind: str, tmp_path: Path
) -> None:
    with shared(kind, tmp_path) as (location, parts):
        writers, reader, seconds = run_processes(kind, location, tmp_path)
        with ExitStack() as stack:
            store, log, indexes = parts(stack)
            records = store.list()
            entries = list(log.entries())
            checked = log.verify()
    errors = [e for s in [*writers, reader] for e in s["errors"]]
    total = WRITERS * REMEMBERS_PER_WRITER
    assert errors == [], errors[:5]
    assert [s["done"] for s in writers] == [REMEMBERS_PER_WRITER] * WRITERS
    bodies = sorted(r.body for r in records)
    assert len(records) == total and len(set(bodies)) == total
    for number in range(WRITERS):
        assert sum(body.startswith(f"Writer {number} note ") for body in bodies) == REMEMBERS_PER_WRITER
    assert sum(1 for e in entries if e.action == "put") == total
    assert checked == len(entries)
    for name, (indexed, held, dirty) in indexes.items():
        assert (indexed, held, dirty) == (total, total, False), f"index {name} is out of step with the store"
    assert reader["done"] > 0
    record_figures(
        "concurrency",
        store=kind,
        writers=WRITERS,
        remembers_per_writer=REMEMBERS_PER_WRITER,
        records=len(records),
        seconds=round(seconds, 2),
        remembers_per_second=round(total / seconds, 1),
        recalls=reader["done"],
        errors=len(errors),
    )


# Once a race (one run in five): an opening process took a fresh index without recipe.json for
# one of another recipe and emptied its folder under the others. search/holdings.py now opens
# an index under a lock of its own and empties it only when recipe.json exists and differs.
def test_processes_opening_a_fresh_home_at_once_share_its_indexes(tmp_path: Path) -> None:
    root = make_home(tmp_path / "home")
    writers, _, _ = run_processes("file", str(root), tmp_path, writers=6, count=5)
    assert sum(w["done"] for w in writers) == 30 and not [e for w in writers for e in w["errors"]]
