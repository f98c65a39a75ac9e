"""The hybrid's thread boost: a candidate gains a share of the best fused score of its conversation thread."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import pytest

from agent_memory.records.record import MemoryRecord
from agent_memory.search.base import Hit, IndexInputs, Recipe
from agent_memory.search.hybrid import THREAD_WEIGHT, HybridIndex, ThreadLookup, boost_threads, fuse


class Part:
    """A part with a fixed ranking; with ``threads`` it also names each note's thread."""

    def __init__(self, name: str, ranked: list[Hit]) -> None:
        self.name = name
        self.ranked = ranked

    @property
    def recipe(self) -> Recipe:
        return Recipe(kind="fake", name=self.name)

    def index(self, records: Iterable[MemoryRecord]) -> None:
        list(records)

    def remove(self, record_ids: Iterable[str]) -> None:
        list(record_ids)

    def query(self, text: str, *, k: int = 32) -> list[Hit]:
        return self.ranked[:k]

    def inputs(self) -> IndexInputs:
        return IndexInputs(count=0, digest="d")


class ThreadedPart(Part):
    """A part that knows the thread of some notes, and counts how often it is asked."""

    def __init__(self, name: str, ranked: list[Hit], places: dict[str, str]) -> None:
        super().__init__(name, ranked)
        self.places = places
        self.asked: list[list[str]] = []

    def threads(self, record_ids: Sequence[str]) -> dict[str, str]:
        self.asked.append(list(record_ids))
        return {i: self.places[i] for i in record_ids if i in self.places}


def test_each_hit_gains_the_weighted_best_score_of_its_thread() -> None:
    hits = [Hit("a", 1.0), Hit("b", 0.5), Hit("c", 0.5), Hit("d", 0.2)]
    threads = {"a": "session 1", "b": "session 1", "c": "session 2", "d": "session 2"}
    boosted = {h.record_id: h.score for h in boost_threads(hits, threads, 0.3)}
    assert boosted == {
        "a": pytest.approx(1.0 + 0.3 * 1.0),
        "b": pytest.approx(0.5 + 0.3 * 1.0),  # its session holds the best match
        "c": pytest.approx(0.5 + 0.3 * 0.5),
        "d": pytest.approx(0.2 + 0.3 * 0.5),
    }


def test_a_note_in_no_thread_is_a_thread_of_its_own() -> None:
    boosted = boost_threads([Hit("x", 0.4), Hit("y", 0.5)], {"y": "t"}, 0.5)
    assert [h.record_id for h in boosted] == ["y", "x"]
    assert [h.score for h in boosted] == pytest.approx([0.75, 0.6])


def test_the_boosted_order_is_by_score_then_id_and_weight_zero_changes_nothing() -> None:
    hits = [Hit("b", 0.5), Hit("a", 0.5), Hit("c", 0.9)]
    assert boost_threads(hits, {}, 0.0) == [Hit("c", 0.9), Hit("a", 0.5), Hit("b", 0.5)]
    assert boost_threads([], {"a": "t"}, 0.3) == []


def test_the_hybrid_lifts_a_turn_of_the_session_that_holds_the_best_match() -> None:
    # b and c tie after fusion (b first, by id); c shares a session with the best match a, b does not.
    words = Part("words", [Hit("a", 3.0), Hit("b", 2.0), Hit("c", 2.0), Hit("z", 1.0)])
    places = {"a": "s1", "c": "s1", "b": "s2"}
    threaded = ThreadedPart("threaded", [Hit("a", 3.0), Hit("c", 2.0), Hit("b", 2.0), Hit("z", 1.0)], places)
    plain = HybridIndex([words, Part("same", threaded.ranked)], method="weighted", normalise="max")
    hybrid = HybridIndex([words, threaded], method="weighted", normalise="max")
    assert [h.record_id for h in plain.query("q", k=4)] == ["a", "b", "c", "z"]  # the tie, by id
    top = hybrid.query("q", k=4)
    assert [h.record_id for h in top] == ["a", "c", "b", "z"]
    fused = {h.record_id: h.score for h in fuse([words.ranked, threaded.ranked], [1, 1], method="weighted")}
    assert top[1].score == pytest.approx(fused["c"] + THREAD_WEIGHT * fused["a"])
    assert top[2].score == pytest.approx(fused["b"] * (1 + THREAD_WEIGHT))
    assert sorted(threaded.asked[0]) == ["a", "b", "c", "z"]  # every candidate, before the cut


def test_the_boost_can_reorder_and_is_applied_before_the_cut() -> None:
    words = Part("words", [Hit("x", 1.0), Hit("b", 0.9), Hit("a", 0.8)])
    threaded = ThreadedPart("t", [Hit("a", 1.0), Hit("x", 0.9), Hit("b", 0.1)], {"a": "s", "x": "s"})
    hybrid = HybridIndex([words, threaded], method="weighted", normalise="max", thread_weight=1.0)
    # fused: x 1.9, a 1.8, b 1.0; boosted: x 3.8, a 3.7, b 2.0 (b alone doubles)
    assert [h.record_id for h in hybrid.query("q", k=2)] == ["x", "a"]
    assert [h.score for h in hybrid.query("q", k=3)] == pytest.approx([3.8, 3.7, 2.0])


def test_the_recipe_records_the_weight_only_when_a_part_names_threads() -> None:
    threaded = ThreadedPart("t", [], {})
    assert isinstance(threaded, ThreadLookup) and not isinstance(Part("p", []), ThreadLookup)
    assert HybridIndex([Part("p", []), threaded]).recipe.params["thread_weight"] == repr(THREAD_WEIGHT)
    assert HybridIndex([Part("p", []), threaded], thread_weight=0).recipe.params["thread_weight"] == "0.0"
    assert HybridIndex([Part("p", []), Part("q", [])]).recipe.params["thread_weight"] == "0.0"


def test_the_boost_is_off_without_a_thread_part_and_with_weight_zero() -> None:
    ranked = [Hit("a", 1.0), Hit("b", 0.5)]
    threaded = ThreadedPart("t", ranked, {"a": "s", "b": "s"})
    off = HybridIndex([threaded], thread_weight=0.0)
    assert off.query("q", k=2) == fuse([ranked], [1.0])
    assert threaded.asked == []


@pytest.mark.parametrize("weight", [-0.1, math.inf, math.nan])
def test_a_bad_thread_weight_is_refused(weight: float) -> None:
    with pytest.raises(ValueError, match="thread_weight"):
        HybridIndex([Part("p", [])], thread_weight=weight)
