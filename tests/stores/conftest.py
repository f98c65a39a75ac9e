"""The adapters the store contract suite runs against: one factory per `RecordStore` adapter.

To put a new adapter under the contract, add one ``pytest.param(factory, id=...)`` to
:data:`STORE_FACTORIES`. A factory is a context manager that takes the test's own
``tmp_path``, yields a fresh, empty store and cleans up after it (close connections, drop
a schema); it calls ``pytest.skip`` when its backend is unavailable (no PostgreSQL server).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import pytest

from agent_memory.records.record import MemoryRecord
from agent_memory.stores.base import RecordStore
from agent_memory.stores.files import FileStore
from agent_memory.stores.inmemory import InMemoryStore
from agent_memory.stores.sqlite import SQLiteStore
from pg import postgres_cluster, postgres_schema, postgres_store  # noqa: F401 - fixtures


class ErasableStore(RecordStore, Protocol):
    """The port plus the ``erase`` every adapter has (deliberately not on the port)."""

    def erase(self, record_id: str, reason: str, *, now: datetime | None = None) -> MemoryRecord:
        """Replace every version of ``record_id`` by its tombstone and return it."""
        ...


StoreFactory = Callable[[Path], AbstractContextManager[ErasableStore]]


@contextmanager
def in_memory_store(tmp_path: Path) -> Iterator[ErasableStore]:
    yield InMemoryStore()


@contextmanager
def markdown_file_store(tmp_path: Path) -> Iterator[ErasableStore]:
    yield FileStore(tmp_path / "notes")


@contextmanager
def json_file_store(tmp_path: Path) -> Iterator[ErasableStore]:
    yield FileStore(tmp_path / "records", codec="json")


@contextmanager
def sqlite_store(tmp_path: Path) -> Iterator[ErasableStore]:
    with SQLiteStore(tmp_path / "memory.sqlite") as store:
        yield store


STORE_FACTORIES: list[Any] = [
    pytest.param(in_memory_store, id="inmemory"),
    pytest.param(markdown_file_store, id="files-markdown"),
    pytest.param(json_file_store, id="files-json"),
    pytest.param(sqlite_store, id="sqlite"),
    pytest.param(postgres_store, id="postgres"),
]


@pytest.fixture(params=[pytest.param(sqlite_store, id="sqlite"), pytest.param(postgres_store, id="postgres")])
def batch_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ErasableStore]:
    """A fresh, empty store of each adapter that has ``put_many`` (:class:`BatchPut`)."""
    factory: StoreFactory = request.param
    with factory(tmp_path) as made:
        yield made


@pytest.fixture(params=STORE_FACTORIES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ErasableStore]:
    """A fresh, empty store of each adapter in :data:`STORE_FACTORIES`, in its own ``tmp_path``."""
    factory: StoreFactory = request.param
    with factory(tmp_path) as made:
        yield made
