"""Mean vectors of conversation threads, kept beside a vector index's matrix (issue 10).

A turn of a conversation often says little on its own ("Yes, that one!"), while the session
it belongs to is plainly about something. :class:`ThreadMeans` keeps, for every thread of
:mod:`.threads` (for the importers, one session), the sum of its notes' unit vectors and
that sum normalised: the direction of the whole thread. :class:`~.vectors.VectorIndex` then
scores a note by its own cosine and, with a weight, the cosine of its thread's mean
(``docs/benchmarks.md``, Retrieval quality: LongMemEval_S session recall_all@5 +0.02).

Rows are the vector matrix's rows: the index tells this object about every row it sets,
clears or moves, and the object keeps ``row → thread`` and the sums in step, touching only
the threads a change names (a write costs O(dimensions) per row, never a pass over the
matrix).

Invariant: for every thread with at least one row, ``means[slot]`` is the normalised sum of
the vectors of exactly the rows whose slot it is (up to float64 rounding of the sums); a row
in no thread has slot −1 and is scored as a thread of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from agent_memory.search.base import Vectors

__all__ = ["ThreadMeans"]

_CHUNK = 8192
"""Rows summed at a time by :meth:`ThreadMeans.load` (a float64 copy of 8,192 rows of 384: 25 MB)."""


class ThreadMeans:
    """Per-thread vector sums and normalised means for the rows of one matrix.

    Args:
        dimensions: The vectors' length.
    """

    def __init__(self, dimensions: int) -> None:
        self._dimensions = dimensions
        self._slots: dict[str, int] = {}
        self._sums = np.zeros((16, dimensions), dtype=np.float64)
        self._means = np.zeros((16, dimensions), dtype=np.float32)
        self._slot_of: npt.NDArray[np.int64] = np.full(16, -1, dtype=np.int64)

    def clear(self) -> None:
        """Forget every row and thread."""
        self._slots = {}
        self._sums = np.zeros((16, self._dimensions), dtype=np.float64)
        self._means = np.zeros((16, self._dimensions), dtype=np.float32)
        self._slot_of = np.full(16, -1, dtype=np.int64)

    def load(self, threads: list[str | None], matrix: Vectors) -> None:
        """Set rows ``0 … len(threads) − 1`` at once: row ``i`` holds ``matrix[i]`` in ``threads[i]``."""
        self.clear()
        count = len(threads)
        self._grow_rows(count)
        for row, thread in enumerate(threads):
            self._slot_of[row] = -1 if thread is None else self._slot(thread)
        slots = self._slot_of[:count]
        inside = slots >= 0
        for start in range(0, count, _CHUNK):  # a float64 copy of a chunk, never of the matrix
            end = min(start + _CHUNK, count)
            part = inside[start:end]
            np.add.at(self._sums, slots[start:end][part], matrix[start:end][part].astype(np.float64))
        self._refresh(np.unique(slots[inside]))

    def assign(self, row: int, thread: str | None, vector: Vectors, old: Vectors | None) -> None:
        """Row ``row`` now holds ``vector`` in ``thread``; ``old`` is what it held (``None``: a new row)."""
        self._grow_rows(row + 1)
        touched = []
        previous = int(self._slot_of[row])
        if old is not None and previous >= 0:
            self._sums[previous] -= old
            touched.append(previous)
        slot = -1 if thread is None else self._slot(thread)
        self._slot_of[row] = slot
        if slot >= 0:
            self._sums[slot] += vector
            touched.append(slot)
        self._refresh(np.asarray(touched, dtype=np.int64))

    def release(self, row: int, vector: Vectors, last: int) -> None:
        """Row ``row`` (holding ``vector``) is removed and the matrix's row ``last`` moves into it."""
        slot = int(self._slot_of[row])
        if slot >= 0:
            self._sums[slot] -= vector
            self._refresh(np.asarray([slot], dtype=np.int64))
        self._slot_of[row] = self._slot_of[last]
        self._slot_of[last] = -1

    def mix(self, scores: Vectors, query: Vectors, weight: float) -> Vectors:
        """Return ``(cosine + weight × thread-mean cosine) / (1 + weight)`` for each row of ``scores``.

        A row in no thread counts as a thread of its own (its mean is its vector), so its
        score stays its cosine.
        """
        count = len(scores)
        slots = self._slot_of[:count]
        if not (slots >= 0).any():
            return scores
        # einsum's own loop, not BLAS: so small a product split across OpenBLAS threads cost
        # milliseconds on a loaded machine (as in VectorIndex._scores).
        of_threads = np.einsum("ij,j->i", self._means[: len(self._slots)], query)
        theirs = np.where(slots >= 0, of_threads[np.maximum(slots, 0)], scores)
        return np.asarray((scores + weight * theirs) / (1.0 + weight), dtype=np.float32)

    # ------------------------------------------------------------------ internals

    def _slot(self, thread: str) -> int:
        slot = self._slots.get(thread)
        if slot is None:
            slot = self._slots[thread] = len(self._slots)
            if slot == len(self._sums):
                self._sums = np.concatenate([self._sums, np.zeros_like(self._sums)])
                self._means = np.concatenate([self._means, np.zeros_like(self._means)])
        return slot

    def _grow_rows(self, count: int) -> None:
        if count > len(self._slot_of):
            grown = np.full(max(count, 2 * len(self._slot_of)), -1, dtype=np.int64)
            grown[: len(self._slot_of)] = self._slot_of
            self._slot_of = grown

    def _refresh(self, slots: npt.NDArray[np.int64]) -> None:
        if not len(slots):
            return
        sums = self._sums[slots]
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        self._means[slots] = np.where(norms > 1e-9, sums / np.maximum(norms, 1e-9), 0.0).astype(np.float32)
