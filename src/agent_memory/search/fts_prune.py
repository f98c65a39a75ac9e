"""Which common words an "any of these words" BM25 query may leave out without changing its top ``k``.

FTS5's ``bm25()`` (ext/fts5/fts5_aux.c) gives a row, for each phrase of the query, at most
``idf × (k1 + 1)``, ``idf = log((N - n + 0.5) / (n + 0.5))`` (at least 1e-6), ``N`` rows
and ``n`` rows holding the phrase, whatever the column weights and the row's length. So a
row holding only some words scores under the sum of those words' bounds: when the
``k``-th best row among those holding another word scores at least that sum, the rows
holding only those words cannot enter the top ``k`` (issue 10; used by
:meth:`~agent_memory.search.fts.FtsIndex.query`).

Invariant: :func:`leave_out` only ever overstates a bound (``N`` rounded up, a relative
margin added), so a query it prunes ranks exactly as one that scores every row.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from agent_memory.search.fts_query import Term

__all__ = ["BM25_K1", "PRUNE_SHARE", "Bounds", "bounds", "leave_out"]

BM25_K1 = 1.2
"""FTS5's ``bm25()`` constant k1 (b = 0.75 does not enter the bound)."""
PRUNE_SHARE = 0.6
"""First guess: leave out the most common words whose bounds sum under this share of the
rarest word's bound. 0.4-0.7 measured within noise of each other on the scale corpus's
questions at 100,000 notes (issue 10); 0.8 and above guess wrong often."""
_MARGIN = 1e-9

Bounds = list[tuple[str, float]]
"""``(stem, bound of all its phrases)``, most common stem first."""


def bounds(terms: Sequence[Term], df: dict[str, int], total: int) -> Bounds:
    """Return each stem's top BM25 contribution over all its phrases, most common stem first.

    Args:
        terms: The phrases of the query (two words of one stem are two phrases).
        df: Rows holding each stem; every stem of ``terms`` must be there.
        total: Rows in the index (rounded up here by 1 % and 16 rows, so idf is overstated).
    """
    rows = total * 1.01 + 16
    out = []
    for stem in sorted({t.stem for t in terms}, key=lambda s: (-df[s], s)):
        idf = max(math.log((rows - df[stem] + 0.5) / (df[stem] + 0.5)), 1e-6)
        out.append((stem, (BM25_K1 + 1) * idf * sum(t.stem == stem for t in terms)))
    return out


def leave_out(costs: Bounds, ceiling: float) -> tuple[set[str], float]:
    """Return the most common stems whose bounds sum to at most ``ceiling``, and that sum (overstated).

    The rarest stem is always kept. Rows holding only the returned stems score under the sum.
    """
    dropped: set[str] = set()
    spent = 0.0
    for stem, cost in costs[:-1]:
        if (spent + cost) * (1 + _MARGIN) + _MARGIN > ceiling:
            break
        dropped.add(stem)
        spent += cost
    return dropped, spent * (1 + _MARGIN) + _MARGIN
