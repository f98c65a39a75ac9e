"""The maintenance verdicts in the log: their words, their fold and the regret rate (seed 003; issue 7).

A person accepts, declines or reverts a maintenance proposal (:mod:`agent_memory.jobs.review_flow`);
each decision is a ``review`` event whose ``verdict`` is one of :data:`ACCEPTED`,
:data:`DECLINED`, :data:`REVERTED`. This module only reads the log, so the facade's
``status`` can count them without importing the review flow that writes them.
"""

from __future__ import annotations

from typing import Any

from agent_memory.log.base import OperationLog

__all__ = ["ACCEPTED", "DECLINED", "FLOW_VERDICTS", "REVERTED", "review_stats", "verdicts"]

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
