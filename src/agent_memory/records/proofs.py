"""A signature check remembered for the copies of one cached version (issue 23: recall at scale).

Every reader takes a record only once its signature verifies (:mod:`~agent_memory.stores.verified`),
and recall reads the same few hundred versions again and again: verifying each one every time
(canonical JSON of the version, then Ed25519) was nine tenths of a recall over 1,000 notes.
A store's parse cache (:class:`~agent_memory.stores.base.RecordCache`) already knows when the
stored bytes are the ones it parsed before; this module lets a check made on one copy of those
bytes stand for every later copy of the same entry, and for nothing else:

- A :class:`Proof` belongs to one cache entry (one parse of one stored version) and holds
  that entry's private record.
- The cache registers each copy it hands out with the entry's proof (:meth:`Proof.register`).
  The registry maps the copy *object* to its proof and keeps the copy alive while registered,
  so an id is never taken for another object's.
- :func:`~agent_memory.records.signing.verify_record` asks :func:`proof_of` first. It answers
  only for a registered object whose ``slots`` and ``extra`` (the only fields a caller can change in
  place) still equal the entry's; once one copy has verified, the others are not checked again.
  Any other record (parsed anew, built, signed, changed by ``replace``) has no proof and is
  verified in full.

The registry is bounded (:data:`KEPT` copies, the least recently registered go first: a copy
is normally checked right after it is read) and :func:`forget` empties it, as erasure empties
the parse caches, so no erased content stays in memory.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from agent_memory.records.record import MemoryRecord

__all__ = ["KEPT", "Proof", "forget", "proof_of"]

KEPT = 1024
"""Copies registered at once; a recall reads about a hundred."""

_COPIES: OrderedDict[int, tuple[MemoryRecord, Proof]] = OrderedDict()
_LOCK = threading.Lock()


class Proof:
    """Whether one cached version's signature has verified (see the module docstring).

    Attributes:
        record: The cache entry's private record (never handed out).
        verified: ``True`` once a copy of it verified.
    """

    __slots__ = ("record", "verified")

    def __init__(self, record: MemoryRecord) -> None:
        self.record = record
        self.verified = False

    def register(self, copy: MemoryRecord) -> None:
        """Let ``copy`` (a copy of :attr:`record` just handed out) share this proof."""
        with _LOCK:
            _COPIES[id(copy)] = (copy, self)
            _COPIES.move_to_end(id(copy))
            while len(_COPIES) > KEPT:
                _COPIES.popitem(last=False)


def proof_of(record: MemoryRecord) -> Proof | None:
    """Return the proof ``record`` shares, or ``None`` when it has none or was changed since."""
    with _LOCK:
        entry = _COPIES.get(id(record))
    if entry is None or entry[0] is not record:
        return None
    proof = entry[1]
    if record.slots != proof.record.slots or record.extra != proof.record.extra:
        return None
    return proof


def forget() -> None:
    """Drop every registered copy (erasure: the parse caches are emptied too)."""
    with _LOCK:
        _COPIES.clear()
