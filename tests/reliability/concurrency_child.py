"""One process of the concurrency test: a writer of N remembers, or a reader recalling in a loop.

Run as ``python concurrency_child.py ROLE KIND LOCATION NUMBER COUNT GO STOP``:

- ROLE ``writer`` remembers COUNT distinct texts (``Writer NUMBER note I: …``); ``reader``
  recalls in a loop until the file STOP exists;
- KIND ``file`` (LOCATION is a Home), ``sqlite`` (LOCATION is a folder holding
  ``memory.sqlite`` and ``cache/``) or ``postgres`` (LOCATION is ``DSN SCHEMA`` joined by ``|``);
- every process waits for the file GO before its first operation, so all start together.

Prints one JSON line: ``{"role", "number", "done", "errors": [repr, …], "seconds"}``. An
error is anything that reached this caller, a lock error included: the test expects none.
"""

from __future__ import annotations

import json
import sys
import time
from contextlib import ExitStack
from pathlib import Path

from agent_memory.memory import Memory
from agent_memory.search.catalog import IndexCatalog
from agent_memory.search.recipes import SearchSettings

WORDS = ("staging", "backup", "deploy", "lighthouse", "tea", "printer", "vpn", "budget", "cluster", "ticket")


def open_memory(kind: str, location: str, stack: ExitStack) -> Memory:
    """Open the shared memory of KIND at LOCATION the way each adapter is meant to be shared."""
    if kind == "file":
        return stack.enter_context(Memory.open(location))
    if kind == "sqlite":
        from agent_memory.log.sqlite import SQLiteLog
        from agent_memory.stores.sqlite import SQLiteStore

        folder = Path(location)
        store = stack.enter_context(SQLiteStore(folder / "memory.sqlite"))
        log = stack.enter_context(SQLiteLog(folder / "memory.sqlite"))
        catalog = IndexCatalog.for_home(folder / "cache", store, search=SearchSettings(("bm25",)))
        return stack.enter_context(Memory(store, log, catalog))
    from agent_memory.log.postgres import PostgresLog
    from agent_memory.search.postgres import PgTextIndex
    from agent_memory.stores.postgres import PostgresStore

    dsn, schema = location.split("|")
    pg_store = stack.enter_context(PostgresStore(dsn, schema=schema))
    pg_log = stack.enter_context(PostgresLog(dsn, schema=schema))
    index = stack.enter_context(PgTextIndex(dsn, schema=schema))
    return stack.enter_context(Memory(pg_store, pg_log, IndexCatalog(pg_store, {"fulltext": index})))


def main() -> None:
    """Run one writer or reader (see the module docstring) and print its summary."""
    role, kind, location, number, count, go, stop = sys.argv[1:8]
    errors: list[str] = []
    done = 0
    with ExitStack() as stack:
        memory = open_memory(kind, location, stack)
        while not Path(go).exists():
            time.sleep(0.01)
        started = time.perf_counter()
        if role == "writer":
            for i in range(int(count)):
                words = " ".join(WORDS[(i * 7 + j * 3 + int(number)) % len(WORDS)] for j in range(4))
                try:
                    memory.remember(f"Writer {number} note {i}: {words}.", source=f"writer-{number}")
                    done += 1
                except Exception as exc:  # every error reaching the caller is a finding
                    errors.append(repr(exc))
        else:
            while not Path(stop).exists():
                try:
                    memory.recall(WORDS[done % len(WORDS)] + " note", budget_tokens=500)
                    done += 1
                except Exception as exc:  # every error reaching the caller is a finding
                    errors.append(repr(exc))
                    time.sleep(0.01)
        seconds = time.perf_counter() - started
    print(
        json.dumps(
            {"role": role, "number": int(number), "done": done, "errors": errors[:20], "seconds": seconds}
        )
    )


if __name__ == "__main__":
    main()
