"""One BLAS thread for a query's dense product (issue 23: hybrid recall at 100k records).

A dense question vector is scored against every held row by one matrix-vector product
(:meth:`~agent_memory.search.vectors.VectorIndex.query`), which numpy hands to OpenBLAS. OpenBLAS
splits it over every core and its threads then spin, waiting for the next call: in a hybrid
query, which asks BM25 on the other core at the same time, the two fought for the cores.
Measured at 100,000 rows × 384 on two cores (docs/benchmarks.md, Hybrid query): the product alone
took 5.8 ms on two threads (9.8 ms of CPU) against 7.8 ms on one, and a whole hybrid query
30-36 ms (60-70 ms of CPU) against 21 ms (35 ms of CPU).

:func:`one_blas_thread` limits the BLAS libraries numpy loaded to one thread for the block, through
``threadpoolctl`` (about 20 µs a block; its first use looks the libraries up once, under 1 ms), and
gives back the limits it found when the block ends, so a host application's own BLAS setting is
restored. OpenBLAS's limit is one setting for the whole process, which threadpoolctl lets one
thread at a time change: blocks therefore run one at a time (a product over every row is bound
by memory, not by the cores, so two at once would gain little), and a block entered while the
host application holds a limit of its own from another thread runs under the host's.

Invariants: the product's result is the same on one thread as on several (OpenBLAS computes
each row's dot product on one thread either way); blocks may nest and may be entered from any
thread; the limits in force before a block are in force again after it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["one_blas_thread"]

_lock = threading.RLock()
_controller: Any = None


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with every BLAS library of the process limited to one thread (module docstring).

    Raises:
        Whatever the block raises; the limits are given back all the same.
    """
    global _controller
    with _lock:
        if _controller is None:
            from threadpoolctl import ThreadpoolController

            _controller = ThreadpoolController()  # type: ignore[no-untyped-call]
        with _controller.limit(limits=1, user_api="blas"):
            yield
