"""A write never loads a model: a cold vector index gets new versions at the next query (Deferred)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from search_kit import ScriptedEmbedder, file_store, ids, record

from agent_memory.search.catalog import FULL_CHECK_SECONDS, IndexCatalog
from agent_memory.search.fts import FtsIndex
from agent_memory.search.recipes import BUILTIN_RECIPES, RecipeSpec, SearchSettings
from agent_memory.search.vectors import VectorIndex
from agent_memory.stores.files import FileStore
from agent_memory.stores.inmemory import InMemoryStore

TEXTS = [
    "The staging host is db-2 in Frankfurt.",
    "Ada drinks green tea every morning.",
    "Deploys run from the release branch on Fridays.",
]
COLD = RecipeSpec("v", "vector", {"embedder": "hash", "dimensions": 64})
BOTH = RecipeSpec(
    "both", "hybrid", {"fusion": "rrf", "weights": [1.0, 1.0], "k_rrf": 60}, (BUILTIN_RECIPES["bm25"], COLD)
)


@pytest.fixture
def store(tmp_path: Path) -> FileStore:
    return file_store(tmp_path / "notes", TEXTS)


def home_catalog(
    tmp_path: Path, store: FileStore, embedder: ScriptedEmbedder, monkeypatch: pytest.MonkeyPatch
) -> IndexCatalog:
    monkeypatch.setattr("agent_memory.search.holdings.make_embedder", lambda spec: embedder)
    catalog = IndexCatalog.for_home(tmp_path / ".cache", store, search=SearchSettings(("both",), (BOTH,)))
    for part in BOTH.leaves():  # open on their own too, so a test can read or count one side alone
        catalog.add_recipe(part)
    return catalog


def test_a_write_leaves_a_cold_vector_index_alone_and_the_next_query_embeds_it(
    tmp_path: Path, store: FileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = ScriptedEmbedder()
    catalog = home_catalog(tmp_path, store, embedder, monkeypatch)
    fresh = record("Lunch is at noon in the canteen.", 9)
    store.put(fresh)
    catalog.written([fresh])
    assert embedder.embedded == [] and not embedder.loaded  # no model for a write
    behind = {s["name"]: s["stale"] for s in catalog.status() if s["name"] != "both"}
    assert behind == {"bm25": 3, "v": 4}  # nothing refreshed yet; the vectors lack the write too
    assert ids(catalog.query("canteen lunch noon", recipes=["v"])[0])[:1] == [fresh.id]
    assert fresh.body in embedder.embedded
    catalog.close()


def test_once_the_model_is_loaded_a_write_is_embedded_at_once(
    tmp_path: Path, store: FileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = ScriptedEmbedder()
    catalog = home_catalog(tmp_path, store, embedder, monkeypatch)
    catalog.refresh()
    assert embedder.loaded
    fresh = record("The printer is on floor three.", 9)
    store.put(fresh)
    catalog.written([fresh])
    assert embedder.embedded[-1] == fresh.body
    assert not any(s["dirty"] for s in catalog.status())
    catalog.close()


class CountingEmbedder(ScriptedEmbedder):
    """A :class:`ScriptedEmbedder` that also keeps each call's texts, to count batches."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Any:
        self.calls.append(list(texts))
        return super().embed(texts)


