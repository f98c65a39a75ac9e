"""`FtsIndex`'s pruned "any of these words" query ranks exactly as scoring every row does (issue 10).

An index of at least ``SMALL_INDEX`` notes, with a few words in most notes (the speakers'
names of a conversation) and many rare ones, is asked questions mixing both; the ranking
of every query (ids and scores, bit for bit) is compared with an index that scores every
row the query matches.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search.base import Hit
from agent_memory.search.fts import FtsIndex
from agent_memory.search.fts_query import SMALL_INDEX, Term, or_expression

T0 = datetime(2026, 1, 1, tzinfo=UTC)
COMMON = ["caroline", "melanie", "going", "really", "think"]
RARE = [f"word{n}" for n in range(400)]


class Unpruned(FtsIndex):
    """Scores every row an "any of these words" query matches (the ranking before pruning)."""

    def _match_any(self, terms: list[Term], df: dict[str, int], k: int) -> list[Hit]:
        return self._match(or_expression(terms), k)


class Counting(FtsIndex):
    """Counts the queries answered from a pruned set of rows."""

    pruned = 0

    def _match(self, expression: str, k: int, *, within: str | None = None) -> list[Hit]:
        if within is not None:
            self.pruned += 1
        return super()._match(expression, k, within=within)


def corpus(size: int, rng: random.Random) -> list[MemoryRecord]:
    records = []
    for number in range(size):
        words = [rng.choice(COMMON) for _ in range(rng.randint(0, 3))]
        words += [RARE[min(int(rng.paretovariate(0.8)) - 1, len(RARE) - 1)] for _ in range(rng.randint(2, 8))]
        rng.shuffle(words)
        records.append(
            MemoryRecord.create(
                type="fact",
                body=" ".join(words) + ".",
                provenance=Provenance(kind="import", ref=f"chat-{number}"),
                created_at=T0 + timedelta(minutes=number),
            )
        )
    return records


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Counting, Unpruned]]:
    folder: Path = tmp_path_factory.mktemp("pruning")
    records = corpus(SMALL_INDEX + 500, random.Random(7))  # noqa: S311 - a reproducible corpus
    with (
        Counting(folder / "pruned.sqlite", context=2, clock=lambda: T0) as pruned,
        Unpruned(folder / "full.sqlite", context=2, clock=lambda: T0) as full,
    ):
        pruned.index(records)
        full.index(records)
        yield pruned, full


def test_the_pruned_any_word_query_ranks_exactly_as_scoring_every_row(
    indexes: tuple[Counting, Unpruned],
) -> None:
    pruned, full = indexes
    rng = random.Random(11)  # noqa: S311 - reproducible questions
    asked = 0
    for _ in range(120):
        words = rng.sample(COMMON, rng.randint(1, 3)) + rng.sample(RARE[:200], rng.randint(1, 4))
        rng.shuffle(words)
        question = "What did " + " ".join(words) + "?"
        for k in (1, 5, 10, 32, 100):
            got = [(hit.record_id, hit.score) for hit in pruned.query(question, k=k)]
            assert got == [(hit.record_id, hit.score) for hit in full.query(question, k=k)], question
            asked += 1
    assert asked == 600
    assert pruned.pruned > 100  # the pruned path ran often enough for the comparison to mean something


def test_a_question_of_only_common_words_is_ranked_as_before(indexes: tuple[Counting, Unpruned]) -> None:
    pruned, full = indexes
    for question in ("caroline going", "melanie really think", "caroline melanie going really think"):
        assert pruned.query(question, k=20) == full.query(question, k=20)
        assert len(pruned.query(question, k=20)) == 20
