"""Records waiting for review because their subject was already disputed (DESIGN.md §9).

Kept as note files in a Home's ``proposals/pending/`` (or in memory), one per record; a later
review accepts or rejects them.
"""

from __future__ import annotations

from typing import Any

from agent_memory.records import MemoryRecord

__all__ = ["PendingRecords"]


class PendingRecords:
    """Records waiting for review because their subject was already disputed (DESIGN.md §9).

    Kept as note files in ``proposals/pending/`` of a Home (or in memory), one per record.
    """

    def __init__(self, folder: Any = None) -> None:
        from pathlib import Path

        self._folder = Path(folder) if folder is not None else None
        self._records: dict[str, MemoryRecord] = {}

    def add(self, record: MemoryRecord) -> None:
        """Keep ``record`` until it is accepted or rejected."""
        if self._folder is None:
            self._records[record.id] = record
            return
        from agent_memory.notes import dump_note
        from agent_memory.transfer import write_bytes_atomic

        self._folder.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(self._folder / f"{record.id[4:]}.md", dump_note(record))

    def list(self) -> list[MemoryRecord]:
        """Return the pending records, by id."""
        if self._folder is None:
            return [self._records[k] for k in sorted(self._records)]
        if not self._folder.exists():
            return []
        from agent_memory.notes import load_note

        return [load_note(p.read_bytes(), path=str(p)) for p in sorted(self._folder.glob("*.md"))]
