"""`FtsIndex` context: each note read with its neighbouring turns, found through its source anchor."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search.fts import MAX_CONTEXT, FtsIndex
from agent_memory.search.recipes import BUILTIN_RECIPES, DEFAULT_CONTEXT
from agent_memory.search.threads import place_of

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SESSION = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def turn(body: str, ref: str | None, *, at: datetime | None = SESSION, type: str = "episode") -> MemoryRecord:
    return MemoryRecord.create(
        type=type,
        body=body,
        provenance=Provenance(kind="import", ref=ref),
        created_at=T0,
        occurred_at=at,
    )


# A session as the LoCoMo importer writes it: the answer turn does not name its topic.
CHAT = [
    ("Melanie: How was the LGBTQ support group last week?", "locomo.json#conv-26/D1:1"),
    ("Caroline: It was so powerful, I cried the whole evening.", "locomo.json#conv-26/D1:2"),
    ("Melanie: I can imagine. Did you talk to anyone there?", "locomo.json#conv-26/D1:3"),
    ("Caroline: Yes, a counsellor told me about adoption agencies.", "locomo.json#conv-26/D1:4"),
]


def chat(*, at: datetime = SESSION) -> list[MemoryRecord]:
    return [turn(body, ref, at=at) for body, ref in CHAT]


# ---------------------------------------------------------------------- threads


@pytest.mark.parametrize(
    ("ref", "at", "thread", "position"),
    [
        (
            "locomo.json#conv-26/D1:3",
            SESSION,
            "locomo.json#conv-26 2023-05-08T13:56:00.000Z",
            "D000000000001:000000000003",
        ),
        ("lme.json#/12/haystack_sessions/3/5", None, "lme.json#/12/haystack_sessions/3 ", "000000000005"),
        (
            "archive/2026-11-29.md#mem-2026-11-29-003",
            None,
            "archive/2026-11-29.md# ",
            "mem-000000002026-000000000011-000000000029-000000000003",
        ),
    ],
)
def test_a_source_anchor_gives_the_thread_and_position(
    ref: str, at: datetime | None, thread: str, position: str
) -> None:
    assert place_of(turn("text", ref, at=at)) == (thread, position)


@pytest.mark.parametrize("ref", [None, "session-42", "notes.md#", "notes.md#part/"])
def test_a_note_without_an_anchored_position_has_no_thread(ref: str | None) -> None:
    assert place_of(turn("text", ref)) is None


def test_only_an_episode_joins_a_thread_sections_of_a_file_stand_alone() -> None:
    section = turn("Use ruff for formatting.", "CLAUDE.md#L3-L3", type="fact")
    other = turn("Prefer dataclasses.", "CLAUDE.md#L4-L4", type="procedure")
    assert place_of(section) is None and place_of(other) is None
    with FtsIndex(":memory:", context=2) as index:
        index.index([section, other])
        assert [h.record_id for h in index.query("ruff")] == [section.id]


def test_positions_sort_in_natural_order() -> None:
    refs = ["c#D1:10", "c#D2:1", "c#D1:3", "c#D1:2"]
    ordered = sorted(refs, key=lambda r: place_of(turn("t", r)) or ("", ""))
    assert ordered == ["c#D1:2", "c#D1:3", "c#D1:10", "c#D2:1"]


# ---------------------------------------------------------------------- the index


def test_a_turn_is_found_by_the_words_of_its_neighbours() -> None:
    with FtsIndex(":memory:") as alone, FtsIndex(":memory:", context=2) as near:
        notes = chat()
        alone.index(notes)
        near.index(notes)
        cried = notes[1].id
        assert cried not in {h.record_id for h in alone.query("support group")}
        hits = near.query("support group")
        assert hits[0].record_id == notes[0].id  # its own words weigh more than its neighbours'
        assert cried in {h.record_id for h in hits}


def test_context_stops_at_the_thread_another_session_is_not_a_neighbour() -> None:
    with FtsIndex(":memory:", context=2) as index:
        first = chat()
        later = turn(
            "Caroline: I painted a sunrise.", "locomo.json#conv-26/D2:1", at=SESSION + timedelta(days=9)
        )
        index.index([*first, later])
        assert [h.record_id for h in index.query("sunrise")] == [later.id]
        assert later.id not in {h.record_id for h in index.query("support group")}


def test_context_reaches_only_as_far_as_asked() -> None:
    with FtsIndex(":memory:", context=1) as index:
        notes = chat()
        index.index(notes)
        found = {h.record_id for h in index.query("adoption agencies")}
        assert found == {notes[3].id, notes[2].id}


def test_notes_added_one_at_a_time_update_their_neighbours() -> None:
    with FtsIndex(":memory:", context=2) as index:
        notes = chat()
        for note in reversed(notes):
            index.index([note])
        assert notes[1].id in {h.record_id for h in index.query("support group")}


def test_a_removed_neighbour_no_longer_lends_its_words(tmp_path: Path) -> None:
    path = tmp_path / "fts.sqlite"
    with FtsIndex(path, context=2) as index:
        notes = chat()
        doomed = turn("Melanie: My door code is xylophonist-quokka.", "locomo.json#conv-26/D1:5")
        index.index([*notes, doomed])
        assert len(index.query("xylophonist")) == 3  # itself and the two turns before it
        index.remove([doomed.id])
        assert index.query("xylophonist") == []
        index.purge()
        raw = b"".join(f.read_bytes() for f in (path, Path(f"{path}-wal")) if f.exists())
        assert b"xylophon" not in raw and b"quokka" not in raw
        assert index.query("adoption")[0].record_id == notes[3].id


def test_a_new_version_of_a_turn_changes_what_its_neighbours_hold() -> None:
    with FtsIndex(":memory:", context=1) as index:
        notes = chat()
        index.index(notes)
        edited = MemoryRecord.create(
            type="episode",
            body="Caroline: It was calm, we talked about marathons.",
            provenance=notes[1].provenance,
            created_at=T0,
            occurred_at=SESSION,
        )
        index.remove([notes[1].id])
        index.index([edited])
        assert notes[0].id in {h.record_id for h in index.query("marathons")}
        assert notes[0].id not in {h.record_id for h in index.query("cried")}


def test_inputs_count_records_not_windows() -> None:
    with FtsIndex(":memory:", context=2) as index:
        index.index(chat())
        assert index.inputs().count == len(CHAT)


@pytest.mark.parametrize("context", [-1, MAX_CONTEXT + 1, True, 1.5])
def test_a_context_out_of_range_is_refused(context: object) -> None:
    with pytest.raises(ValueError, match="context must be an integer"):
        FtsIndex(":memory:", context=context)  # type: ignore[arg-type]


def test_the_recipe_says_how_much_context_and_the_default_reads_two_turns() -> None:
    with FtsIndex(":memory:", context=2) as index:
        assert index.recipe.params["context"] == 2
    assert BUILTIN_RECIPES["bm25"].options["context"] == DEFAULT_CONTEXT == 2


def test_an_index_file_of_the_schema_without_context_is_emptied_on_open(tmp_path: Path) -> None:
    path = tmp_path / "fts.sqlite"
    with FtsIndex(path, context=2) as index:
        index.index(chat())
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = 'agent-memory-fts/1' WHERE key = 'schema'")
    conn.close()
    with FtsIndex(path, context=2) as index:
        assert index.inputs().count == 0
        index.index(chat())
        assert index.query("counsellor")


def test_the_built_in_bm25_recipe_opens_an_index_that_reads_context() -> None:
    from agent_memory.search.holdings import open_index

    index = open_index(BUILTIN_RECIPES["bm25"], None)
    assert isinstance(index, FtsIndex)
    index.index(chat())
    assert chat()[1].id in {h.record_id for h in index.query("support group")}
    index.close()


def test_the_index_names_the_thread_of_each_held_turn_whatever_its_context() -> None:
    from agent_memory.search.hybrid import HybridIndex, ThreadLookup

    fact = turn("Caroline likes adoption agencies", "notes.md#L1-L1", type="fact")
    for reach in (0, 2):
        index = FtsIndex(":memory:", context=reach)
        index.index([*chat(), fact])
        ids = [r.id for r in chat()]
        found = index.threads([*ids, fact.id, "no-such-id", ids[0]])
        assert found == {i: "locomo.json#conv-26 2023-05-08T13:56:00.000Z" for i in ids}
        assert index.threads([]) == {}
        assert isinstance(index, ThreadLookup)
        assert HybridIndex([index]).recipe.params["thread_weight"] == "0.3"
        index.remove([ids[0]])
        assert ids[0] not in index.threads(ids)
