"""A Home's note store that signs what a test puts, as every writer of a Home does (issue 20).

A Home signs every version it stores (what it writes and what it imports), and its verified
read path refuses an unsigned one. Tests that write notes "as another process would" put them
through this wrapper, so the Home reads them as its own writers' records.
"""

from __future__ import annotations

from typing import Any

from agent_memory.home import Home
from agent_memory.records.record import MemoryRecord
from agent_memory.records.signing import sign_record


class SigningStore:
    """Delegate to ``store``; :meth:`put` signs an unsigned version with ``keys`` first."""

    def __init__(self, store: Any, keys: Any) -> None:
        self._store, self._keys = store, keys

    def put(self, record: MemoryRecord) -> int:
        """Put ``record``, signed by the Home's key unless it carries a signature."""
        return int(self._store.put(record if record.signature else sign_record(record, self._keys)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def signing_store(home: Home) -> Any:
    """Return ``home``'s note store, signing every unsigned version a test puts."""
    return SigningStore(home.store(), home.identity())
