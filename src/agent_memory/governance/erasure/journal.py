"""The erasure journal: what an erasure needs to finish after a crash (issue 20 item 2).

Before its first tombstone, ``erase`` saves an :class:`ErasurePlan` to
``.cache/erase-journal/<erasure id>.json`` (mode 0600, written whole: temp file, fsync,
rename) and logs an ``erase-intent`` event naming the ids and the erasure id (content-free,
like every log entry). The plan holds the erased texts (the needles the sweep scans for),
because once a record is tombstoned its text is gone from the store, and a sweep resumed
without it could neither clean nor check the archive, inbox, exports and views. The journal
is removed as soon as the receipt is logged; the final scan of the Home skips it (it is the
erasure's own working copy, gone when the erasure ends).

Invariant: a journal exists exactly while its erasure has an intent and no receipt; the next
open (or ``erase`` asked again) finishes it (:meth:`~.erase.Erasure.finish_erasures`).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_memory.errors import RecordError, StoreError
from agent_memory.records.wire import format_timestamp, parse_timestamp
from agent_memory.stores.file_io import write_bytes_atomic

__all__ = ["ERASE_INTENT", "JOURNAL_FOLDER", "ErasurePlan"]

ERASE_INTENT = "erase-intent"
"""The log action written before an erasure's first tombstone."""
JOURNAL_FOLDER = "erase-journal"
"""The folder of ``.cache/`` holding the plans of erasures in progress."""


@dataclass(frozen=True, slots=True)
class ErasurePlan:
    """Everything an erasure decided before it changed anything.

    Attributes:
        erasure_id: ``memerase-YYYY-MM-DD-NNN``.
        scope: The ids to erase (sorted; cascaded dependents included).
        needles: The erased texts, as UTF-8 bytes (journal only; never logged).
        anchors: ``{archive file: {item ids}}`` the erased records point at.
        reason: The reason (stored in each tombstone).
        authority: Who or what authorized it.
        rewrite_git: Whether git history is rewritten.
        decided_at: The erasure's clock.
    """

    erasure_id: str
    scope: tuple[str, ...]
    needles: tuple[bytes, ...]
    anchors: dict[str, set[str]]
    reason: str
    authority: str
    rewrite_git: bool
    decided_at: datetime

    def intent_details(self) -> dict[str, Any]:
        """Return the content-free details of the ``erase-intent`` log event."""
        return {
            "erasure_id": self.erasure_id,
            "rewrite_git": self.rewrite_git,
            "decided_at": format_timestamp(self.decided_at),
        }

    def save(self, folder: Path) -> Path:
        """Write the plan to ``folder/<erasure id>.json`` durably (0600); return the path.

        Raises:
            StoreError: The file could not be written (nothing was erased).
        """
        data = json.dumps(
            {
                "erasure_id": self.erasure_id,
                "scope": list(self.scope),
                "needles": [base64.b64encode(n).decode("ascii") for n in self.needles],
                "anchors": {name: sorted(items) for name, items in sorted(self.anchors.items())},
                "reason": self.reason,
                "authority": self.authority,
                "rewrite_git": self.rewrite_git,
                "decided_at": format_timestamp(self.decided_at),
            },
            sort_keys=True,
        ).encode("utf-8")
        path = folder / f"{self.erasure_id}.json"
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_bytes_atomic(path, data, mode=0o600)
        except OSError as exc:
            raise StoreError(
                f"cannot write the erasure journal: {exc.strerror or exc}", path=str(path)
            ) from None
        return path

    @classmethod
    def load(cls, path: Path) -> ErasurePlan:
        """Read a plan :meth:`save` wrote.

        Raises:
            StoreError: The file cannot be read or is not a plan.
        """
        try:
            raw = json.loads(path.read_bytes())
            return cls(
                erasure_id=str(raw["erasure_id"]),
                scope=tuple(str(i) for i in raw["scope"]),
                needles=tuple(base64.b64decode(n) for n in raw["needles"]),
                anchors={str(k): {str(i) for i in v} for k, v in raw["anchors"].items()},
                reason=str(raw["reason"]),
                authority=str(raw["authority"]),
                rewrite_git=bool(raw["rewrite_git"]),
                decided_at=parse_timestamp(str(raw["decided_at"]), field="decided_at"),
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecordError) as exc:
            raise StoreError(f"unreadable erasure journal: {exc}", path=str(path)) from None
