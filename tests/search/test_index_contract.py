"""The `SearchIndex` contract: one suite that every search index must pass (issue 4, seed 003).

The ``index`` fixture (tests/search/conftest.py) runs each test once per adapter; checks that
only hold for keyword indexes (hits are exactly the notes sharing a word with the query) ask
``adapter.keyword``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pytest
from search_kit import ids, record

from agent_memory.search.base import SearchIndex, inputs_digest, version_digest

if TYPE_CHECKING:  # conftest modules are all named conftest at runtime; the type is for readers
    from conftest import Adapter

T0 = datetime(2026, 1, 1, tzinfo=UTC)


NOTES = [
    record("The staging database runs PostgreSQL 15 on port 5433."),
    record("Alice prefers tea over coffee in the morning."),
    record("The deploy key for production lives in the hardware vault."),
    record("Weekly backups are copied to the cold storage bucket every Sunday."),
]


# ---------------------------------------------------------------------- index, query, remove


def test_an_indexed_note_is_found_first_by_its_own_words(index: SearchIndex) -> None:
    index.index(NOTES)
    assert ids(index.query("staging database port", k=4))[0] == NOTES[0].id
    assert ids(index.query("tea coffee morning", k=4))[0] == NOTES[1].id
    assert ids(index.query("deploy key hardware vault", k=4))[0] == NOTES[2].id
    assert ids(index.query("backups cold storage bucket", k=4))[0] == NOTES[3].id


def test_tags_are_searchable_like_the_body(index: SearchIndex, adapter: Adapter) -> None:
    tagged = record("Rotate the credentials quarterly.", tags=("kubernetes",))
    index.index([*NOTES, tagged])
    found = ids(index.query("kubernetes", k=5))
    assert found[0] == tagged.id
    if adapter.keyword:
        assert found == [tagged.id]


def test_an_empty_index_finds_nothing_and_holds_nothing(index: SearchIndex) -> None:
    assert index.query("anything at all") == []
    inputs = index.inputs()
    assert (inputs.count, inputs.digest) == (0, inputs_digest([]))


@pytest.mark.parametrize("text", ["", " ", "\t\n  ", "?!", "...", "()", "—"])
def test_empty_blank_or_punctuation_only_text_finds_nothing(index: SearchIndex, text: str) -> None:
    index.index(NOTES)
    assert index.query(text) == []


def test_reindexing_an_id_replaces_its_old_text(index: SearchIndex, adapter: Adapter) -> None:
    old = record("The deploy key lives in the zeppelin hangar.")
    other = record("The vault is sealed on weekends.")
    index.index([old, other])
    assert ids(index.query("zeppelin hangar", k=2))[0] == old.id
    # An erasure tombstone is a new version of the same id whose body is "[redacted]".
    index.index([old.tombstone("asked to forget", now=T0 + timedelta(days=1))])
    assert index.inputs().count == 2
    assert ids(index.query("redacted", k=2))[0] == old.id
    if adapter.keyword:
        assert index.query("zeppelin hangar", k=2) == []
        assert ids(index.query("redacted", k=2)) == [old.id]


def test_a_new_version_is_found_by_its_new_words_and_not_by_lost_ones(
    index: SearchIndex, adapter: Adapter
) -> None:
    first = record("Note about the hangar.", tags=("zeppelin",))
    index.index([first, *NOTES])
    assert ids(index.query("zeppelin", k=5))[0] == first.id
    index.index([first.evolve(tags=("airship",))])
    assert ids(index.query("airship", k=5))[0] == first.id
    if adapter.keyword:
        assert first.id not in ids(index.query("zeppelin", k=5))


def test_the_last_version_of_an_id_in_one_call_wins(index: SearchIndex) -> None:
    first = record("Versions in one batch.")
    second = first.evolve(tags=("latest",))
    index.index([first, second])
    assert index.inputs().digest == inputs_digest([(first.id, version_digest(second))])


def test_removed_ids_never_come_back(index: SearchIndex) -> None:
    index.index(NOTES)
    index.remove([NOTES[0].id, "mem:" + "0" * 32])
    queries = ["staging database PostgreSQL port", "staging", "the", "database 5433"]
    for query in queries:
        assert NOTES[0].id not in ids(index.query(query, k=10))
    index.index([record("Another note about the staging cluster.")])
    for query in queries:
        assert NOTES[0].id not in ids(index.query(query, k=10))
    assert index.inputs().count == 4


def test_removing_unknown_or_no_ids_changes_nothing(index: SearchIndex) -> None:
    index.index(NOTES)
    before = index.inputs()
    index.remove([])
    index.remove(["mem:" + "f" * 32])
    assert (index.inputs().count, index.inputs().digest) == (before.count, before.digest)


# ---------------------------------------------------------------------- k and ordering


def test_k_limits_the_hits_and_hits_are_best_first_with_ties_by_id(index: SearchIndex) -> None:
    notes = [record("apple " * (1 + n % 5) + f"orchard row {n}") for n in range(20)]
    index.index(notes)
    everything = index.query("apple", k=100)
    assert len(everything) == 20
    assert everything == sorted(everything, key=lambda h: (-h.score, h.record_id))
    assert index.query("apple", k=5) == everything[:5]
    assert index.query("apple", k=1) == everything[:1]
    assert index.query("apple", k=0) == []


def test_equal_scores_are_ordered_by_record_id(index: SearchIndex) -> None:
    twins = [record("identical twin text", at=T0 + timedelta(seconds=n)) for n in range(6)]
    index.index(twins)
    hits = index.query("identical twin text", k=10)
    assert ids(hits) == sorted(t.id for t in twins)
    assert len({hit.score for hit in hits}) == 1
    # A cut through the tie keeps the smallest ids, whatever order the index found them in.
    assert ids(index.query("identical twin text", k=2)) == sorted(t.id for t in twins)[:2]


# ---------------------------------------------------------------------- inputs


def test_inputs_change_with_every_change(index: SearchIndex) -> None:
    seen = {index.inputs().digest}
    index.index(NOTES[:2])
    assert index.inputs().count == 2
    seen.add(index.inputs().digest)
    index.index([NOTES[0].evolve(tags=("changed",))])
    assert index.inputs().count == 2
    seen.add(index.inputs().digest)
    index.remove([NOTES[1].id])
    assert index.inputs().count == 1
    seen.add(index.inputs().digest)
    assert len(seen) == 4
    assert index.inputs().built_at is not None


def test_inputs_are_the_same_for_the_same_contents_built_in_another_order(
    index: SearchIndex, make_index: Callable[[], SearchIndex]
) -> None:
    extra = record("Removed again before the comparison.")
    index.index(NOTES)
    other = make_index()
    other.index([extra, *reversed(NOTES[2:])])
    other.index(reversed(NOTES[:2]))
    other.remove([extra.id])
    assert (index.inputs().count, index.inputs().digest) == (other.inputs().count, other.inputs().digest)
    expected = inputs_digest((r.id, version_digest(r)) for r in NOTES)
    assert index.inputs().digest == expected


# ---------------------------------------------------------------------- literal search

LONG = " ".join(f"word{n}" for n in range(3000))
# (query, the text of the note that contains it literally); None: nothing to find.
NASTY: list[tuple[str, str | None]] = [
    ('"quoted phrase"', 'he said "quoted phrase" twice'),
    ('"unbalanced quote', 'an "unbalanced quote here'),
    ("unbalanced quote\"'", "unbalanced quote marks"),
    ("it's O'Brien's", "it's O'Brien's turn"),
    ("AND", "rock AND roll"),
    ("OR", "either OR neither"),
    ("NOT", "NOT for sale"),
    ("NEAR", "NEAR the end"),
    ("NOT x", "NOT x means nothing"),
    ("a OR", "pick a OR b"),
    ("x AND", "x AND y together"),
    ("AND OR NOT", "AND OR NOT operators"),
    ("NEAR(alpha beta)", "NEAR(alpha beta) grouping"),
    ("NEAR(alpha beta, 2)", "alpha beta distance"),
    ("(parenthesised", "(parenthesised aside"),
    ("closing)", "closing) paren"),
    ("body:secret", "body:secret column filter"),
    ("{body tags}:leak", "leak through braces"),
    ("^caret", "^caret start anchor"),
    ("star*", "star* wildcard"),
    ("*wild", "*wild card"),
    ("-minus", "-minus sign"),
    ("e-mail", "send an e-mail today"),
    ("foo-bar-baz", "foo-bar-baz name"),
    ("std::vector", "std::vector of ints"),
    ("C++", "written in C++ mostly"),
    ("C#", "C# and dotnet"),
    ("node.js", "runs on node.js 20"),
    ("/usr/local/bin", "installed in /usr/local/bin"),
    ("C:\\Users\\ana", "path C:\\Users\\ana here"),
    ("a+b=c", "a+b=c equation"),
    ("50%", "50% off"),
    ("$HOME/.config", "$HOME/.config folder"),
    ("#hashtag @mention", "#hashtag @mention post"),
    ("2026-11-29", "due on 2026-11-29 at noon"),
    ("12:30", "meeting at 12:30"),
    ("v1.2.3", "released v1.2.3"),
    ("snake_case", "snake_case names"),
    ("{braces} [brackets] <angle>", "{braces} [brackets] <angle> all"),
    ("x|y", "x|y pipe"),
    ("ünïcödé", "ünïcödé text"),
    ("🧠", "brain 🧠 emoji"),
    ("👍🏽", "thumbs 👍🏽 up"),
    ("שלום עולם", "ברכה: שלום עולם"),
    ("مرحبا بالعالم", "قال مرحبا بالعالم"),
    ("nul\x00byte", "nul\x00byte inside"),
    ("tab\tand\nnewline", "tab\tand\nnewline"),
    ("to be or not to be", "to be or not to be"),
    ("the", "the only stopword"),
    (LONG, LONG),
    ("z" * 5000, "z" * 5000),
    ("東京", "東京に行きました"),
    ('"', None),
    ("*", None),
    ("::", None),
    ("--", None),
    ('"" () {} [] ^ * : -', None),
    ("\ud800 lone surrogate", "lone surrogate here"),
]


def test_the_nasty_query_table_is_large_enough() -> None:
    assert len(NASTY) >= 40


def test_every_nasty_query_runs_and_finds_the_note_that_contains_it(
    index: SearchIndex, adapter: Adapter
) -> None:
    notes = {text: record(f"entry {n}: {text}") for n, (_, text) in enumerate(NASTY) if text is not None}
    index.index([*notes.values(), *NOTES])
    for query, text in NASTY:
        hits = index.query(query, k=len(notes) + len(NOTES))
        assert hits == sorted(hits, key=lambda h: (-h.score, h.record_id)), query
        if not adapter.keyword:
            continue
        if text is None:
            assert hits == [], repr(query)
        else:
            assert notes[text].id in ids(hits), repr(query)
