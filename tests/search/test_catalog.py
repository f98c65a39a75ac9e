"""IndexCatalog: index folders with recipe.json and inputs.json, rebuilds, indexes side by side, choice."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from search_kit import ScriptedEmbedder, file_store, ids, record

from agent_memory.errors import ConfigError, StoreError
from agent_memory.search import embedders
from agent_memory.search.base import inputs_digest, version_digest
from agent_memory.search.catalog import FULL_CHECK_SECONDS, IndexCatalog
from agent_memory.search.fts import FtsIndex
from agent_memory.search.holdings import unavailable
from agent_memory.search.recipes import BUILTIN_RECIPES, RecipeSpec, SearchSettings
from agent_memory.search.vectors import VectorIndex
from agent_memory.stores.files import FileStore
from agent_memory.stores.inmemory import InMemoryStore

TEXTS = [
    "The staging host is db-2 in Frankfurt.",
    "Ada drinks green tea every morning.",
    "Deploys run from the release branch on Fridays.",
    "The office wifi password rotates monthly.",
]
MIX = RecipeSpec(
    "mix",
    "hybrid",
    {"fusion": "rrf", "weights": [1.0, 1.0], "k_rrf": 60},
    (
        BUILTIN_RECIPES["bm25"],
        BUILTIN_RECIPES["vectors-hash"],
    ),
)


OPENAI = RecipeSpec(
    "fused",
    "hybrid",
    {"fusion": "rrf", "weights": [1.0, 1.0], "k_rrf": 60},
    (
        BUILTIN_RECIPES["bm25"],
        RecipeSpec(
            "local",
            "vector",
            {"embedder": "openai", "base_url": "http://h:8080/v1", "model": "m", "api_key_env": "EMBED_KEY"},
        ),
    ),
)


@pytest.fixture
def store(tmp_path: Path) -> FileStore:
    return file_store(tmp_path / "notes", TEXTS)


def home_catalog(
    tmp_path: Path, store: Any, *recipes: str, defined: Sequence[RecipeSpec] = ()
) -> IndexCatalog:
    search = SearchSettings(tuple(recipes) or None, tuple(defined))
    return IndexCatalog.for_home(tmp_path / ".cache", store, search=search)


def test_each_index_has_its_folder_with_recipe_and_inputs(tmp_path: Path, store: FileStore) -> None:
    catalog = home_catalog(tmp_path, store, "bm25")
    assert catalog.refresh() == len(TEXTS)
    catalog.close()
    folder = tmp_path / ".cache" / "indexes" / "bm25"
    recipe = json.loads((folder / "recipe.json").read_text(encoding="utf-8"))
    inputs = json.loads((folder / "inputs.json").read_text(encoding="utf-8"))
    assert recipe["kind"] == "bm25" and recipe["name"] == "bm25" and recipe["query"] == "and-then-or"
    expected = inputs_digest((r.id, version_digest(r)) for r in store.list())
    assert inputs["count"] == len(TEXTS) and inputs["digest"] == expected
    assert datetime.fromisoformat(inputs["built_at"].replace("Z", "+00:00")).tzinfo is not None


def test_an_index_whose_recipe_changed_is_rebuilt(tmp_path: Path, store: FileStore) -> None:
    catalog = home_catalog(tmp_path, store, "bm25")
    catalog.refresh()
    catalog.close()
    reopened = home_catalog(tmp_path, store, "bm25")
    assert reopened.refresh() == 0  # same recipe: nothing to read again
    reopened.close()
    wide = RecipeSpec("bm25", "bm25", {"mode": "or"})
    changed = home_catalog(tmp_path, store, "bm25", defined=[wide])
    assert changed.refresh() == len(TEXTS)  # emptied and filled again
    assert ids(changed.query("tea OR nothing")[0]) == ids(changed.query("tea")[0])
    changed.close()
    recipe = json.loads(
        (tmp_path / ".cache" / "indexes" / "bm25" / "recipe.json").read_text(encoding="utf-8")
    )
    assert recipe["query"] == "or"


def test_several_indexes_live_side_by_side_and_a_hybrid_shares_its_parts(
    tmp_path: Path, store: FileStore
) -> None:
    catalog = home_catalog(tmp_path, store, "bm25", "vectors-hash", "mix", defined=[MIX])
    catalog.refresh()
    results = catalog.query("green tea", k=2)
    assert len(results) == 3
    assert all(ids(hits)[0] == store.list()[1].id for hits in results)
    assert [s["name"] for s in catalog.status()] == ["bm25", "vectors-hash", "mix"]
    assert all(not s["dirty"] and s["indexed"] == len(TEXTS) for s in catalog.status())
    catalog.close()
    folders = sorted(p.name for p in (tmp_path / ".cache" / "indexes").iterdir() if p.is_dir())
    assert folders == ["bm25", "mix", "vectors-hash"]
    assert not (tmp_path / ".cache" / "indexes" / "mix" / "index.sqlite").exists()


def test_query_and_using_read_the_named_indexes_only(tmp_path: Path, store: FileStore) -> None:
    catalog = home_catalog(tmp_path, store, "bm25")
    catalog.add_recipe(BUILTIN_RECIPES["vectors-hash"])
    catalog.refresh()
    assert catalog.active == ("bm25",) and len(catalog.query("tea")) == 1
    with catalog.using(["vectors-hash", "bm25"]):
        assert catalog.active == ("vectors-hash", "bm25")
    assert catalog.active == ("bm25",)
    assert ids(catalog.query("tea", recipes=["vectors-hash"])[0])[0] == store.list()[1].id
    with pytest.raises(ConfigError, match="no open index"):
        catalog.query("tea", recipes=["hybrid"])
    with pytest.raises(ConfigError, match="no open index"), catalog.using(["ghost"]):
        pass
    catalog.close()


def test_two_recipes_may_not_give_one_part_name_different_options(tmp_path: Path, store: FileStore) -> None:
    catalog = home_catalog(tmp_path, store, "bm25")
    with pytest.raises(ConfigError, match="different options"):
        catalog.add_recipe(RecipeSpec("bm25", "bm25", {"mode": "or"}))
    catalog.close()


def _without_minilm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedders, "_MODEL_FILE", ("agent-memory-absent-model", "model.onnx"))
    monkeypatch.setattr(
        "agent_memory.search.holdings._minilm", lambda *args: embedders.MiniLMEmbedder(max_tokens=args[0])
    )


def test_without_the_extra_the_default_is_bm25_alone_and_says_why(
    tmp_path: Path, store: FileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _without_minilm(monkeypatch)
    catalog = home_catalog(tmp_path, store)
    described = catalog.describe()
    assert described["recipes"] == ["bm25"]
    assert "BM25 alone" in described["why"] and "agent-memory[embeddings]" in described["why"]
    catalog.close()


def test_with_the_extra_the_default_fuses_bm25_and_minilm(tmp_path: Path, store: FileStore) -> None:
    pytest.importorskip("onnxruntime")
    catalog = home_catalog(tmp_path, store)
    assert catalog.describe()["recipes"] == ["hybrid"]
    assert "all-MiniLM-L6-v2" in catalog.describe()["why"]
    catalog.refresh()
    assert ids(catalog.query("what does Ada like to drink?", k=1)[0]) == [store.list()[1].id]
    catalog.close()


def test_a_configured_recipe_this_machine_cannot_open_is_left_out_and_explained(
    tmp_path: Path, store: FileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _without_minilm(monkeypatch)
    catalog = home_catalog(tmp_path, store, "hybrid", "vectors-hash")
    assert catalog.active == ("vectors-hash",)
    assert "agent-memory[embeddings]" in catalog.describe()["unavailable"]["hybrid"]
    catalog.close()
    alone = home_catalog(tmp_path, store, "hybrid")
    assert alone.active == ("bm25",) and "none could be opened here" in alone.why
    alone.close()


def test_a_deleted_index_file_is_noticed_and_filled_again(tmp_path: Path, store: FileStore) -> None:
    catalog = home_catalog(tmp_path, store, "bm25")
    catalog.refresh()
    before = ids(catalog.query("host")[0])
    catalog.close()
    for path in (tmp_path / ".cache" / "indexes" / "bm25").glob("index.sqlite*"):
        path.unlink()
    reopened = home_catalog(tmp_path, store, "bm25")
    assert reopened.refresh() == len(TEXTS)
    assert ids(reopened.query("host")[0]) == before
    reopened.close()


def test_an_index_holding_a_record_the_store_lacks_is_rebuilt(tmp_path: Path, store: FileStore) -> None:
    catalog = home_catalog(tmp_path, store, "bm25")
    catalog.refresh()
    catalog.close()
    with FtsIndex(tmp_path / ".cache" / "indexes" / "bm25" / "index.sqlite") as index:
        index.index([record("A ghost note about zeppelins.")])  # written behind the ledger's back
    reopened = home_catalog(tmp_path, store, "bm25")
    reopened.refresh()
    assert reopened.query("zeppelins") == [[]]
    assert reopened.status()[0]["indexed"] == len(TEXTS)
    reopened.close()


def test_a_damaged_ledger_means_reading_every_record_again(tmp_path: Path, store: FileStore) -> None:
    catalog = home_catalog(tmp_path, store, "bm25")
    catalog.refresh()
    catalog.close()
    ledger = tmp_path / ".cache" / "indexes" / "state.sqlite"
    ledger.write_bytes(b"not a database" * 100)
    reopened = home_catalog(tmp_path, store, "bm25")
    assert reopened.refresh() == len(TEXTS)
    assert len(reopened.query("tea")[0]) == 1
    reopened.close()


def test_quiet_refreshes_skip_the_token_check_until_it_is_due(tmp_path: Path, store: FileStore) -> None:
    now = [100.0]
    catalog = IndexCatalog.for_home(
        tmp_path / ".cache", store, search=SearchSettings(("bm25",)), clock=lambda: now[0]
    )
    catalog.refresh()
    target = store.list()[0]
    path = next((tmp_path / "notes" / target.id[4:]).glob("*.md"))
    path.write_bytes(path.read_bytes().replace(b"db-2", b"db-7"))  # in place: no folder changes
    assert catalog.refresh() == 0  # the signal did not move and the last check is recent
    now[0] += FULL_CHECK_SECONDS
    assert catalog.refresh() == 1
    assert catalog.query("db-2") == [[]]
    assert isinstance(catalog.problems()[0], StoreError)
    catalog.close()


def test_a_write_of_this_process_keeps_the_signal_quiet_until_the_next_full_check(
    tmp_path: Path, store: FileStore
) -> None:
    now = [0.0]
    catalog = IndexCatalog.for_home(
        tmp_path / ".cache", store, search=SearchSettings(("bm25",)), clock=lambda: now[0]
    )
    catalog.refresh()
    theirs = record("Another process noted the fire drill on Monday.", 20)
    store.put(theirs)  # another writer, just before this process writes
    mine = record("This process noted the canteen menu.", 21)
    store.put(mine)
    catalog.written([mine])
    assert catalog.refresh() == 0 and catalog.query("fire drill") == [[]]
    assert ids(catalog.query("canteen menu")[0]) == [mine.id]
    now[0] += FULL_CHECK_SECONDS
    assert catalog.refresh() == 1
    assert ids(catalog.query("fire drill")[0]) == [theirs.id]
    catalog.close()


def test_written_and_erased_records_are_reflected_at_once(tmp_path: Path, store: FileStore) -> None:
    catalog = home_catalog(tmp_path, store, "bm25", "vectors-hash")
    catalog.refresh()
    extra = record("Lunch is at noon in the canteen.", 9)
    store.put(extra)
    catalog.written([extra])
    assert all(ids(hits)[:1] == [extra.id] for hits in catalog.query("canteen lunch"))
    assert all(not s["dirty"] for s in catalog.status())
    store.erase(extra.id, "test")
    catalog.erased([extra.id])
    assert catalog.query("canteen") == [[], []]
    assert [(s["indexed"], s["records"], s["dirty"]) for s in catalog.status()] == [(4, 4, False)] * 2
    catalog.close()


def test_status_counts_records_another_writer_added(tmp_path: Path, store: FileStore) -> None:
    catalog = home_catalog(tmp_path, store, "bm25")
    catalog.refresh()
    store.put(record("Backups run nightly at two.", 10))
    store.put(record("The printer is on floor three.", 11))
    assert catalog.status() == [
        {
            "name": "bm25",
            "kind": "bm25",
            "active": True,
            "indexed": 4,
            "records": 6,
            "stale": 2,
            "waiting": 0,
            "dirty": True,
        }
    ]
    catalog.refresh(force=True)
    assert catalog.status()[0]["dirty"] is False
    catalog.close()


def test_an_index_that_cannot_be_updated_is_retried_and_the_write_stands() -> None:
    store = InMemoryStore()
    embedder = ScriptedEmbedder()
    embedder.loaded = True  # a warm model: a write embeds at once
    catalog = IndexCatalog(store, {"bm25": FtsIndex(":memory:"), "v": VectorIndex(":memory:", embedder)})
    first = record("Quarterly report is due in April.")
    store.put(first)
    embedder.down = True
    catalog.written([first])  # no error: the record is stored, BM25 has it
    bm25, vectors = catalog.query("quarterly report")
    assert ids(bm25) == [first.id] and vectors == []
    assert [s["dirty"] for s in catalog.status()] == [False, True]
    assert "connection refused" in catalog.describe()["unavailable"]["v"]
    embedder.down = False
    catalog.refresh()
    assert ids(catalog.query("quarterly report")[1]) == [first.id]
    catalog.close()


def test_a_hybrid_whose_vector_part_fails_still_answers_with_its_other_parts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = InMemoryStore()
    for i, text in enumerate(TEXTS):
        store.put(record(text, i))
    embedder = ScriptedEmbedder()
    embedder.loaded = True  # a warm model: a write embeds at once
    catalog = IndexCatalog(store)
    flaky = RecipeSpec("v", "vector", {"embedder": "hash", "dimensions": 64})
    both = RecipeSpec(
        "both",
        "hybrid",
        {"fusion": "rrf", "weights": [1.0, 1.0], "k_rrf": 60},
        (BUILTIN_RECIPES["bm25"], flaky),
    )
    monkeypatch.setattr("agent_memory.search.holdings.make_embedder", lambda spec: embedder)
    catalog.add_recipe(both)
    catalog.activate(["both"], "test")
    catalog.refresh()
    tea = store.list()[1].id
    assert ids(catalog.query("green tea")[0])[0] == tea
    embedder.down = True
    assert ids(catalog.query("green tea")[0]) == [tea]
    assert "both" in catalog.describe()["unavailable"]
    catalog.close()


def test_in_memory_catalogs_follow_recipes_too() -> None:
    store = InMemoryStore()
    for i, text in enumerate(TEXTS):
        store.put(record(text, i))
    catalog = IndexCatalog.in_memory(store, search=SearchSettings(("mix",), (MIX,)))
    catalog.refresh()
    assert catalog.active == ("mix",)
    assert ids(catalog.query("green tea", k=1)[0]) == [store.list()[1].id]
    catalog.close()


def test_minilm_recipes_are_unavailable_without_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_minilm(monkeypatch)
    reason = unavailable(BUILTIN_RECIPES["hybrid"])
    assert reason is not None and "vectors-minilm" in reason and "agent-memory[embeddings]" in reason
    assert unavailable(BUILTIN_RECIPES["bm25"]) is None
    assert unavailable(BUILTIN_RECIPES["vectors-hash"]) is None


def test_an_openai_recipe_needs_its_key_variable_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EMBED_KEY", raising=False)
    assert unavailable(OPENAI) == "local is unavailable: the environment variable EMBED_KEY is not set"
    monkeypatch.setenv("EMBED_KEY", "secret")
    assert unavailable(OPENAI) is None
