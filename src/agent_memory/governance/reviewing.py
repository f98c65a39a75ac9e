"""The review verb of :class:`~agent_memory.memory.Memory`: a person's mark on one record (DESIGN.md §9).

Review marks (``approve``, ``reject``, ``stale``, ``clear``) are attributable ``review``
events in the log, never record fields: :mod:`agent_memory.review` reads them back to decide
quarantine and down-weighting. Invariants: a mark the actor may not make writes nothing, and
neither does an ``approve`` that would lift nothing (the record is not quarantined or rejected).
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING

from agent_memory.errors import LifecycleError
from agent_memory.governance.actors import Actors, require_review

if TYPE_CHECKING:
    from agent_memory.log.base import OperationLog
    from agent_memory.records import MemoryRecord
    from agent_memory.review import ReviewBook
    from agent_memory.stores.base import RecordStore

__all__ = ["ReviewMethods"]


class ReviewMethods:
    """``Memory.review`` (seed 003 trust: quarantine lifts only by an attributable approval)."""

    if TYPE_CHECKING:
        store: RecordStore
        log: OperationLog
        actor: str
        actors: Actors
        taint: tuple[str, ...]
        _reviews: ReviewBook
        _lock: threading.RLock

        def _clock(self, now: datetime | None) -> datetime: ...

        def _writing(self) -> AbstractContextManager[None]: ...

    def review(self, record_id: str, verdict: str, reason: str = "", *, now: datetime | None = None) -> None:
        """Log a person's review of a record: ``approve``, ``reject``, ``stale`` or ``clear``.

        Review marks are attributable events, never record fields (DESIGN.md §9). Each
        changes what is exposed, so each needs a grant: ``approve``/``reject`` the ``approve``
        grant, ``stale``/``clear`` ``mark`` or ``approve``; a tainted session may make none
        (:func:`~agent_memory.governance.actors.require_review`).

        ``approve`` lifts a quarantine or a rejection; on a record that has neither (untainted,
        or already approved) it would log an event that changes nothing, so it is refused.

        Raises:
            RecordNotFound: Unknown id.
            RecordError: Unknown verdict.
            AuthorityError: The actor holds no grant for the verdict, or the session is
                tainted (``TaintedDecisionError``); nothing is written.
            LifecycleError: ``approve`` of a record that is neither quarantined nor rejected
                (field ``verdict``); nothing is written.
        """
        stamp = self._clock(now)
        self._reviews.check_verdict(verdict)
        require_review(self.actors, self.actor, verdict, record_id=record_id, taint=self.taint)
        with self._writing():
            record = self.store.get(record_id)
            if verdict == "approve":
                _check_approvable(record, self._reviews.state_of(record))
            self.log.append(
                "review",
                actor=self.actor,
                record_ids=(record_id,),
                details={"verdict": verdict, "reason": reason},
                now=stamp,
            )


def _check_approvable(record: MemoryRecord, state: str) -> None:
    if state in ("quarantined", "rejected"):
        return
    if record.taint:
        why = "it is already approved"
    else:
        why = "it is not tainted, so it was never quarantined and needs no approval"
    raise LifecycleError(
        f"nothing to approve: {why}",
        record_id=record.id,
        field="verdict",
        hint="`agent-memory review` lists the quarantined records",
    )
