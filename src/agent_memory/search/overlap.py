"""Asking several indexes at once: BM25 and vectors overlapped (issue 23).

A hybrid recall asks BM25 (SQLite FTS5) and the vector index (the question's embedding,
then a matrix product) for their candidates. Both spend most of their time where Python
releases the GIL (SQLite, ONNX Runtime, numpy), so on a machine with more than one core
the two can run side by side: :func:`each` runs the first call in the caller's thread and
the others on a small shared pool of threads, and returns their results in order.

Invariants: the results are exactly those of calling each one in turn; every call has
finished when :func:`each` returns or raises (no index is left mid-query); the first
exception in call order is raised. A call made from a pool thread (a hybrid inside an index
the catalog already handed to the pool) runs its calls in turn, so the pool never waits on
itself.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TypeVar

__all__ = ["each"]

T = TypeVar("T")

_WORKERS = 4
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_here = threading.local()


def each(calls: Sequence[Callable[[], T]]) -> list[T]:
    """Return ``[call() for call in calls]``, running the calls side by side where that can help.

    In turn when there is one call, one CPU, or when called from a pool thread.

    Raises:
        BaseException: The first exception a call raised, in call order, once all have ended.
    """
    if len(calls) < 2 or getattr(_here, "pooled", False) or not _several_cores():
        return [call() for call in calls]
    futures: list[Future[T]] = [_shared_pool().submit(_pooled, call) for call in calls[1:]]
    first: Future[T] = Future()
    try:
        first.set_result(calls[0]())
    except BaseException as exc:
        first.set_exception(exc)
    wait(futures)
    return [future.result() for future in [first, *futures]]


def _several_cores() -> bool:
    return (os.cpu_count() or 1) > 1


def _pooled(call: Callable[[], T]) -> T:
    _here.pooled = True
    return call()


def _forget_pool() -> None:
    global _pool
    _pool = None


os.register_at_fork(after_in_child=_forget_pool)


def _shared_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="agent-memory-index")
        return _pool
