"""Fixtures for the porcelain: a Memory per store kind, a fixed clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_memory.home import Home
from agent_memory.log.inmemory import MemoryLog
from agent_memory.memory import Memory
from agent_memory.search.catalog import IndexCatalog
from agent_memory.search.recipes import SearchSettings, splice_search
from agent_memory.stores.sqlite import SQLiteStore

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def at(days: float = 0, hours: float = 0) -> datetime:
    """The fixed clock plus an offset."""
    return T0 + timedelta(days=days, hours=hours)


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Key files go to the user's config folder; keep every test's in its own.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.fixture(params=["inmemory", "home", "sqlite"])
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Memory]:
    """A fresh Memory over the in-memory store, a Home's Markdown notes, or SQLite."""
    if request.param == "inmemory":
        made = Memory.in_memory()
    elif request.param == "home":
        Home.init(tmp_path / "home", git=False, now=T0)
        # These tests match words; the default hybrid index would also match by meaning.
        toml = tmp_path / "home" / "memory.toml"
        toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
        made = Memory.open(tmp_path / "home")
    else:
        store = SQLiteStore(tmp_path / "memory.sqlite")
        made = Memory(store, MemoryLog(), IndexCatalog.in_memory(store))
    with made:
        yield made
