"""`search.overlap.each`: indexes asked side by side, with the results and errors of asking in turn."""

from __future__ import annotations

import threading
import time

import pytest

from agent_memory.search import overlap
from agent_memory.search.overlap import each


def test_the_results_come_in_call_order() -> None:
    calls = [lambda n=n: (time.sleep(0.01 * (3 - n)), n)[1] for n in range(4)]
    assert each(calls) == [0, 1, 2, 3]


@pytest.mark.skipif(not overlap._several_cores(), reason="one CPU here: the calls run in turn")
def test_the_calls_run_side_by_side() -> None:
    both = threading.Barrier(2, timeout=5)  # broken (an error) unless the two wait at once
    assert each([both.wait, both.wait]) in ([0, 1], [1, 0])


def test_the_first_error_in_call_order_is_raised_once_every_call_has_ended() -> None:
    ended: list[str] = []

    def slow() -> None:
        time.sleep(0.05)
        ended.append("slow")
        raise KeyError("second")

    def fails() -> None:
        raise ValueError("first")

    with pytest.raises(ValueError, match="first"):
        each([fails, slow])
    assert ended == ["slow"]


def test_a_call_from_a_pool_thread_runs_its_calls_in_turn() -> None:
    seen: list[str] = []

    def inner() -> list[str]:
        return each([lambda: threading.current_thread().name, lambda: threading.current_thread().name])

    outer = each([lambda: "caller", inner])
    seen = outer[1]
    assert seen[0] == seen[1] != threading.current_thread().name
