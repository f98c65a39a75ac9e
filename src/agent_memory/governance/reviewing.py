"""The review verb of :class:`~agent_memory.memory.Memory`: a person's mark on one record (DESIGN.md §9).

Review marks (``approve``, ``reject``, ``stale``, ``clear``) are attributable ``review``
events in the log, never record fields: :mod:`agent_memory.review` reads them back to decide
quarantine and down-weighting. Invariant: a mark the actor may not make writes nothing.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING

from agent_memory.governance.actors import Actors, require_review

if TYPE_CHECKING:
    from agent_memory.log.base import OperationLog
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

        Raises:
            RecordNotFound: Unknown id.
            RecordError: Unknown verdict.
            AuthorityError: The actor holds no grant for the verdict, or the session is
                tainted (``TaintedDecisionError``); nothing is written.
        """
        stamp = self._clock(now)
        self._reviews.check_verdict(verdict)
        require_review(self.actors, self.actor, verdict, record_id=record_id, taint=self.taint)
        with self._writing():
            self.store.get(record_id)
            self.log.append(
                "review",
                actor=self.actor,
                record_ids=(record_id,),
                details={"verdict": verdict, "reason": reason},
                now=stamp,
            )
