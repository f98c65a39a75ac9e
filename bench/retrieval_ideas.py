"""Bench-only pieces of session 5's retrieval variants (issue 21 item 3; ``bench/retrieval_variants.py``).

Each one is an idea measured against the default hybrid, kept here so its row can be rerun:

- :class:`SubQueries`: a part asked the question and, when it names two or more people or
  things (capitalised words past the first), once per name with the others taken out; the
  rankings fused (min-max, the sub-questions × ``weight``). The multi-hop idea: "What have
  Caroline and Melanie both painted?" asks for Caroline's paintings and Melanie's.
- :class:`ContentWords`: a vector part asked only the question's content words (stopwords
  taken out), the vector side's version of weighting the rare words.
- :func:`dated_added`: the date boost that also adds the notes dated in the question's window
  as candidates when the window holds few notes (the boost alone only reorders).

None of them is product code.
"""

from __future__ import annotations

import calendar
import re
from datetime import timedelta
from typing import Any

from agent_memory.search.base import Hit, SearchIndex
from agent_memory.search.dates import boost_dates, date_window
from agent_memory.search.fts_query import STOPWORDS
from agent_memory.search.hybrid import fuse

__all__ = ["ContentWords", "SubQueries", "SubQueriesFts", "content_words", "dated_added", "sub_questions"]

_NAME = re.compile(r"\b[A-Z][a-z]+(?:'s)?\b")
_CALENDAR = frozenset(name.lower() for name in [*calendar.month_name[1:], *calendar.day_name])


def sub_questions(text: str) -> list[str]:
    """Return one question per name ``text`` names (two names or more), the others taken out; else ``[]``."""
    names: list[str] = []
    for match in _NAME.finditer(text):
        word = match.group(0).removesuffix("'s")
        if match.start() == 0 or word.lower() in STOPWORDS or word.lower() in _CALENDAR or word in names:
            continue
        names.append(word)
    if len(names) < 2:
        return []
    out = []
    for name in names:
        asked = text
        for other in names:
            if other != name:
                asked = re.sub(rf"\b{re.escape(other)}('s)?\b", "", asked)
        out.append(" ".join(re.sub(r"\b(and|or)\s+(?=\W|$)", "", asked).split()))
    return out


def content_words(text: str) -> str:
    """Return the words of ``text`` that are not stopwords (``text`` itself when none is left)."""
    kept = [w for w in re.findall(r"[\w']+", text) if w.lower() not in STOPWORDS]
    return " ".join(kept) or text


class SubQueries:
    """Bench-only: ``inner`` asked the question and each of its :func:`sub_questions`, fused."""

    def __init__(self, inner: SearchIndex, weight: float) -> None:
        self.inner, self.weight = inner, weight

    def index(self, records: list[Any]) -> None:
        """Index the records in the inner part."""
        self.inner.index(records)

    def query(self, text: str, *, k: int = 32) -> list[Hit]:
        """Return the fused rankings of the question and its sub-questions, up to ``k``."""
        first = self.inner.query(text, k=k)
        subs = [self.inner.query(s, k=k) for s in sub_questions(text)]
        if not subs:
            return first
        weights = [1.0] + [self.weight] * len(subs)
        return fuse([first, *subs], weights, method="weighted", normalise="minmax")[:k]

    def close(self) -> None:
        """Close the inner part."""
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()


class SubQueriesFts(SubQueries):
    """Bench-only: :class:`SubQueries` over the BM25 part, which still tells the coverage look its shares."""

    def coverage(self, text: str, record_ids: list[str]) -> dict[str, float]:
        """The inner BM25 part's coverage of the question (``hybrid.CoverageLookup``)."""
        shares: dict[str, float] = self.inner.coverage(text, record_ids)  # type: ignore[attr-defined]
        return shares


class ContentWords:
    """Bench-only: ``inner`` (a vector part) asked only the question's content words."""

    def __init__(self, inner: SearchIndex) -> None:
        self.inner = inner

    def index(self, records: list[Any]) -> None:
        """Index the records in the inner part."""
        self.inner.index(records)

    def query(self, text: str, *, k: int = 32) -> list[Hit]:
        """Return the inner part's hits for :func:`content_words` of the question."""
        return self.inner.query(content_words(text), k=k)


def dated_added(hits: list[Hit], history: Any, q: int, weight: float, limit: int) -> list[Hit]:
    """The date boost, with the notes dated in the window added first when it holds at most ``limit``.

    An added note enters with the weakest candidate's score, so the boost lifts it to just
    above the undated candidates it would otherwise not reach.
    """
    question = history.questions[q]
    now = question.when or max(t.when for t in history.turns) + timedelta(days=1)
    window = date_window(question.text, now)
    if window is None or not hits:
        return hits
    inside = [str(i) for i, turn in enumerate(history.turns) if window[0] <= turn.when <= window[1]]
    held = {hit.record_id for hit in hits}
    if len(inside) <= limit:
        low = min(hit.score for hit in hits)
        hits = [*hits, *(Hit(i, low) for i in inside if i not in held)]
    dates = {hit.record_id: history.turns[int(hit.record_id)].when for hit in hits}
    return boost_dates(hits, dates, window, weight)
