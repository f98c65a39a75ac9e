"""Touch counts and salience: how often recall used a record, and how much that protects it.

Each record that recall returns is touched; the touch count raises its recall score
(``1 + n/(n+5)``, seed 001 retrieval) and slows its decay (``confidence × 0.5^(age/30 days) ×
(1 + 0.25 × touches)``, seed 001 decay). The counts live in a sidecar, ``.cache/salience.json``
(``{"scores": {id: {"touches": n, "last_touched": "<canonical timestamp>"}}}``), written
atomically; it is derived state: losing it degrades ranking, never memory. A corrupt file
(bad JSON, a wrong shape, a negative or non-integer count, a bad timestamp) resets to zero
touches with a logged warning, and a sidecar that cannot be written is warned about; neither
ever fails a recall. Only :meth:`Salience.forget` (erasure) raises when it cannot persist.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from agent_memory.errors import StoreError
from agent_memory.wire import format_timestamp, parse_timestamp

__all__ = ["SALIENCE_HALF_SATURATION", "Salience", "Touch"]

SALIENCE_HALF_SATURATION = 5
_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Touch:
    """How often a record was recalled and when last (aware UTC)."""

    touches: int
    last_touched: datetime


class Salience:
    """The touch sidecar: in memory, optionally persisted to a JSON file.

    Args:
        path: The sidecar file (``.cache/salience.json``), or ``None`` to keep counts in memory.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self._path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        self._scores: dict[str, Touch] = self._load()

    def get(self, record_id: str) -> Touch | None:
        """Return the record's touches, or ``None`` if never touched."""
        with self._lock:
            return self._scores.get(record_id)

    def count(self, record_id: str) -> int:
        """Return how many times the record was touched (0 if never)."""
        touch = self.get(record_id)
        return touch.touches if touch else 0

    def boost(self, record_id: str) -> float:
        """Return the recall multiplier ``1 + n/(n+5)`` in [1, 2) for ``n`` touches (seed 001)."""
        n = self.count(record_id)
        return 1.0 + n / (n + SALIENCE_HALF_SATURATION)

    def touch(self, record_ids: Iterable[str], *, now: datetime) -> None:
        """Add one touch to each id and persist the sidecar (atomic replace)."""
        with self._lock:
            for record_id in record_ids:
                previous = self._scores.get(record_id)
                self._scores[record_id] = Touch((previous.touches if previous else 0) + 1, now)
            self._save()

    def forget(self, record_ids: Iterable[str]) -> None:
        """Drop the counts of these ids (used by erasure) and persist.

        Raises:
            StoreError: The sidecar could not be rewritten (erasure must not leave the ids behind).
        """
        with self._lock:
            for record_id in record_ids:
                self._scores.pop(record_id, None)
            self._save(strict=True)

    def _load(self) -> dict[str, Touch]:
        if self._path is None or not self._path.exists():
            return {}
        try:
            raw = json.loads(self._path.read_text(encoding="utf-8"))
            return {str(record_id): _touch_from_json(entry) for record_id, entry in raw["scores"].items()}
        except Exception as exc:  # any damage to a derived file resets it: bad JSON, shapes, timestamps
            _log.warning(
                "salience sidecar %s is unreadable (%s); starting from zero touches", self._path, exc
            )
            return {}

    def _save(self, *, strict: bool = False) -> None:
        if self._path is None:
            return
        data = {
            "scores": {
                record_id: {"touches": t.touches, "last_touched": format_timestamp(t.last_touched)}
                for record_id, t in sorted(self._scores.items())
            }
        }
        temp = self._path.with_name(f".{self._path.name}.{uuid.uuid4().hex}.tmp")
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            temp.write_text(json.dumps(data, sort_keys=True), encoding="utf-8")
            os.replace(temp, self._path)
        except OSError as exc:
            if strict:
                raise StoreError(f"cannot rewrite the salience sidecar: {exc}", path=str(self._path)) from exc
            # Derived state: a sidecar that cannot be written costs ranking, never a recall.
            _log.warning(
                "salience sidecar %s could not be written (%s); touches kept in memory", self._path, exc
            )
        finally:
            temp.unlink(missing_ok=True)


def _touch_from_json(entry: object) -> Touch:
    """Read one ``{"touches": n, "last_touched": ts}`` entry strictly (n a whole number ≥ 0)."""
    if not isinstance(entry, dict):
        raise ValueError(f"an entry must be an object, got {type(entry).__name__}")
    touches = entry["touches"]
    if isinstance(touches, bool) or not isinstance(touches, int) or touches < 0:
        raise ValueError(f"touches must be a whole number >= 0, got {touches!r}")
    return Touch(touches, parse_timestamp(entry["last_touched"], "last_touched"))
