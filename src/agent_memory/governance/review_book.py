"""Review state of records, computed from attributable ``review`` events in the operation log.

Review marks are events, not fields (DESIGN.md §9): approving a quarantined record,
rejecting it and marking one ``stale`` (seed 000's human-only Status) are ``review`` log
entries naming the actor, the time and the record. A ``reviewed`` value arriving inside a
record is never read.

A record has two independent review axes, so one mark never undoes the other:

- **approval** — ``approve`` and ``reject`` (the latest of the two wins). It decides the
  quarantine gate: a tainted record stays quarantined (seed 003: recallable, marked, never
  autoloaded) until a review event approves it; a ``stale`` mark is not an approval.
- **currency** — ``stale`` marks the record as no longer a current factual basis (seed 000
  §15.2 rule 3: down-weighted like superseded); ``clear`` removes that mark.

:meth:`ReviewBook.state_of` folds both into one word, the first that applies of
``rejected``, ``quarantined``, ``stale``, ``approved``, ``none``, returned as a
:class:`ReviewState` that also carries the stale mark (a quarantined record can be stale too).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from agent_memory.errors import RecordError
from agent_memory.log.base import LogEntry, OperationLog
from agent_memory.records.record import MemoryRecord

__all__ = ["REVIEW_STATES", "VERDICTS", "ReviewBook", "ReviewState", "is_stale", "log_head", "one_pass"]

# verdict word in an event -> (axis, value it sets; "" removes the mark on that axis)
VERDICTS = {
    "approve": ("approval", "approved"),
    "reject": ("approval", "rejected"),
    "stale": ("currency", "stale"),
    "clear": ("currency", ""),
}
REVIEW_STATES = ("rejected", "quarantined", "stale", "approved", "none")
# The active pass: the log heads read in it, by ``id`` of the log (the log is kept alongside,
# so its id cannot be reused while the pass lasts).
_PASS: ContextVar[dict[int, tuple[OperationLog, LogEntry | None]] | None] = ContextVar(
    "agent_memory_review_pass", default=None
)


@contextmanager
def one_pass() -> Iterator[None]:
    """Within this block every :class:`ReviewBook` and :func:`log_head` read a log's head once.

    A recall asks for the review state of each candidate; without this, each question would
    first check the log's head (a file read for a Home, a round trip for PostgreSQL). Inside
    one pass the answers come from one consistent reading of the log, as of the first
    question. A pass opened inside another is the same pass. Only reads belong in a pass: a
    write inside it would not be seen by later questions of the same pass.
    """
    if _PASS.get() is not None:
        yield
        return
    token = _PASS.set({})
    try:
        yield
    finally:
        _PASS.reset(token)


def log_head(log: OperationLog) -> LogEntry | None:
    """Return ``log.last()``; inside :func:`one_pass`, read once per log for the whole pass.

    Raises:
        LogError: As ``log.last()`` does.
    """
    heads = _PASS.get()
    if heads is None:
        return log.last()
    if id(log) not in heads:
        heads[id(log)] = (log, log.last())
    return heads[id(log)][1]


class ReviewState(str):
    """A record's review state word (compares equal to the plain word) plus its stale mark.

    Attributes:
        stale: A person marked the record stale and has not cleared it; true whenever the
            word is ``stale``, and possibly under ``quarantined`` or ``rejected`` too.
    """

    stale: bool

    def __new__(cls, word: str, *, stale: bool = False) -> ReviewState:  # noqa: D102
        made = super().__new__(cls, word)
        made.stale = stale or word == "stale"
        return made


@dataclass(slots=True)
class _Marks:
    approval: str = ""
    stale: bool = False


class ReviewBook:
    """Reads review verdicts from a log, incrementally (only entries it has not seen yet).

    Args:
        log: The operation log holding ``review`` events.
    """

    def __init__(self, log: OperationLog) -> None:
        self._log = log
        self._lock = threading.Lock()
        self._seen = 0
        self._marks: dict[str, _Marks] = {}
        self._pass: object | None = None

    @staticmethod
    def check_verdict(verdict: str) -> None:
        """Raise unless ``verdict`` is one of :data:`VERDICTS`.

        Raises:
            RecordError: Unknown verdict (field ``verdict``).
        """
        if verdict not in VERDICTS:
            raise RecordError(f"unknown verdict {verdict!r} (one of: {', '.join(VERDICTS)})", field="verdict")

    def state_of(self, record: MemoryRecord) -> ReviewState:
        """Return the record's review state: one of :data:`REVIEW_STATES`, with its stale mark.

        Precedence: ``rejected``; else ``quarantined`` when the record is tainted and not
        approved; else ``stale``; else ``approved``; else ``none`` (untainted, unreviewed).
        """
        self._catch_up()
        marks = self._marks.get(record.id) or _Marks()
        if marks.approval == "rejected":
            word = "rejected"
        elif record.taint and marks.approval != "approved":
            word = "quarantined"
        elif marks.stale:
            word = "stale"
        else:
            word = marks.approval or "none"
        return ReviewState(word, stale=marks.stale)

    def _catch_up(self) -> None:
        current = _PASS.get()
        with self._lock:
            if current is not None and current is self._pass:
                return
            self._pass = current
            head = log_head(self._log)
            if head is None or head.seq <= self._seen:
                return
            for entry in self._log.entries(since_seq=self._seen):
                if entry.action == "review" and entry.record_ids:
                    verdict = str(entry.details.get("verdict", ""))
                    if verdict in VERDICTS:
                        axis, value = VERDICTS[verdict]
                        marks = self._marks.setdefault(entry.record_ids[0], _Marks())
                        if axis == "approval":
                            marks.approval = value
                        else:
                            marks.stale = bool(value)
                self._seen = entry.seq


def is_stale(review: str) -> bool:
    """Return whether a review state carries a person's stale mark (see :class:`ReviewState`)."""
    return review.stale if isinstance(review, ReviewState) else review == "stale"
