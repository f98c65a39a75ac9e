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

from dataclasses import dataclass

from agent_memory.errors import RecordError
from agent_memory.log.base import LogEntry, OperationLog
from agent_memory.log.fold import LogFold
from agent_memory.records.card import Card
from agent_memory.records.record import MemoryRecord

__all__ = ["REVIEW_STATES", "VERDICTS", "ReviewBook", "ReviewState", "is_stale"]

# verdict word in an event -> (axis, value it sets; "" removes the mark on that axis)
VERDICTS = {
    "approve": ("approval", "approved"),
    "reject": ("approval", "rejected"),
    "stale": ("currency", "stale"),
    "clear": ("currency", ""),
}
REVIEW_STATES = ("rejected", "quarantined", "stale", "approved", "none")


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
    """Reads review verdicts from a log, incrementally (only entries it has not seen yet; :class:`.LogFold`).

    Args:
        log: The operation log holding ``review`` events.
    """

    def __init__(self, log: OperationLog) -> None:
        self._marks: dict[str, _Marks] = {}
        self._fold = LogFold(log, self._step, restart=self._marks.clear)

    @staticmethod
    def check_verdict(verdict: str) -> None:
        """Raise unless ``verdict`` is one of :data:`VERDICTS`.

        Raises:
            RecordError: Unknown verdict (field ``verdict``).
        """
        if verdict not in VERDICTS:
            raise RecordError(f"unknown verdict {verdict!r} (one of: {', '.join(VERDICTS)})", field="verdict")

    def state_of(self, record: MemoryRecord | Card) -> ReviewState:
        """Return the record's review state: one of :data:`REVIEW_STATES`, with its stale mark.

        ``record`` is a version or its card (recall ranks on cards): only its id and taint count.

        Precedence: ``rejected``; else ``quarantined`` when the record is tainted and not
        approved; else ``stale``; else ``approved``; else ``none`` (untainted, unreviewed).
        """
        return self.state_of_id(record.id, tainted=bool(record.taint))

    def state_of_id(self, record_id: str, *, tainted: bool) -> ReviewState:
        """Return :meth:`state_of` a record known by its id and whether it is tainted.

        For a caller that knows both without reading the record (an import's results carry
        ``quarantined``, which is the taint of the record named).
        """
        self._catch_up()
        marks = self._marks.get(record_id) or _Marks()
        if marks.approval == "rejected":
            word = "rejected"
        elif tainted and marks.approval != "approved":
            word = "quarantined"
        elif marks.stale:
            word = "stale"
        else:
            word = marks.approval or "none"
        return ReviewState(word, stale=marks.stale)

    def _catch_up(self) -> None:
        self._fold.catch_up()

    def _step(self, entry: LogEntry) -> None:
        if entry.action == "review" and entry.record_ids:
            verdict = str(entry.details.get("verdict", ""))
            if verdict in VERDICTS:
                axis, value = VERDICTS[verdict]
                marks = self._marks.setdefault(entry.record_ids[0], _Marks())
                if axis == "approval":
                    marks.approval = value
                else:
                    marks.stale = bool(value)


def is_stale(review: str) -> bool:
    """Return whether a review state carries a person's stale mark (see :class:`ReviewState`)."""
    return review.stale if isinstance(review, ReviewState) else review == "stale"
