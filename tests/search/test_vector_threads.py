"""`VectorIndex` thread means and question floor: scores equal a from-scratch computation after any writes."""

from __future__ import annotations

import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search.base import document_text
from agent_memory.search.embedders import HashEmbedder
from agent_memory.search.threads import place_of
from agent_memory.search.vectors import VectorIndex

T0 = datetime(2026, 1, 1, tzinfo=UTC)
WORDS = [
    "garden",
    "tomato",
    "basil",
    "harbour",
    "ferry",
    "sailing",
    "violin",
    "concert",
    "guitar",
    "tax",
    "invoice",
    "budget",
]


def turn(body: str, conversation: str, position: int, *, day: int = 0) -> MemoryRecord:
    """An imported turn: an episode anchored ``chat.json#<conversation>/<position>``."""
    return MemoryRecord.create(
        type="episode",
        body=body,
        provenance=Provenance(kind="import", ref=f"chat.json#{conversation}/{position}"),
        created_at=T0,
        occurred_at=T0 + timedelta(days=day),
    )


def fact(body: str) -> MemoryRecord:
    return MemoryRecord.create(
        type="fact",
        body=body,
        provenance=Provenance(kind="conversation", ref="notes.md#L1-L1"),
        created_at=T0,
    )


def expected(
    held: dict[str, MemoryRecord], query: str, weight: float, embedder: HashEmbedder
) -> dict[str, float]:
    """Every held record's score computed from scratch: (cos + w × cos to its thread's mean) / (1 + w)."""
    ids = sorted(held)
    vectors = embedder.embed([document_text(held[i]) for i in ids]).astype(np.float64)
    q = embedder.embed([query])[0].astype(np.float64)
    threads = [place[0] if (place := place_of(held[i])) else None for i in ids]
    out = {}
    for row, record_id in enumerate(ids):
        own = float(vectors[row] @ q)
        if threads[row] is None:
            theirs = own
        else:
            total = sum(vectors[j] for j in range(len(ids)) if threads[j] == threads[row])
            norm = float(np.linalg.norm(total))
            theirs = float(total @ q) / norm if norm > 1e-9 else 0.0
        out[record_id] = (own + weight * theirs) / (1 + weight)
    return out


def check(index: VectorIndex, held: dict[str, MemoryRecord], embedder: HashEmbedder, query: str) -> None:
    want = {i: s for i, s in expected(held, query, index.thread_weight, embedder).items() if s > 1e-6}
    got = {hit.record_id: hit.score for hit in index.query(query, k=len(held) + 1)}
    assert set(got) <= set(want)  # nothing scoring <= 0 is a hit
    assert {i for i, s in want.items() if s > 1e-4} <= set(got)  # every clearly positive score is
    for record_id, score in got.items():
        assert score == pytest.approx(want[record_id], abs=1e-4)


def test_thread_mean_scores_match_a_from_scratch_computation_through_adds_replacements_and_removes(
    tmp_path: Path,
) -> None:
    rng = random.Random(7)  # noqa: S311 - a seeded test sequence, not a secret
    embedder = HashEmbedder(64)
    index = VectorIndex(tmp_path / "v.sqlite", embedder, thread_weight=0.5)
    held: dict[str, MemoryRecord] = {}
    index.query("garden", k=1)  # load the (empty) matrix so every later write updates it in place
    for step in range(120):
        action = rng.random()
        if action < 0.55 or not held:
            words = " ".join(rng.sample(WORDS, 3))
            made = (
                fact(words)
                if rng.random() < 0.2
                else turn(words, f"c{rng.randrange(4)}", rng.randrange(20), day=rng.randrange(3))
            )
            held[made.id] = made
            index.index([made])
        elif action < 0.8:
            old = held[rng.choice(sorted(held))]
            moved = old.evolve(tags=tuple(rng.sample(WORDS, 2)), updated_at=T0 + timedelta(seconds=step))
            held[moved.id] = moved
            index.index([moved])
        else:
            gone = rng.choice(sorted(held))
            del held[gone]
            index.remove([gone])
        if step % 10 == 0:
            check(index, held, embedder, " ".join(rng.sample(WORDS, 2)))
    for query in ("garden basil", "violin concert", "tax budget invoice"):
        check(index, held, embedder, query)
        with VectorIndex(
            tmp_path / "v.sqlite", embedder, thread_weight=0.5
        ) as reopened:  # read from the file
            check(reopened, held, embedder, query)
    index.close()