def test_with_defer_embedding_a_loaded_model_waits_for_the_next_query_and_embeds_in_one_batch(
    tmp_path: Path, store: FileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = CountingEmbedder()
    catalog = home_catalog(tmp_path, store, embedder, monkeypatch)
    catalog.refresh()
    assert embedder.loaded and not catalog.defer_embedding
    catalog.defer_embedding = True
    calls = len(embedder.calls)
    notes = [
        record(text, 9 + i)
        for i, text in enumerate(("Lunch is at noon.", "The canteen moved.", "Noon bell."))
    ]
    for note in notes:
        store.put(note)
        catalog.written([note])  # one remember each, as an agent makes them
    assert len(embedder.calls) == calls  # no write embedded anything, though the model is loaded
    waiting = {s["name"]: (s["waiting"], s["dirty"]) for s in catalog.status()}
    assert waiting["v"] == (3, False) and waiting["bm25"] == (0, False)  # waiting is not dirty
    assert ids(catalog.query("canteen", recipes=["bm25"])[0]) == [notes[1].id]  # BM25 has them already
    hits = catalog.query("lunch noon canteen", recipes=["v"])[0]
    assert {n.id for n in notes} <= set(ids(hits))
    assert embedder.calls[calls:-1] == [[n.body for n in notes]]  # the three in one batch, then the question
    assert not any(s["waiting"] or s["dirty"] for s in catalog.status())
    catalog.close()


def test_a_deferred_write_is_indexed_by_a_refresh_even_while_the_signal_is_quiet(
    tmp_path: Path, store: FileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [0.0]
    embedder = ScriptedEmbedder()
    monkeypatch.setattr("agent_memory.search.holdings.make_embedder", lambda spec: embedder)
    search = SearchSettings(("both",), (BOTH,))
    catalog = IndexCatalog.for_home(tmp_path / ".cache", store, search=search, clock=lambda: now[0])
    catalog.refresh()
    embedder.loaded = False  # as if the model had not been needed yet
    fresh = record("Backups run nightly at two.", 9)
    store.put(fresh)
    catalog.written([fresh])
    assert embedder.embedded.count(fresh.body) == 0
    assert catalog.refresh() == 1  # before FULL_CHECK_SECONDS: only the deferred record is read
    assert embedder.embedded.count(fresh.body) == 1
    assert not any(s["dirty"] for s in catalog.status())
    now[0] += FULL_CHECK_SECONDS
    assert catalog.refresh() == 0
    catalog.close()


def test_another_process_finds_a_deferred_write_by_its_vectors(
    tmp_path: Path, store: FileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = home_catalog(tmp_path, store, ScriptedEmbedder(), monkeypatch)
    first.refresh()
    first.close()
    cold = ScriptedEmbedder()
    second = home_catalog(tmp_path, store, cold, monkeypatch)  # a later CLI process
    later = record("The canteen closes at three on Fridays.", 10)
    store.put(later)
    second.written([later])
    second.close()  # exits without a query: nothing embedded
    assert cold.embedded == []
    third = home_catalog(tmp_path, store, ScriptedEmbedder(), monkeypatch)
    third.refresh()
    assert ids(third.query("canteen closes Fridays", recipes=["v"])[0])[:1] == [later.id]
    third.close()


def test_an_erased_deferred_record_is_never_indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    store = InMemoryStore()
    embedder = ScriptedEmbedder()
    catalog = IndexCatalog(store, {"bm25": FtsIndex(":memory:"), "v": VectorIndex(":memory:", embedder)})
    gone = record("Quarterly report is due in April.")
    store.put(gone)
    catalog.written([gone])
    store.erase(gone.id, "test")
    catalog.erased([gone.id])
    assert catalog.query("quarterly report") == [[], []]
    assert gone.body not in embedder.embedded
    catalog.close()


def counting_reads(store: FileStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Count the ids ``store.get`` is asked for from now on."""
    asked: list[str] = []
    get = store.get

    def counted(record_id: str) -> Any:
        asked.append(record_id)
        return get(record_id)

    monkeypatch.setattr(store, "get", counted)
    return asked


def indexed_then_cold(
    tmp_path: Path, store: FileStore, monkeypatch: pytest.MonkeyPatch
) -> tuple[IndexCatalog, ScriptedEmbedder]:
    """Return a catalog that indexed ``store``, its model then unloaded: writes defer, as in a CLI import."""
    embedder = ScriptedEmbedder()
    catalog = home_catalog(tmp_path, store, embedder, monkeypatch)
    catalog.refresh(force=True)
    embedder.loaded = False
    return catalog, embedder


def test_the_next_query_indexes_the_deferred_versions_this_process_wrote_without_reading_them_back(
    tmp_path: Path, store: FileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog, embedder = indexed_then_cold(tmp_path, store, monkeypatch)
    notes = [record(text, 9 + i) for i, text in enumerate(("Lunch is at noon.", "The canteen moved."))]
    for note in notes:
        store.put(note)
    catalog.written(notes)
    asked = counting_reads(store, monkeypatch)
    hits = catalog.query("lunch noon canteen", recipes=["v"])[0]
    assert {n.id for n in notes} <= set(ids(hits))
    assert not set(asked) & {n.id for n in notes}  # the kept versions stood in (issue 21 item 5)
    assert all(n.body in embedder.embedded for n in notes)
    assert not any(s["waiting"] or s["dirty"] for s in catalog.status())
    catalog.close()


def test_a_deferred_version_another_process_erased_meanwhile_is_read_again_and_never_indexed(
    tmp_path: Path, store: FileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog, embedder = indexed_then_cold(tmp_path, store, monkeypatch)
    gone = record("Quarterly report is due in April.", 9)
    store.put(gone)
    catalog.written([gone])
    FileStore(store.root).erase(gone.id, "another process")  # its token moves; this one is not told
    asked = counting_reads(store, monkeypatch)
    assert gone.id not in ids(catalog.query("quarterly report April", recipes=["v"])[0])
    assert gone.id in asked and gone.body not in embedder.embedded
    catalog.close()
