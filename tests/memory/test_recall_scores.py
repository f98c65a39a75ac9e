"""Scores that mean something (issue 21): the current value first, every record above 0, in order.

Through the porcelain, on every store kind (BM25) and on a Home with its default recipes
(the hybrid when the model is installed, else BM25 alone).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_memory.home import Home
from agent_memory.memory import Memory
from agent_memory.records.record import State
from memory.conftest import T0, at

OLD = "The API rate limit is 100 requests per minute per token."
NEW = "The API rate limit was raised to 250 requests per minute per token."
QUESTION = "What is the API rate limit?"


def rate_limit(memory: Memory) -> tuple[str, str]:
    old = memory.remember(OLD, source="runbook", kind="state", subject="api:rate-limit", now=T0)
    new = memory.remember(NEW, source="runbook", kind="state", subject="api:rate-limit", now=at(1))
    return old.record_id, new.record_id


def check_order(memory: Memory, old: str, new: str) -> None:
    history = memory.recall(QUESTION, include_history=True, now=at(2))
    assert history.ids == (new, old)
    assert [r.record.state for r in history.records] == [State.ACTIVE, State.SUPERSEDED]
    scores = [r.score for r in history.records]
    assert all(score > 0 for score in scores) and scores == sorted(scores, reverse=True)
    [current] = memory.recall(QUESTION, now=at(2)).records
    assert current.record.id == new and current.score > 0
    assert not any("relevance 0.0000" in reason for reason in current.reasons)


def test_the_current_value_ranks_above_its_superseded_predecessor(memory: Memory) -> None:
    check_order(memory, *rate_limit(memory))


def test_the_default_recipes_rank_the_current_value_first_with_a_score_above_zero(tmp_path: Path) -> None:
    Home.init(tmp_path / "home", git=False, now=T0)
    with Memory.open(tmp_path / "home") as memory:
        check_order(memory, *rate_limit(memory))


def test_a_current_value_no_word_of_the_question_matches_is_found_through_its_predecessor(
    memory: Memory,
) -> None:
    old = memory.remember("Deploys go through Jenkins.", source="s", kind="state", subject="ci", now=T0)
    new = memory.remember("We moved to GitHub Actions.", source="s", kind="state", subject="ci", now=at(1))
    [current] = memory.recall("Jenkins", now=at(2)).records
    assert current.record.id == new.record_id
    assert current.reasons == (
        f"current value after {old.record_id}, which matched the query (relevance 1.0000)",
    )
    assert current.score == pytest.approx(memory.get(new.record_id).confidence * 1.0, rel=0.05)
