"""The coverage look: the share of a question's words a BM25 candidate holds, and how the hybrid uses it."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search.fts import FtsIndex
from agent_memory.search.fts_coverage import CONTEXT_SHARE, idf
from agent_memory.search.hybrid import COVERAGE, CoverageLookup, HybridIndex, fuse

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def note(body: str, ref: str = "notes.md#L1-L1", *, type: str = "fact") -> MemoryRecord:
    return MemoryRecord.create(
        type=type, body=body, provenance=Provenance(kind="import", ref=ref), created_at=T0, occurred_at=T0
    )


def holding(notes: list[MemoryRecord], word: str) -> int:
    return sum(word in n.body.lower().split() for n in notes)


def test_coverage_is_the_idf_weighted_share_of_the_question_words_a_note_holds() -> None:
    both = note("violin lessons every tuesday")
    rare = note("violin repair shop")
    common = note("lessons learned")
    filler = [note(f"lessons and plans {i}") for i in range(5)]
    notes = [both, rare, common, *filler]
    with FtsIndex(":memory:") as fts:
        fts.index(notes)
        shares = fts.coverage("Which violin lessons?", [both.id, rare.id, common.id])
    weights = {w: idf(holding(notes, w), len(notes)) for w in ("violin", "lessons")}
    mass = sum(weights.values())
    assert shares[both.id] == pytest.approx(1.0)
    assert shares[rare.id] == pytest.approx(weights["violin"] / mass)
    assert shares[common.id] == pytest.approx(weights["lessons"] / mass)
    assert shares[rare.id] > shares[common.id]  # the rarer word weighs more


def test_a_word_only_in_the_neighbours_context_counts_the_context_share() -> None:
    session = [
        note("Melanie: How was the pottery class?", "chat.json#c/1", type="episode"),
        note("Caroline: I loved it, I made a bowl.", "chat.json#c/2", type="episode"),
    ]
    others = [note(f"Caroline: unrelated day {i}", f"chat.json#d/{i}", type="episode") for i in range(4)]
    notes = [*session, *others]
    with FtsIndex(":memory:", context=1) as fts:
        fts.index(notes)
        shares = fts.coverage("pottery bowl", [session[1].id])
    weights = {w: idf(1, len(notes)) for w in ("pottery", "bowl")}
    expected = (weights["bowl"] + CONTEXT_SHARE * weights["pottery"]) / sum(weights.values())
    assert shares[session[1].id] == pytest.approx(expected)


def test_ids_not_held_and_questions_without_words_cover_nothing() -> None:
    held = note("violin lessons")
    with FtsIndex(":memory:") as fts:
        fts.index([held])
        assert fts.coverage("violin", ["mem:unknown"]) == {"mem:unknown": 0.0}
        assert fts.coverage("?!", [held.id]) == {held.id: 0.0}
        assert fts.coverage("violin", []) == {}


def test_coverage_leaves_its_scratch_table_empty_and_the_index_unchanged() -> None:
    notes = [note(f"violin lessons {i}") for i in range(20)] + [note("violin repair"), note("garden fence")]
    with FtsIndex(":memory:") as fts:
        fts.index(notes)
        before = fts.inputs()
        asked = [notes[0].id, notes[20].id, notes[21].id]
        first = fts.coverage("violin lessons", asked)
        again = fts.coverage("violin lessons", list(reversed(asked)))
        left = fts._conn.execute("SELECT count(*) FROM temp.candidates").fetchone()[0]
        assert fts.inputs() == before
        assert fts.query("violin", k=100) and len(fts.query("violin", k=100)) == 21
    assert left == 0
    assert first == again
    assert set(first) == set(asked)  # only the rows asked about, though twenty more hold "violin"
    assert first[notes[0].id] == pytest.approx(1.0) and first[notes[21].id] == 0.0
    assert 0.0 < first[notes[20].id] < 1.0


def test_coverage_right_after_a_query_reads_the_word_counts_of_the_index_as_it_is_now(tmp_path: Path) -> None:
    first = [note("violin lessons"), note("violin repair"), note("lessons learned")]
    path = tmp_path / "bm25.sqlite"
    with FtsIndex(path) as fts, FtsIndex(path) as other:
        fts.index(first)
        asked = [first[0].id, first[2].id]
        fts.query("violin lessons", k=10)
        once = fts.coverage("violin lessons", asked)
        assert fts.coverage("violin lessons", asked) == once  # the same question, the same index
        more = [note(f"violin concert {i}") for i in range(6)]
        fts.index(more)  # this connection writes: "violin" is common now
        fts.query("violin lessons", k=10)
        mine = fts.coverage("violin lessons", asked)
        other.index([note(f"lessons plan {i}") for i in range(12)])  # another connection writes
        fts.query("violin lessons", k=10)
        theirs = fts.coverage("violin lessons", asked)
    notes = [*first, *more]
    weights = {w: idf(holding(notes, w), len(notes)) for w in ("violin", "lessons")}
    assert mine[first[2].id] == pytest.approx(weights["lessons"] / sum(weights.values()))
    assert mine[first[2].id] > once[first[2].id]  # "lessons" got rarer relative to "violin"
    assert theirs[first[2].id] < mine[first[2].id]  # and commoner again after the other's write


def test_the_bm25_index_is_a_coverage_lookup() -> None:
    with FtsIndex(":memory:") as fts:
        assert isinstance(fts, CoverageLookup)


def _scenario() -> tuple[list[MemoryRecord], MemoryRecord, MemoryRecord, str]:
    # "one" repeats the question's rarest word; "most" holds three of its four words.
    one = note("zeppelin zeppelin zeppelin")
    most = note("we planted tomato seedlings along the garden fence")
    filler = [note(f"garden fence note {i}") for i in range(6)]
    filler += [note(f"tomato salad {i}") for i in range(3)] + [note(f"seedlings tray {i}") for i in range(3)]
    filler += [note("zeppelin museum"), note("zeppelin ride")]
    return [one, most, *filler], one, most, "zeppelin tomato seedlings garden"


def test_the_hybrid_multiplies_bm25_scores_by_coverage_to_the_exponent() -> None:
    notes, _, _, question = _scenario()
    with FtsIndex(":memory:") as fts:
        fts.index(notes)
        hybrid = HybridIndex([fts], method="weighted", normalise="minmax", thread_weight=0.0, date_weight=0.0)
        got = hybrid.query(question, k=100)
        hits = fts.query(question, k=100)
        shares = fts.coverage(question, [h.record_id for h in hits])
    expected = fuse(
        [hits],
        [1.0],
        method="weighted",
        normalise="minmax",
        scales=[{i: s**COVERAGE for i, s in shares.items()}],
    )
    assert [(h.record_id, h.score) for h in got] == [(h.record_id, pytest.approx(h.score)) for h in expected]
    assert all(h.score > 0 for h in got)


def test_coverage_lifts_a_note_holding_most_of_the_question_over_one_repeating_its_rarest_word() -> None:
    notes, one, most, question = _scenario()
    with FtsIndex(":memory:") as fts:
        fts.index(notes)
        order = [h.record_id for h in fts.query(question, k=100)]
        assert order.index(one.id) < order.index(most.id)  # BM25 alone puts the repeated word first

        def ranked(exponent: float) -> list[str]:
            hybrid = HybridIndex(
                [fts], method="weighted", normalise="minmax", coverage=exponent, thread_weight=0.0
            )
            return [h.record_id for h in hybrid.query(question, k=100)]

        assert ranked(0.0) == order
        with_look = ranked(1.0)
    assert with_look.index(most.id) < with_look.index(one.id)


def test_the_recipe_names_the_exponent_and_bad_exponents_are_refused() -> None:
    with FtsIndex(":memory:") as fts:
        assert HybridIndex([fts]).recipe.params["coverage"] == repr(COVERAGE)
        assert HybridIndex([fts], coverage=0.0).recipe.params["coverage"] == "0.0"
        for bad in (-0.1, math.inf, math.nan):
            with pytest.raises(ValueError, match="coverage"):
                HybridIndex([fts], coverage=bad)
