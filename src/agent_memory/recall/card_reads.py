"""Where recall's cards come from: the index's, in one batch, or each read record's (issue 23).

:func:`agent_memory.recall.select.select` ranks candidates on :class:`~agent_memory.records.card.Card`
values. :func:`kept_cards` takes them from an index that keeps them (one query for every
candidate, then one per other id asked), reading a record only when the index holds no card
for it; :func:`read_card` makes the card of the version read. :class:`StaleCard` is raised
when a card differs from the version read, and the selection is then made again from records.
"""

from __future__ import annotations

from collections.abc import Callable

from agent_memory.recall.version_lookup import VersionLookup
from agent_memory.records.card import Card

__all__ = ["CardLookup", "CardsOf", "StaleCard", "kept_cards", "read_card"]

CardLookup = Callable[[str], Card | None]
CardsOf = Callable[[list[str]], dict[str, Card] | None]


class StaleCard(Exception):
    """A card an index kept differs from the version read: rank again from the records."""


def read_card(version_of: VersionLookup, record_id: str) -> Card | None:
    """The card of the version ``version_of`` reads (``None`` when it reads none)."""
    record = version_of(record_id)
    return None if record is None else Card.of(record)


def kept_cards(cards: CardsOf, version_of: VersionLookup, candidates: dict[str, float]) -> CardLookup:
    """Cards from the index: the candidates' in one batch, any other id alone, a missing one read."""
    kept: dict[str, Card] = {}
    asked: set[str] = set()

    def card_of(record_id: str) -> Card | None:
        if record_id not in asked:
            wanted = [i for i in candidates if i not in asked] if not asked else [record_id]
            asked.update(wanted)
            asked.add(record_id)
            kept.update(cards(wanted) or {})
        card = kept.get(record_id)
        return card if card is not None else read_card(version_of, record_id)

    return card_of
