"""`VectorIndex`: no text embedded twice, exact cosine ranking, purge leaves nothing, reopen keeps all."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from search_kit import record

from agent_memory.search.base import SearchIndex, inputs_digest, version_digest
from agent_memory.search.embedders import EmbeddingError, HashEmbedder
from agent_memory.search.vectors import VectorIndex, text_hash

if TYPE_CHECKING:
    from agent_memory.search.base import Vectors

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class CountingEmbedder:
    """The hash embedder, keeping every batch of texts it was asked to embed."""

    def __init__(self, dimensions: int = 64) -> None:
        self.inner = HashEmbedder(dimensions)
        self.calls: list[list[str]] = []

    name = "hash"
    version = "sha256-sign/1"

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        return self.inner.embed(texts)

    @property
    def embedded(self) -> list[str]:
        return [text for call in self.calls for text in call]


class FixedEmbedder:
    """Maps known texts to given (unnormalised) vectors, anything else to zero."""

    name = "fixed"
    version = "1"
    dimensions = 3

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def embed(self, texts: Sequence[str]) -> Vectors:
        return np.array([self.table.get(t, [0.0, 0.0, 0.0]) for t in texts], dtype=np.float32).reshape(-1, 3)


@pytest.fixture
def counting() -> CountingEmbedder:
    return CountingEmbedder()


@pytest.fixture
def index(tmp_path: Path, counting: CountingEmbedder) -> VectorIndex:
    return VectorIndex(tmp_path / "vectors.sqlite", counting, name="vec")


def test_a_vector_index_is_a_search_index(index: VectorIndex) -> None:
    assert isinstance(index, SearchIndex)


def test_reindexing_unchanged_records_embeds_nothing(index: VectorIndex, counting: CountingEmbedder) -> None:
    records = [record("the staging database runs on port 5432"), record("deploys happen on friday")]
    index.index(records)
    index.index(records)
    index.index(reversed(records))
    assert sorted(counting.embedded) == sorted(r.body for r in records)


def test_records_with_identical_text_share_one_embedding(
    index: VectorIndex, counting: CountingEmbedder
) -> None:
    first = record("coffee with oat milk")
    second = record("coffee with oat milk", at=T0 + timedelta(days=1))
    assert first.id != second.id
    index.index([first, second])
    index.index([record("coffee with oat milk", at=T0 + timedelta(days=2))])
    assert counting.embedded == ["coffee with oat milk"]
    assert {h.record_id for h in index.query("oat milk")} >= {first.id, second.id}


def test_a_new_version_with_the_same_text_reuses_the_vector(
    index: VectorIndex, counting: CountingEmbedder
) -> None:
    original = record("alice prefers tea")
    index.index([original])
    index.index([original.evolve(confidence=0.5, updated_at=T0 + timedelta(days=1))])
    assert counting.embedded == ["alice prefers tea"]
    assert index.inputs().count == 1


def test_a_new_version_with_new_text_is_embedded_and_found_by_it(
    index: VectorIndex, counting: CountingEmbedder
) -> None:
    original = record("alice prefers tea")
    index.index([original])
    tagged = original.evolve(tags=("beverages",), updated_at=T0 + timedelta(days=1))
    index.index([tagged])
    assert counting.embedded == ["alice prefers tea", "alice prefers tea\nbeverages"]
    assert [h.record_id for h in index.query("beverages")] == [original.id]
    expected = inputs_digest([(tagged.id, version_digest(tagged))])
    assert index.inputs().digest == expected


def test_a_batch_embeds_each_distinct_text_once(tmp_path: Path) -> None:
    counting = CountingEmbedder()
    index = VectorIndex(tmp_path / "v.sqlite", counting, batch_size=2)
    bodies = ["one", "two", "three", "two", "one"]
    index.index([record(b, at=T0 + timedelta(seconds=i)) for i, b in enumerate(bodies)])
    assert sorted(counting.embedded) == ["one", "three", "two"]
    assert all(len(call) <= 2 for call in counting.calls)


def test_scores_are_cosines_sorted_best_first_with_ties_by_id(tmp_path: Path) -> None:
    embedder = FixedEmbedder(
        {"q": [1, 0, 0], "same": [2, 0, 0], "near": [3, 4, 0], "twin a": [0.6, 0.8, 0], "far": [-1, 0, 0]}
    )
    index = VectorIndex(":memory:", embedder)
    records = {b: record(b) for b in ("same", "near", "twin a", "far")}
    twin_b = record("twin a", at=T0 + timedelta(days=1))
    index.index([*records.values(), twin_b])
    hits = index.query("q")
    twins = sorted([records["twin a"].id, records["near"].id, twin_b.id])
    assert [h.record_id for h in hits] == [records["same"].id, *twins]
    assert hits[0].score == pytest.approx(1.0)
    assert [h.score for h in hits[1:]] == pytest.approx([0.6, 0.6, 0.6])


def test_k_cuts_the_ranking_after_ties_are_ordered_by_id(tmp_path: Path) -> None:
    embedder = FixedEmbedder({"q": [1, 0, 0], "x": [1, 1, 0]})
    index = VectorIndex(":memory:", embedder)
    records = [record("x", at=T0 + timedelta(seconds=i)) for i in range(10)]
    index.index(records)
    assert [h.record_id for h in index.query("q", k=3)] == sorted(r.id for r in records)[:3]
    assert index.query("q", k=0) == []


def test_blank_queries_and_queries_without_tokens_find_nothing(index: VectorIndex) -> None:
    index.index([record("anything at all")])
    for text in ("", "   ", "\n\t", "!!! ???", "日本語"):
        assert index.query(text) == []


def test_orthogonal_and_opposite_vectors_are_not_hits(tmp_path: Path) -> None:
    embedder = FixedEmbedder({"q": [1, 0, 0], "side": [0, 1, 0], "back": [-1, 0, 0]})
    index = VectorIndex(":memory:", embedder)
    index.index([record("side"), record("back")])
    assert index.query("q") == []


def test_removed_records_never_match_again_and_unknown_ids_are_ignored(index: VectorIndex) -> None:
    keep, gone = record("red apples"), record("red apples and pears")
    index.index([keep, gone])
    assert {h.record_id for h in index.query("red apples")} == {keep.id, gone.id}
    index.remove([gone.id, "mem:" + "0" * 32])
    assert [h.record_id for h in index.query("red apples")] == [keep.id]
    assert index.inputs().count == 1


def test_the_matrix_stays_in_sync_through_many_adds_and_removes(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite"
    index = VectorIndex(path, HashEmbedder(64))
    records = [record(f"note number {i} word{i}", at=T0 + timedelta(seconds=i)) for i in range(40)]
    index.index(records[:5])
    assert index.query("word1")  # loads the matrix
    index.index(records[5:])
    removed = {r.id for r in records[::3]}
    index.remove(removed)
    index.index([records[4].evolve(tags=("again",))])
    fresh = VectorIndex(path, HashEmbedder(64))  # reads every vector from the file
    for i in range(40):
        hits = index.query(f"word{i} number", k=40)
        assert hits == fresh.query(f"word{i} number", k=40)
        assert not removed & {h.record_id for h in hits}
    assert len(index.query("note number", k=100)) == 40 - len(removed)


def test_vectors_persist_across_reopening(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite"
    first = CountingEmbedder()
    records = [record("the cat sat on the mat"), record("dogs chase balls")]
    with VectorIndex(path, first) as index:
        index.index(records)
        before = index.query("cat mat")
        inputs = index.inputs()
    second = CountingEmbedder()
    with VectorIndex(path, second) as reopened:
        assert reopened.query("cat mat") == before
        assert reopened.inputs() == inputs
        reopened.index(records)
    assert second.embedded == ["cat mat"]  # the query only
    assert before[0].record_id == records[0].id


def test_a_reader_sees_what_another_connection_wrote_after_its_matrix_loaded(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite"
    first, later = record("red kite over the hill"), record("red kite nesting season")
    with VectorIndex(path, HashEmbedder(64)) as reader, VectorIndex(path, HashEmbedder(64)) as writer:
        writer.index([first])
        assert [h.record_id for h in reader.query("red kite")] == [first.id]  # matrix loaded
        writer.index([later])
        assert {h.record_id for h in reader.query("red kite")} == {first.id, later.id}
        writer.remove([first.id])
        assert [h.record_id for h in reader.query("red kite")] == [later.id]


def test_opening_with_another_embedder_empties_the_index(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite"
    with VectorIndex(path, HashEmbedder(64)) as index:
        index.index([record("alpha beta")])
    with VectorIndex(path, HashEmbedder(128)) as other:
        assert other.inputs().count == 0
        assert other.query("alpha") == []
        assert other.purge() == 1


def test_purge_deletes_unused_vectors_and_leaves_no_trace_of_them(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite"
    secret, kept = record("my locker code is zebra"), record("lunch is at noon")
    with VectorIndex(path, HashEmbedder(64)) as index:
        index.index([secret, kept])
        index.remove([secret.id])
        with sqlite3.connect(path) as conn:
            query = "SELECT vector FROM vectors WHERE text_hash = ?"
            (gone_blob,) = conn.execute(query, (text_hash(secret.body),)).fetchone()
        conn.close()
        assert gone_blob in b"".join(p.read_bytes() for p in tmp_path.iterdir())  # until purged
        assert index.purge() == 1
        assert index.purge() == 0
        assert [h.record_id for h in index.query("lunch noon")] == [kept.id]
    gone_hash = text_hash(secret.body)
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert gone_hash.encode() not in raw and gone_blob not in raw
    assert text_hash("lunch is at noon").encode() in raw


def test_no_text_is_stored_only_hashes(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite"
    with VectorIndex(path, HashEmbedder(64)) as index:
        index.index([record("a distinctive sentence about pelicans", tags=("birdwatching",))])
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"pelicans" not in raw and b"birdwatching" not in raw
    with sqlite3.connect(path) as conn:
        (stored,) = conn.execute("SELECT text_hash FROM entries").fetchone()
    conn.close()
    text = "a distinctive sentence about pelicans\nbirdwatching"
    assert stored == "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_an_embedder_returning_the_wrong_shape_is_an_error_and_writes_nothing(tmp_path: Path) -> None:
    class Broken(FixedEmbedder):
        def embed(self, texts: Sequence[str]) -> Vectors:
            return np.zeros((len(texts), 2), dtype=np.float32)

    index = VectorIndex(":memory:", Broken({}))
    with pytest.raises(EmbeddingError, match=r"returned shape \(1, 2\)"):
        index.index([record("x")])
    assert index.inputs().count == 0


def test_the_recipe_names_the_embedder_and_the_metric(index: VectorIndex) -> None:
    recipe = index.recipe
    assert recipe.kind == "vector" and recipe.name == "vec"
    assert recipe.params["embedder"] == "hash"
    assert recipe.params["embedder_version"] == "sha256-sign/1"
    assert recipe.params["dimensions"] == 64
    assert recipe.params["metric"] == "cosine"


def test_built_at_comes_from_the_injected_clock(tmp_path: Path) -> None:
    index = VectorIndex(":memory:", HashEmbedder(), clock=lambda: T0)
    assert index.inputs().built_at is None
    index.index([record("x")])
    assert index.inputs().built_at == T0


def test_a_similarity_floor_drops_weak_matches_and_is_part_of_the_recipe() -> None:
    from agent_memory.search.embedders import HashEmbedder

    index = VectorIndex(":memory:", HashEmbedder(), min_similarity=0.5)
    strong = record("alpha beta gamma delta")
    weak = record("alpha zeta eta theta iota kappa")
    index.index([strong, weak])
    hits = index.query("alpha beta gamma delta")
    assert [h.record_id for h in hits] == [strong.id]
    assert index.recipe.params["min_similarity"] == "0.50"
    with pytest.raises(ValueError, match="min_similarity"):
        VectorIndex(":memory:", HashEmbedder(), min_similarity=1.5)


def test_a_matrix_read_in_chunks_ranks_as_one_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_memory.search import vectors

    path = tmp_path / "vectors.sqlite"
    records = [record(f"red kite number {n} over hill {n % 3}") for n in range(11)]
    with VectorIndex(path, HashEmbedder(64)) as writer:
        writer.index(records)
        whole = writer.query("red kite hill 2", k=20)
    monkeypatch.setattr(vectors, "_LOAD_CHUNK", 3)  # 11 rows: four chunks, the last one short
    with VectorIndex(path, HashEmbedder(64)) as reader:
        assert reader.query("red kite hill 2", k=20) == whole
        added = record("red kite hill 2 at dusk")
        reader.index([added])  # the matrix grows past the rows it was loaded with
        assert reader.query("red kite hill 2 at dusk", k=1)[0].record_id == added.id
    assert len(whole) == 11
