"""The maintenance verdicts in the log: their words, their fold and the regret rate (seed 003; issue 7).

A person accepts, declines or reverts a maintenance proposal (:mod:`agent_memory.jobs.review_flow`);
each decision is a ``review`` event whose ``verdict`` is one of :data:`ACCEPTED`,
:data:`DECLINED`, :data:`REVERTED`. This module only reads the log, so the facade's
``status`` can count them without importing the review flow that writes them.

A proposal a person refused is not filed again (:class:`Refusals`, read by
``memory.maintenance.consolidate``): a reviewer who declines a proposal, or reverts one they
accepted, has said no to that change over those records (DESIGN.md §5 "review accepts,
rejects or later reverts each"). Without it the next run files the same proposal again: a
declined one under the same id (derived from the pass, action and the digests of the records
it was made from), a reverted merge over the correction records the revert wrote (the
fresh-user trial of session 3). Refused are a proposal whose id a ``declined`` verdict names,
and one whose records are all, at their current versions, in the ``after`` digests of a
``reverted`` verdict of the same pass; so a record written again since makes the proposal new.
The log is read only from the earliest write time of a proposal's records (a verdict on those
versions cannot be older), through :func:`~agent_memory.log.base.entries_from_time`; a run that
proposes nothing reads none of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from agent_memory.log.base import LogEntry, OperationLog, entries_from_time

if TYPE_CHECKING:
    from agent_memory.jobs.pending import PendingProposal

__all__ = ["ACCEPTED", "DECLINED", "FLOW_VERDICTS", "REVERTED", "Refusals", "review_stats", "verdicts"]

ACCEPTED = "accepted"
DECLINED = "declined"
REVERTED = "reverted"
FLOW_VERDICTS = (ACCEPTED, DECLINED, REVERTED)


def verdicts(log: OperationLog) -> dict[str, list[dict[str, Any]]]:
    """Return ``{proposal id: [details of each verdict event, oldest first]}``."""
    found: dict[str, list[dict[str, Any]]] = {}
    for entry in log.entries():
        if str(entry.action) == "review" and entry.details.get("verdict") in FLOW_VERDICTS:
            found.setdefault(str(entry.details.get("proposal_id", "")), []).append(dict(entry.details))
    return found


def review_stats(log: OperationLog) -> dict[str, Any]:
    """Count maintenance verdicts in the log and compute the regret rate (seed 003; issue 7 item 5).

    Returns:
        ``{"accepted": int, "declined": int, "reverted": int, "regret_rate": float | None}``,
        counting distinct proposal ids; ``regret_rate`` = reverted ÷ accepted (in [0, 1]),
        ``None`` while nothing was accepted.

    Raises:
        LogError: The log cannot be read.
    """
    counts = {verdict: 0 for verdict in FLOW_VERDICTS}
    for events in verdicts(log).values():
        for verdict in {str(e["verdict"]) for e in events}:
            counts[verdict] += 1
    rate = counts[REVERTED] / counts[ACCEPTED] if counts[ACCEPTED] else None
    return {**counts, "regret_rate": rate}


class Refusals:
    """The declines and reverts a run must honour, read lazily from an :class:`OperationLog`.

    Args:
        log: The Home's (or Memory's) operation log.
    """

    def __init__(self, log: OperationLog) -> None:
        self._log = log
        self._from: datetime | None = None  # the log is read from this time on
        self._first_seq: int | None = None  # the first seq read
        self._declined: dict[str, int] = {}  # proposal id -> seq of the decline
        self._reverted: list[tuple[str, str, dict[str, str], int]] = []  # (pass, id, after, seq)
        self.reads = 0
        """Log entries read so far (for tests and stats)."""

    def refusal(self, pending: PendingProposal, since: datetime) -> str | None:
        """Return why ``pending`` must not be filed, or ``None`` when no person refused it.

        Args:
            pending: The proposal a run is about to file.
            since: The earliest write time (aware) of the record versions it was made from;
                verdicts before it cannot concern those versions, so the log is read from it.

        Returns:
            ``"declined by a person as <id> (seq N); no record changed since"`` or
            ``"reverted by a person (<id>, seq N); no record changed since"``, else ``None``.

        Raises:
            LogError: The log cannot be read.
        """
        self._read_from(since)
        seq = self._declined.get(pending.id)
        if seq is not None:
            return f"declined by a person as {pending.id} (seq {seq}); no record changed since"
        basis = pending.basis
        for pass_name, proposal_id, after, seq in self._reverted:
            if pass_name == pending.pass_name and basis and all(after.get(i) == d for i, d in basis.items()):
                return f"reverted by a person ({proposal_id}, seq {seq}); no record changed since"
        return None

    def _read_from(self, since: datetime) -> None:
        if self._from is not None and self._from <= since:
            return
        stop = self._first_seq
        for entry in _until(entries_from_time(self._log, since), stop):
            self.reads += 1
            self._fold(entry)
            if self._first_seq is None or entry.seq < self._first_seq:
                self._first_seq = entry.seq
        self._from = since

    def _fold(self, entry: LogEntry) -> None:
        if str(entry.action) != "review":
            return
        details: Mapping[str, Any] = entry.details
        verdict, proposal_id = details.get("verdict"), str(details.get("proposal_id", ""))
        if verdict == "declined":
            self._declined[proposal_id] = entry.seq
        elif verdict == "reverted" and isinstance(details.get("after"), Mapping):
            after = {str(k): str(v) for k, v in details["after"].items()}
            self._reverted.append((str(details.get("pass", "")), proposal_id, after, entry.seq))


def _until(entries: Iterable[LogEntry], stop: int | None) -> Iterator[LogEntry]:
    """Yield ``entries`` up to (not including) the one with seq ``stop`` (all when ``None``)."""
    for entry in entries:
        if stop is not None and entry.seq >= stop:
            return
        yield entry
