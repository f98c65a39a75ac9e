"""The adapters the search contract suite runs against: one entry per `SearchIndex` adapter.

To put a new index under the contract, add one ``pytest.param(Adapter(factory, ...), id=...)``
to :data:`INDEX_ADAPTERS`. A factory is a context manager that takes the test's own
``tmp_path``, yields a fresh, empty index and closes it afterwards; it calls ``pytest.skip``
when its backend is unavailable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent_memory.search.base import SearchIndex
from agent_memory.search.embedders import HashEmbedder
from agent_memory.search.fts import FtsIndex
from agent_memory.search.hybrid import HybridIndex
from agent_memory.search.vectors import VectorIndex
from pg_indexes import pg_text_index, pg_vector_index

IndexFactory = Callable[[Path], AbstractContextManager[SearchIndex]]


@dataclass(frozen=True)
class Adapter:
    """One index under the contract.

    Attributes:
        make: The factory.
        keyword: True when hits are exactly the notes that share a word with the query (BM25,
            and fusions that include it): the suite then also checks that a note containing
            a query's literal term is always found and that text no note contains finds
            nothing. Vector-only indexes rank every note and set it False.
    """

    make: IndexFactory
    keyword: bool = True


@contextmanager
def fts_index(tmp_path: Path) -> Iterator[SearchIndex]:
    with FtsIndex(tmp_path / "fts.sqlite") as index:
        yield index


@contextmanager
def vector_index(tmp_path: Path) -> Iterator[SearchIndex]:
    with VectorIndex(tmp_path / "vectors.sqlite", HashEmbedder()) as index:
        yield index


@contextmanager
def hybrid_index(tmp_path: Path) -> Iterator[SearchIndex]:
    with (
        FtsIndex(tmp_path / "fts.sqlite") as fts,
        VectorIndex(tmp_path / "vectors.sqlite", HashEmbedder()) as vec,
    ):
        yield HybridIndex([fts, vec])


INDEX_ADAPTERS: list[Any] = [
    pytest.param(Adapter(fts_index), id="fts"),
    pytest.param(Adapter(vector_index, keyword=False), id="vector-hash"),
    pytest.param(Adapter(hybrid_index), id="hybrid-fts-hash"),
    pytest.param(Adapter(pg_text_index), id="pg-fulltext"),
    pytest.param(Adapter(pg_vector_index, keyword=False), id="pg-vector-hash"),
]


@pytest.fixture(params=INDEX_ADAPTERS)
def adapter(request: pytest.FixtureRequest) -> Adapter:
    """Each adapter of :data:`INDEX_ADAPTERS` in turn."""
    made: Adapter = request.param
    return made


@pytest.fixture
def index(adapter: Adapter, tmp_path: Path) -> Iterator[SearchIndex]:
    """A fresh, empty index of each adapter, in its own ``tmp_path``."""
    with adapter.make(tmp_path) as made:
        yield made


@pytest.fixture
def make_index(adapter: Adapter, tmp_path: Path) -> Iterator[Callable[[], SearchIndex]]:
    """Build more fresh indexes of the same adapter (each in its own folder), closed afterwards."""
    with ExitStack() as stack:
        count = 0

        def make() -> SearchIndex:
            nonlocal count
            count += 1
            folder = tmp_path / f"extra-{count}"
            folder.mkdir()
            return stack.enter_context(adapter.make(folder))

        yield make
