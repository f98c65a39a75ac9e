"""`HybridIndex` and `fuse`: the fusion arithmetic on hand-made rankings, and fusion over real parts."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np
import pytest
from search_kit import record

from agent_memory.records.record import MemoryRecord
from agent_memory.search.base import Hit, IndexInputs, Recipe, SearchIndex
from agent_memory.search.fts import FtsIndex
from agent_memory.search.hybrid import CANDIDATES, MINMAX_FLOOR, HybridIndex, fuse
from agent_memory.search.vectors import VectorIndex

if TYPE_CHECKING:
    from agent_memory.search.base import Vectors

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def hits(*pairs: tuple[str, float]) -> list[Hit]:
    return [Hit(record_id, score) for record_id, score in pairs]


def ranking(*ids: str) -> list[Hit]:
    return [Hit(record_id, 1.0 / (n + 1)) for n, record_id in enumerate(ids)]


# ---------------------------------------------------------------------- fusion arithmetic


def test_rrf_sums_weight_over_k_plus_rank_across_parts() -> None:
    fused = fuse([ranking("x", "y", "z"), ranking("y", "w")], [1.0, 1.0], method="rrf", k_rrf=60)
    assert [h.record_id for h in fused] == ["y", "x", "w", "z"]
    scores = {h.record_id: h.score for h in fused}
    assert scores["y"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["x"] == pytest.approx(1 / 61)
    assert scores["w"] == pytest.approx(1 / 62)
    assert scores["z"] == pytest.approx(1 / 63)


def test_rrf_ignores_the_parts_raw_scores_and_applies_weights() -> None:
    a = hits(("x", 1000.0), ("y", 0.001))
    b = hits(("y", 0.9), ("x", 0.8))
    fused = fuse([a, b], [3.0, 1.0], method="rrf", k_rrf=1)
    assert [h.record_id for h in fused] == ["x", "y"]
    assert [h.score for h in fused] == pytest.approx([3 / 2 + 1 / 3, 3 / 3 + 1 / 2])


def test_rrf_ties_are_ordered_by_record_id() -> None:
    fused = fuse([ranking("b", "a"), ranking("a", "b")], [1.0, 1.0], method="rrf", k_rrf=60)
    assert [h.record_id for h in fused] == ["a", "b"]
    assert fused[0].score == fused[1].score


def test_rrf_gives_equal_scores_in_a_part_one_shared_rank() -> None:
    tied = hits(("a", 2.0), ("b", 2.0), ("c", 2.0), ("d", 1.0))
    fused = fuse([tied], [1.0], method="rrf", k_rrf=60)
    assert [h.record_id for h in fused] == ["a", "b", "c", "d"]
    assert [h.score for h in fused] == pytest.approx([1 / 61, 1 / 61, 1 / 61, 1 / 64])


def test_weighted_max_divides_each_part_by_its_best_score() -> None:
    a = hits(("x", 10.0), ("y", 5.0), ("z", 2.5))
    b = hits(("y", 0.8), ("w", 0.4))
    fused = fuse([a, b], [1.0, 2.0], method="weighted", normalise="max")
    assert {h.record_id: h.score for h in fused} == {
        "y": pytest.approx(0.5 + 2 * 1.0),
        "x": pytest.approx(1.0),
        "w": pytest.approx(2 * 0.5),
        "z": pytest.approx(0.25),
    }
    assert [h.record_id for h in fused] == ["y", "w", "x", "z"]  # w and x tie at 1.0: by id


def test_weighted_minmax_maps_each_part_onto_its_floor_to_one() -> None:
    a = hits(("x", 12.0), ("y", 8.0), ("z", 2.0))
    b = hits(("solo", 0.3))
    fused = fuse([a, b], [1.0, 1.0], method="weighted", normalise="minmax")
    assert {h.record_id: h.score for h in fused} == {
        "x": pytest.approx(1.0),
        "solo": pytest.approx(1.0),  # a part's only candidate counts fully
        "y": pytest.approx(MINMAX_FLOOR + (1 - MINMAX_FLOOR) * 0.6),
        "z": pytest.approx(MINMAX_FLOOR),  # the weakest candidate of its part: the floor, not 0
    }
    assert [h.record_id for h in fused][-1] == "z"


def test_weighted_minmax_never_pins_a_found_note_to_zero() -> None:
    a = hits(("strong", 3.0), ("weak", 1.0))
    b = hits(("strong", 0.9), ("weak", 0.4))
    fused = fuse([a, b], [2.0, 1.0], method="weighted", normalise="minmax")
    assert [(h.record_id, h.score) for h in fused] == [
        ("strong", pytest.approx(3.0)),
        ("weak", pytest.approx(3 * MINMAX_FLOOR)),
    ]
    plain = fuse([a, b], [2.0, 1.0], method="weighted", normalise="max")
    assert [h.record_id for h in plain] == ["strong", "weak"]


def test_weighted_minmax_ranks_a_weak_note_two_parts_found_above_one_only_one_found() -> None:
    a = hits(("top", 3.0), ("both", 1.0), ("bm25-only", 1.0))
    b = hits(("top", 0.9), ("both", 0.4))
    fused = fuse([a, b], [2.0, 1.0], method="weighted", normalise="minmax")
    assert [h.record_id for h in fused] == ["top", "both", "bm25-only"]
    assert min(h.score for h in fused) > 0


def test_a_part_of_weight_zero_contributes_nothing() -> None:
    fused = fuse([ranking("x"), ranking("y")], [1.0, 0.0], method="rrf")
    assert [h.record_id for h in fused] == ["x"]


def test_no_rankings_fuse_to_nothing() -> None:
    assert fuse([[], []], [1.0, 1.0]) == []


# ---------------------------------------------------------------------- the index over fake parts


class FakePart:
    """A part with a fixed ranking that records what it was asked."""

    def __init__(self, name: str, ranked: list[Hit], digest: str = "d", count: int = 0) -> None:
        self.name = name
        self.ranked = ranked
        self.asked_k: list[int] = []
        self.indexed: list[str] = []
        self.removed: list[str] = []
        self.held = IndexInputs(count=count, digest=digest, built_at=None)

    @property
    def recipe(self) -> Recipe:
        return Recipe(kind="fake", name=self.name)

    def index(self, records: Iterable[MemoryRecord]) -> None:
        self.indexed.extend(r.id for r in records)

    def remove(self, record_ids: Iterable[str]) -> None:
        self.removed.extend(record_ids)

    def query(self, text: str, *, k: int = 32) -> list[Hit]:
        self.asked_k.append(k)
        return self.ranked[:k]

    def inputs(self) -> IndexInputs:
        return self.held


def test_each_part_is_asked_for_at_least_100_candidates_whatever_k() -> None:
    a, b = FakePart("a", ranking(*"pqrs")), FakePart("b", ranking(*"srqp"))
    hybrid = HybridIndex([a, b])
    assert isinstance(hybrid, SearchIndex)
    assert len(hybrid.query("anything", k=2)) == 2
    hybrid.query("anything", k=50)
    hybrid.query("anything", k=150)
    assert CANDIDATES == 100
    assert a.asked_k == b.asked_k == [100, 100, 150]


def test_the_first_hits_are_the_same_whatever_k_is_asked() -> None:
    a = FakePart("a", ranking(*(f"a{n:03d}" for n in range(120))))
    b = FakePart("b", ranking(*(f"a{n:03d}" for n in range(119, -1, -1))))
    for method in ("rrf", "weighted"):
        hybrid = HybridIndex([a, b], method=method, weights=[2, 1])
        top = hybrid.query("anything", k=100)
        assert [hybrid.query("anything", k=k) for k in (1, 10, 32)] == [top[:1], top[:10], top[:32]]
    assert hybrid.query("anything", k=0) == []


def test_index_and_remove_go_to_every_part_once() -> None:
    a, b = FakePart("a", []), FakePart("b", [])
    hybrid = HybridIndex([a, b])
    records = [record("one"), record("two")]
    hybrid.index(r for r in records)  # a generator is read once, then given to each part
    hybrid.remove(iter([records[0].id]))
    assert a.indexed == b.indexed == [r.id for r in records]
    assert a.removed == b.removed == [records[0].id]


def test_inputs_of_agreeing_parts_are_their_common_inputs() -> None:
    hybrid = HybridIndex([FakePart("a", [], "same", 3), FakePart("b", [], "same", 3)])
    assert hybrid.inputs() == IndexInputs(count=3, digest="same", built_at=None)


def test_inputs_of_disagreeing_parts_match_no_store() -> None:
    hybrid = HybridIndex([FakePart("a", [], "one", 3), FakePart("b", [], "two", 2)])
    inputs = hybrid.inputs()
    assert inputs.count == 2
    assert re.fullmatch(r"parts:[0-9a-f]{64}", inputs.digest)


def test_the_recipe_carries_the_method_its_constants_and_the_parts_recipes() -> None:
    parts = [FakePart("a", []), FakePart("b", [])]
    rrf = HybridIndex(parts, k_rrf=20, weights=[2, 1], name="h").recipe
    assert rrf.to_json() == {
        "kind": "hybrid",
        "name": "h",
        "method": "rrf",
        "candidates": 100,
        "weights": ["2.0", "1.0"],
        "thread_weight": "0.0",  # no part names threads: the boost is off (test_hybrid_threads.py)
        "date_weight": "0.0",  # nor the date boost, which reads the dates from the threads
        "coverage": "0.0",  # nor can any say what share of a question a note holds
        "parts": [{"kind": "fake", "name": "a"}, {"kind": "fake", "name": "b"}],
        "k_rrf": 20,
    }
    weighted = HybridIndex(parts, method="weighted", normalise="minmax").recipe
    assert weighted.params["normalise"] == "minmax" and "k_rrf" not in weighted.params


@pytest.mark.parametrize(
    "kwargs",
    [
        {"method": "borda"},
        {"normalise": "zscore"},
        {"k_rrf": 0},
        {"weights": [1.0]},
        {"weights": [1.0, -1.0]},
        {"weights": [0.0, 0.0]},
        {"weights": [float("nan"), 1.0]},
        {"weights": [float("inf"), 1.0]},
    ],
)
def test_bad_fusion_settings_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - each case has its own message
        HybridIndex([FakePart("a", []), FakePart("b", [])], **kwargs)  # type: ignore[arg-type]


def test_a_hybrid_needs_a_part() -> None:
    with pytest.raises(ValueError, match="at least one part"):
        HybridIndex([])


# ---------------------------------------------------------------------- real parts


CONCEPTS = {"car": 0, "automobile": 0, "vehicle": 0, "tea": 1, "coffee": 1, "rain": 2, "umbrella": 2}


class ConceptEmbedder:
    """Words of one concept share a direction, so a synonym finds what BM25 cannot."""

    name = "concepts"
    version = "1"
    dimensions = 3

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), 3), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z]+", text.lower()):
                if word in CONCEPTS:
                    out[row, CONCEPTS[word]] += 1.0
        return out


@pytest.mark.parametrize("method", ["rrf", "weighted"])
def test_the_hybrid_finds_notes_that_only_one_part_finds(method: str) -> None:
    parked = record("I parked the car downstairs")
    zebra = record("A zebra crossing is outside the office", at=T0 + timedelta(seconds=1))
    other = record("Bring an umbrella tomorrow", at=T0 + timedelta(seconds=2))
    fts, vectors = FtsIndex(":memory:"), VectorIndex(":memory:", ConceptEmbedder())
    hybrid = HybridIndex([fts, vectors], method=method)  # type: ignore[arg-type]
    hybrid.index([parked, zebra, other])
    assert [h.record_id for h in fts.query("automobile zebra")] == [zebra.id]
    assert [h.record_id for h in vectors.query("automobile zebra")] == [parked.id]
    assert {h.record_id for h in hybrid.query("automobile zebra")} == {parked.id, zebra.id}
    assert hybrid.inputs().digest == fts.inputs().digest == vectors.inputs().digest
    hybrid.remove([zebra.id])
    assert [h.record_id for h in hybrid.query("automobile zebra")] == [parked.id]
    assert hybrid.inputs().count == 2


def test_fusing_by_max_keeps_each_ids_best_share_of_its_rankings_best() -> None:
    bm25 = [Hit("mem:a", 8.0), Hit("mem:b", 2.0), Hit("mem:z", -1.0)]
    cosine = [Hit("mem:b", 0.9), Hit("mem:c", 0.45), Hit("mem:a", 0.0)]
    fused = fuse([bm25, cosine], [1.0, 1.0], method="weighted", normalise="max", combine="max")
    # b: max(2/8, 0.9/0.9) = 1.0; a: 8/8 = 1.0 (its cosine 0 adds nothing); c: 0.5; z scores 0.
    assert fused == [Hit("mem:a", 1.0), Hit("mem:b", 1.0), Hit("mem:c", 0.5)]
    summed = fuse([bm25, cosine], [1.0, 1.0], method="weighted", normalise="max")
    assert summed[0] == Hit("mem:b", 1.25)
    assert fuse([[Hit("mem:a", -2.0)]], [1.0], method="weighted", combine="max") == []
