"""Every SQLite file the library opens turns to WAL mode while another process holds its lock.

Issue 23 CI: processes opening a fresh Home at once failed with "database is locked" from
``PRAGMA journal_mode = WAL``: SQLite refuses the switch of a new file at once, without waiting
out the busy timeout, while another connection holds a write lock on it. Each opener below goes
through ``stores.sqlite_file.use_wal``, which tries again until the lock is let go.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_memory.log.sqlite import SQLiteLog
from agent_memory.search.embedders import HashEmbedder
from agent_memory.search.fts import FtsIndex
from agent_memory.search.holdings import Ledger
from agent_memory.search.vectors import VectorIndex
from agent_memory.stores.sqlite import SQLiteStore
from agent_memory.stores.sqlite_file import use_wal
from agent_memory.write.dedup_table import KeyTable

OPENERS: dict[str, Callable[[Path], Any]] = {
    "store": SQLiteStore,
    "log": SQLiteLog,
    "bm25 index": FtsIndex,
    "vector index": lambda path: VectorIndex(path, HashEmbedder(dimensions=16)),
    "index ledger": Ledger,
    "write-keys table": lambda path: KeyTable(path, "identity"),
}


def _locked_for_a_while(path: Path, seconds: float = 0.3) -> threading.Thread:
    """Hold a write lock on the new file ``path`` from another connection for ``seconds``."""
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    release = threading.Timer(seconds, lambda: (other.execute("ROLLBACK"), other.close()))
    release.start()
    return release


def test_sqlite_refuses_the_switch_at_once_without_the_helper(tmp_path: Path) -> None:
    path = tmp_path / "plain.sqlite"
    release = _locked_for_a_while(path)
    conn = sqlite3.connect(path, timeout=5.0, isolation_level=None)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        conn.execute("PRAGMA journal_mode = WAL")
    release.join()
    use_wal(conn, synchronous="NORMAL", timeout_seconds=5.0)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    conn.close()


def test_the_switch_gives_up_after_its_timeout(tmp_path: Path) -> None:
    path = tmp_path / "held.sqlite"
    release = _locked_for_a_while(path, seconds=2.0)
    conn = sqlite3.connect(path, timeout=0.0, isolation_level=None)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        use_wal(conn, synchronous="NORMAL", timeout_seconds=0.1)
    release.join()
    conn.close()


@pytest.mark.parametrize("opener", sorted(OPENERS))
def test_each_file_turns_to_wal_while_another_connection_holds_its_lock(tmp_path: Path, opener: str) -> None:
    path = tmp_path / "new.sqlite"
    release = _locked_for_a_while(path)
    opened = OPENERS[opener](path)
    release.join()
    try:
        with sqlite3.connect(path) as raw:
            assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        opened.close()