def test_a_turn_is_lifted_by_what_its_conversation_is_about(tmp_path: Path) -> None:
    embedder = HashEmbedder(64)
    sailing = [
        turn("harbour ferry sailing", "a", 1),
        turn("ferry harbour", "a", 2),
        turn("okay see you", "a", 3),
    ]
    other = [turn("okay see you", "b", 1), turn("violin concert", "b", 2)]
    with (
        VectorIndex(tmp_path / "plain.sqlite", embedder) as plain,
        VectorIndex(tmp_path / "threads.sqlite", embedder, thread_weight=0.5) as threaded,
    ):
        for index in (plain, threaded):
            index.index([*sailing, *other])
        bye_a, bye_b = sailing[2].id, other[0].id
        plain_scores = {h.record_id: h.score for h in plain.query("sailing ferry okay", k=10)}
        threaded_scores = {h.record_id: h.score for h in threaded.query("sailing ferry okay", k=10)}
    assert plain_scores[bye_a] == pytest.approx(plain_scores[bye_b])
    assert threaded_scores[bye_a] > threaded_scores[bye_b]


def test_the_best_floor_finds_nothing_for_an_off_topic_question_and_weak_notes_for_an_on_topic_one(
    tmp_path: Path,
) -> None:
    embedder = HashEmbedder(64)
    notes = [fact("garden tomato basil"), fact("garden harbour")]
    with (
        VectorIndex(tmp_path / "each.sqlite", embedder, min_similarity=0.6) as each,
        VectorIndex(tmp_path / "best.sqlite", embedder, min_similarity=0.6, floor="best") as best,
    ):
        for index in (each, best):
            index.index(notes)
        assert best.query("violin concert", k=5) == []
        assert each.query("violin concert", k=5) == []
        strong = [h.record_id for h in each.query("garden tomato basil", k=5)]
        assert strong == [notes[0].id]
        found = [h.record_id for h in best.query("garden tomato basil", k=5)]
        assert found == [notes[0].id, notes[1].id]


def test_the_recipe_names_floor_and_thread_weight_only_when_they_are_not_the_defaults() -> None:
    plain = VectorIndex(":memory:", HashEmbedder())
    assert "floor" not in plain.recipe.params and "thread_weight" not in plain.recipe.params
    tuned = VectorIndex(":memory:", HashEmbedder(), floor="best", thread_weight=0.5)
    assert tuned.recipe.params["floor"] == "best"
    assert tuned.recipe.params["thread_weight"] == "0.50"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"floor": "most"}, "floor"),
        ({"thread_weight": -1.0}, "thread_weight"),
        ({"thread_weight": float("nan")}, "thread_weight"),
    ],
)
def test_bad_floor_or_thread_weight_is_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        VectorIndex(":memory:", HashEmbedder(), **options)  # type: ignore[arg-type]


def test_a_file_from_before_threads_is_emptied_only_when_opened_with_thread_weight(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    embedder = HashEmbedder(64)
    notes = [turn("garden tomato", "a", 1), turn("garden basil", "a", 2)]
    with VectorIndex(path, embedder) as index:
        index.index(notes)
    with sqlite3.connect(path) as conn:  # what the previous version wrote: entries without a thread column
        conn.execute("ALTER TABLE entries DROP COLUMN thread")
    with VectorIndex(path, embedder) as plain:
        assert plain.inputs().count == 2
        assert [h.record_id for h in plain.query("garden tomato", k=1)] == [notes[0].id]
    with VectorIndex(path, embedder, thread_weight=0.5) as threaded:
        assert threaded.inputs().count == 0  # threads unknown: the caller rebuilds
        threaded.index(notes)
        assert threaded.inputs().count == 2
    with VectorIndex(path, embedder, thread_weight=0.5) as again:
        assert again.inputs().count == 2


def test_a_file_of_another_schema_is_rebuilt_with_the_thread_column(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    embedder = HashEmbedder(64)
    with VectorIndex(path, embedder) as index:
        index.index([turn("garden tomato", "a", 1)])
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = 'agent-memory-vectors/0' WHERE key = 'schema'")
        conn.execute("ALTER TABLE entries DROP COLUMN thread")
    with VectorIndex(path, embedder, thread_weight=0.5) as reopened:
        assert reopened.inputs().count == 0
        reopened.index([turn("garden basil", "a", 2)])
        assert reopened.inputs().count == 1
