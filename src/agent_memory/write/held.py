"""Records waiting for review because their subject was already disputed (DESIGN.md §9).

Kept as note files in a Home's ``proposals/pending/`` (or in memory), one per record; a later
review accepts them (:meth:`~agent_memory.governance.reviewing.Reviews.accept_pending`
writes one through the normal write path) or declines them
(:meth:`~agent_memory.governance.reviewing.Reviews.decline_pending` drops one).

Invariant: a file is found by the id of the record it holds, never by a path built from a
caller's id, so an id with path tricks matches nothing and touches nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_memory.errors import ProposalError
from agent_memory.records.record import MemoryRecord

__all__ = ["PENDING_RECORDS_FOLDER", "PendingRecords"]

PENDING_RECORDS_FOLDER = Path("proposals") / "pending"

# One pending record and its file (None when kept in memory); named here, since the class's
# own ``list`` method shadows the builtin inside it.
_Entries = list[tuple[MemoryRecord, Path | None]]


class PendingRecords:
    """Records waiting for review because their subject was already disputed (DESIGN.md §9).

    Kept as note files in ``proposals/pending/`` of a Home (or in memory), one per record.

    Args:
        folder: The folder holding the note files; ``None`` keeps them in memory.
    """

    def __init__(self, folder: Any = None) -> None:
        self._folder = Path(folder) if folder is not None else None
        self._records: dict[str, MemoryRecord] = {}

    @classmethod
    def for_home(cls, root: Any) -> PendingRecords:
        """Return the pending records of the Home at ``root`` (its ``proposals/pending/``)."""
        return cls(Path(root) / PENDING_RECORDS_FOLDER)

    def add(self, record: MemoryRecord) -> None:
        """Keep ``record`` until it is accepted or declined."""
        if self._folder is None:
            self._records[record.id] = record
            return
        from agent_memory.records.note import dump_note
        from agent_memory.stores.file_io import write_bytes_atomic

        self._folder.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(self._folder / f"{record.id[4:]}.md", dump_note(record))

    def list(self) -> list[MemoryRecord]:
        """Return the pending records, by id.

        Raises:
            RecordError: A pending note file is malformed (naming the file and field).
        """
        return [record for record, _ in self._entries()]

    def find(self, record_id: str) -> MemoryRecord | None:
        """Return the pending record ``record_id``, or ``None`` when none waits under that id.

        Raises:
            RecordError: A pending note file is malformed (naming the file and field).
        """
        return next((record for record, _ in self._entries() if record.id == record_id), None)

    def get(self, record_id: str) -> MemoryRecord:
        """Return the pending record ``record_id``.

        Raises:
            ProposalError: No record waits under that id (naming it).
            RecordError: A pending note file is malformed (naming the file and field).
        """
        record = self.find(record_id)
        if record is None:
            raise ProposalError(
                "no pending record has this id",
                record_id=record_id,
                hint="`agent-memory review` lists the pending records",
            )
        return record

    def remove(self, record_id: str) -> None:
        """Drop the pending record ``record_id`` (its file, or its entry in memory).

        Raises:
            ProposalError: No record waits under that id; nothing is removed.
            StoreError: The file cannot be removed (naming it).
        """
        for record, path in self._entries():
            if record.id != record_id:
                continue
            if path is None:
                del self._records[record_id]
                return
            from agent_memory.errors import StoreError

            try:
                path.unlink()
            except OSError as exc:
                raise StoreError(f"cannot remove the pending record file: {exc}", path=str(path)) from exc
            return
        self.get(record_id)  # raises the "no pending record" error

    def _entries(self) -> _Entries:
        if self._folder is None:
            return [(self._records[k], None) for k in sorted(self._records)]
        if not self._folder.exists():
            return []
        from agent_memory.records.note import load_note

        return [(load_note(p.read_bytes(), path=str(p)), p) for p in sorted(self._folder.glob("*.md"))]
