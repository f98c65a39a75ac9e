"""`Card`: what recall ranks a record by, kept by an index beside its text (issue 23).

Recall scores every candidate its indexes find (about 200 at the default sizes) but returns
only those that fit its budget (about 70 of them at 2,000 tokens). Reading, parsing and
verifying a note costs far more than the index lookup that found it, so an index that holds a
record's text also holds its *card*: the few fields that decide whether recall shows it and
how it scores (state and successor, confidence, times, namespace, taint; the rules are in
:mod:`agent_memory.recall.select`). Recall ranks on the cards and reads in full, verified,
only the records it is about to return.

Invariant: a card is a pure function of one record version (:meth:`Card.of`), and its JSON
form (:meth:`Card.dumps`, :meth:`Card.loads`) gives back an equal card, so a card taken from
an index equals the card of the version it was made from, and recall detects any other
version by comparing cards (an index behind the store never changes what recall returns).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from agent_memory.records.record import MemoryRecord, State

__all__ = ["CHARS_PER_TOKEN", "Card", "approx_tokens", "cards_of_rows"]

CHARS_PER_TOKEN = 4
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def approx_tokens(record: MemoryRecord) -> int:
    """Estimate a record's tokens as in seed 001: ``max(1, len(body) // 4)``."""
    return max(1, len(record.body) // CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class Card:
    """The fields of one record version that recall filters and scores by (module docstring).

    Attribute names are those of :class:`~agent_memory.records.record.MemoryRecord`, so the
    scoring rules read a card and a record alike.

    Attributes:
        id: The record id.
        state: Its lifecycle state.
        superseded_by: The successor's id, or ``None``.
        confidence: In [0, 1].
        updated_at: Record time of this version (aware, UTC).
        effective_valid_from: Start of its valid time (aware, UTC).
        valid_to: End of its valid time, or ``None``.
        effective_namespace: Its namespace (``default`` when absent).
        taint: Its taint labels, or ``None``.
        tokens: Its estimated size (:func:`approx_tokens`).
        sides: The two ids of its transition, or ``None``.
        supersedes: The id of the record it replaced, or ``None``.
        redacted: Whether it is an erasure tombstone (never held by an index).
    """

    id: str
    state: State
    superseded_by: str | None
    confidence: float
    updated_at: datetime
    effective_valid_from: datetime
    valid_to: datetime | None
    effective_namespace: str
    taint: tuple[str, ...] | None
    tokens: int
    sides: tuple[str, ...] | None
    supersedes: str | None
    redacted: bool = False

    @classmethod
    def of(cls, record: MemoryRecord) -> Card:
        """Return the card of one record version."""
        assert record.updated_at is not None  # noqa: S101 - always set by the record
        return cls(
            record.id,
            record.state,
            record.superseded_by,
            record.confidence,
            record.updated_at,
            record.effective_valid_from,
            record.valid_to,
            record.effective_namespace,
            record.taint,
            approx_tokens(record),
            None if record.transition is None else tuple(record.transition.sides),
            record.supersedes,
            record.redacted,
        )

    def dumps(self) -> str:
        """Return the compact JSON an index stores (the id is the row's key, not repeated)."""
        return json.dumps(
            [
                self.state.value,
                self.superseded_by,
                self.confidence,
                _micros(self.updated_at),
                _micros(self.effective_valid_from),
                None if self.valid_to is None else _micros(self.valid_to),
                self.effective_namespace,
                None if self.taint is None else list(self.taint),
                self.tokens,
                None if self.sides is None else list(self.sides),
                self.supersedes,
                self.redacted,
            ],
            separators=(",", ":"),
        )

    @classmethod
    def loads(cls, record_id: str, text: str) -> Card:
        """Parse :meth:`dumps` for ``record_id``.

        Raises:
            ValueError: The text is not a card (a damaged index: the caller reads the record).
        """
        try:
            (
                state,
                successor,
                confidence,
                updated,
                valid_from,
                valid_to,
                namespace,
                taint,
                tokens,
                sides,
                supersedes,
                redacted,
            ) = json.loads(text)
            return cls(
                record_id,
                State(state),
                successor,
                float(confidence),
                _moment(updated),
                _moment(valid_from),
                None if valid_to is None else _moment(valid_to),
                str(namespace),
                None if taint is None else tuple(taint),
                int(tokens),
                None if sides is None else tuple(sides),
                supersedes,
                bool(redacted),
            )
        except (TypeError, ValueError, OverflowError) as exc:
            raise ValueError(f"not a card for {record_id}: {exc}") from exc


def cards_of_rows(rows: Iterable[tuple[object, object]]) -> dict[str, Card]:
    """Return ``{record id: card}`` from an index's ``(record id, card text)`` rows, leaving out damaged ones.

    A row whose card does not parse is left out, so recall reads that record instead.
    """
    found: dict[str, Card] = {}
    for record_id, text in rows:
        try:
            found[str(record_id)] = Card.loads(str(record_id), str(text))
        except ValueError:
            continue
    return found


def _micros(moment: datetime) -> int:
    return (moment - _EPOCH) // _MICROSECOND


def _moment(micros: int) -> datetime:
    if not isinstance(micros, int) or isinstance(micros, bool):
        raise TypeError(f"a time must be whole microseconds, got {micros!r}")
    return _EPOCH + micros * _MICROSECOND
