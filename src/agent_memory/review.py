"""Review state of records, computed from attributable ``review`` events in the operation log.

Review marks are events, not fields (DESIGN.md §9): approving a quarantined record,
rejecting it and marking one ``stale`` (seed 000's human-only Status) are ``review`` log
entries naming the actor, the time and the record. A ``reviewed`` value arriving inside a
record is never read. A record's review state is:

- the verdict of its latest review event (``approved``, ``rejected``, ``stale``), where
  ``clear`` removes an earlier verdict;
- otherwise ``quarantined`` when the record carries any taint (seed 003: recallable, never
  autoloaded before review), else ``none``.
"""

from __future__ import annotations

import threading

from agent_memory.errors import RecordError
from agent_memory.log.base import OperationLog
from agent_memory.records import MemoryRecord

__all__ = ["VERDICTS", "ReviewBook"]

# verdict word in an event -> the state it leaves the record in ("" removes the mark)
VERDICTS = {"approve": "approved", "reject": "rejected", "stale": "stale", "clear": ""}


class ReviewBook:
    """Reads review verdicts from a log, incrementally (only entries it has not seen yet).

    Args:
        log: The operation log holding ``review`` events.
    """

    def __init__(self, log: OperationLog) -> None:
        self._log = log
        self._lock = threading.Lock()
        self._seen = 0
        self._verdicts: dict[str, str] = {}

    @staticmethod
    def check_verdict(verdict: str) -> None:
        """Raise unless ``verdict`` is one of :data:`VERDICTS`.

        Raises:
            RecordError: Unknown verdict (field ``verdict``).
        """
        if verdict not in VERDICTS:
            raise RecordError(f"unknown verdict {verdict!r} (one of: {', '.join(VERDICTS)})", field="verdict")

    def state_of(self, record: MemoryRecord) -> str:
        """Return ``approved``, ``rejected``, ``stale``, ``quarantined`` or ``none`` for a record."""
        self._catch_up()
        verdict = self._verdicts.get(record.id, "")
        if verdict:
            return verdict
        return "quarantined" if record.taint else "none"

    def _catch_up(self) -> None:
        with self._lock:
            head = self._log.last()
            if head is None or head.seq <= self._seen:
                return
            for entry in self._log.entries(since_seq=self._seen):
                if entry.action == "review" and entry.record_ids:
                    verdict = str(entry.details.get("verdict", ""))
                    if verdict in VERDICTS:
                        self._verdicts[entry.record_ids[0]] = VERDICTS[verdict]
                self._seen = entry.seq
