"""One BLAS thread for a query's dense product (search/blas.py, issue 23)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController

from agent_memory.search.blas import one_blas_thread
from agent_memory.search.embedders import normalise_rows
from agent_memory.search.vectors import VectorIndex


def blas_threads() -> list[int]:
    """Return the thread count of every BLAS library numpy loaded."""
    return [info["num_threads"] for info in ThreadpoolController().info() if info["user_api"] == "blas"]


@pytest.fixture
def two_threads():
    """Skip unless BLAS runs on several threads here (the machines here have two cores)."""
    counts = blas_threads()
    if not counts or min(counts) < 2:
        pytest.skip(f"BLAS runs on {counts or 'no'} threads here: there is nothing to limit")
    return min(counts)


def test_the_block_runs_on_one_thread_and_gives_the_limits_back(two_threads):
    with one_blas_thread():
        assert set(blas_threads()) == {1}
    assert set(blas_threads()) == {two_threads}


def test_nested_and_raising_blocks_give_the_limits_back(two_threads):
    def nested_then_failing() -> None:
        with one_blas_thread():
            with one_blas_thread():
                assert set(blas_threads()) == {1}
            assert set(blas_threads()) == {1}  # the outer block is still open
            raise RuntimeError("the block failed")

    with pytest.raises(RuntimeError, match="the block failed"):
        nested_then_failing()
    assert set(blas_threads()) == {two_threads}


def test_blocks_entered_from_other_threads_limit_the_whole_process(two_threads):
    # The hybrid query scans its vectors on a pool thread; the main thread entered a block
    # first (threadpoolctl lets one thread at a time set OpenBLAS's limit).
    with one_blas_thread():
        pass
    inside, seen_from_main = threading.Event(), threading.Event()
    seen: list[list[int]] = []

    def block() -> None:
        with one_blas_thread():
            seen.append(blas_threads())
            inside.set()
            seen_from_main.wait(timeout=10)

    threads = [threading.Thread(target=block) for _ in range(3)]
    for thread in threads:
        thread.start()
    assert inside.wait(timeout=10)
    from_main = blas_threads()
    seen_from_main.set()
    for thread in threads:
        thread.join(timeout=10)
    assert set(from_main) == {1}
    assert len(seen) == 3 and all(set(counts) == {1} for counts in seen)
    assert set(blas_threads()) == {two_threads}


def test_a_dense_query_scores_alike_on_one_thread_and_on_two(tmp_path, two_threads):
    # A neural model's question is dense: its product runs inside one_blas_thread, and every
    # row's cosine is the one the whole product on two threads gives, bit for bit.
    rng = np.random.default_rng(7)
    matrix = np.asfortranarray(normalise_rows(rng.standard_normal((3000, 64)).astype(np.float32)))
    query = normalise_rows(rng.standard_normal((1, 64)).astype(np.float32))[0]
    index = VectorIndex.__new__(VectorIndex)
    index._ids, index._dimensions = [f"id-{i}" for i in range(len(matrix))], 64
    scores = index._scores(matrix, query)
    assert set(blas_threads()) == {two_threads}  # given back after the product
    np.testing.assert_array_equal(scores, matrix @ query)
