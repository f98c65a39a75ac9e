"""Promotion verbs of the porcelain: ``propose_promotion``, ``accept_promotion``, ``reject_promotion``.

A mixin of :class:`agent_memory.memory.Memory` (like :mod:`.porcelain`), delegating to
:mod:`.promotion`, which keeps the invariants: any actor may propose; only an actor with the
``promote`` grant may accept or reject, and accepting is the one path that writes
``conventions.md`` (seed 000 §17). Every method needs a Memory opened over a Home.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from agent_memory.governance import promotion

if TYPE_CHECKING:
    from agent_memory.governance.promotion import PromotionProposal
    from agent_memory.memory import Memory

__all__ = ["PromotionMethods"]


class PromotionMethods:
    """The promotion verbs of :class:`~agent_memory.memory.Memory` (seed 000 §17, §23.5)."""

    def _self(self) -> Memory:
        return self  # type: ignore[return-value]  # only ever mixed into Memory

    def propose_promotion(
        self,
        record_id: str,
        *,
        target: str = "conventions",
        rule_text: str | None = None,
        reason: str,
        now: datetime | None = None,
    ) -> PromotionProposal:
        """Write a pending proposal ``proposals/promotions/mempromo-….md``; nothing is applied.

        See :func:`agent_memory.governance.promotion.propose_promotion` for the arguments.

        Raises:
            ProposalError: No Home, or the record is not active, is withdrawn, erased,
                quarantined or rejected.
            RecordNotFound: Unknown record id.
            RecordError: Unknown target, empty reason or rule, a refused secret, naive ``now``.
        """
        return promotion.propose_promotion(
            self._self(), record_id, target=target, rule_text=rule_text, reason=reason, now=now
        )

    def accept_promotion(
        self, proposal_id: str, *, reason: str, now: datetime | None = None
    ) -> PromotionProposal:
        """Accept a pending proposal: log the decision, then append its rule to ``conventions.md``.

        See :func:`agent_memory.governance.promotion.accept_promotion`.

        Raises:
            AuthorityError: The actor holds no ``promote`` grant; nothing is written.
            ProposalError: Unknown or decided proposal, or a source no longer eligible.
            RecordNotFound: The source record is gone.
            RecordError: An empty reason or naive ``now``.
        """
        return promotion.accept_promotion(self._self(), proposal_id, reason=reason, now=now)

    def reject_promotion(
        self, proposal_id: str, *, reason: str, now: datetime | None = None
    ) -> PromotionProposal:
        """Reject a pending proposal with a reason; ``conventions.md`` is untouched.

        Raises:
            AuthorityError: The actor holds no ``promote`` grant; nothing is written.
            ProposalError: Unknown or decided proposal.
            RecordError: An empty reason or naive ``now``.
        """
        return promotion.reject_promotion(self._self(), proposal_id, reason=reason, now=now)

    def promotions(self, *, status: str | None = None) -> list[PromotionProposal]:
        """Return the Home's promotion proposals by id (only ``status`` ones when given).

        Raises:
            ProposalError: No Home, or an unreadable proposal file (named).
            RecordError: Unknown status.
        """
        return promotion.list_promotions(self._self(), status=status)
