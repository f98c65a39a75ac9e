"""Touch counts and salience: how often recall used a record, and how much that protects it.

Each record that recall returns is touched; the touch count raises its recall score
(``1 + n/(n+5)``, seed 001 retrieval) and slows its decay (``confidence × 0.5^(age/30 days) ×
(1 + 0.25 × touches)``, seed 001 decay). The counts live in a sidecar, ``.state/salience.json``
in a Home (``{"scores": {id: {"touches": n, "last_touched": "<canonical timestamp>"}}}``,
sorted keys, as the origin writes it), replaced atomically (a uniquely named temp file, then
``os.replace``).

The counts are state, not cache: they record what recall did and cannot be rebuilt from the
notes, so they live outside the disposable ``.cache/`` (deleting it changes no recall result,
issue 19), git-ignored (they change on every recall). Losing them degrades ranking, never
memory. Hence:

- A corrupt file (bad JSON, a wrong shape, a negative or non-integer count, a bad
  timestamp) resets to zero touches with a logged warning; a sidecar that cannot be written
  is warned about. Neither ever fails a recall.
- Writes are coalesced: a touch is written at once unless the sidecar was written less than
  ``save_interval`` seconds ago; then it is written by the next touch after the interval, by
  :meth:`Salience.flush`, or when the :class:`Salience` is garbage collected or the
  interpreter exits (a ``weakref.finalize``). A crash can lose the touches of that last
  interval, and rewriting a sidecar of every touched id on each recall does not scale.
- :meth:`Salience.forget` (erasure) writes through at once and raises when it cannot.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from agent_memory.errors import StoreError
from agent_memory.records.wire import format_timestamp, parse_timestamp

__all__ = ["SALIENCE_HALF_SATURATION", "SAVE_INTERVAL_SECONDS", "Salience", "Touch", "touch_from_json"]

SALIENCE_HALF_SATURATION = 5
SAVE_INTERVAL_SECONDS = 1.0
_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Touch:
    """How often a record was recalled and when last (aware UTC)."""

    touches: int
    last_touched: datetime


class _Sidecar:
    """The counts and the file; kept apart from :class:`Salience` so a finalizer can flush it."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.scores: dict[str, Touch] = {}
        # Each entry as its JSON text: a save only sorts and joins them (json.dumps of the whole
        # mapping with sort_keys took ~30 ms per save at 4,000 ids; the bytes are the same).
        self.rendered: dict[str, str] = {}
        self.dirty = False

    def put(self, record_id: str, touch: Touch, stamp: str | None = None) -> None:
        """Set a record's touch; ``stamp`` is ``last_touched`` already formatted, if known."""
        self.scores[record_id] = touch
        when = stamp or format_timestamp(touch.last_touched)
        entry = {"last_touched": when, "touches": touch.touches}
        self.rendered[record_id] = f"{json.dumps(record_id)}: {json.dumps(entry)}"
        self.dirty = True

    def flush(self, *, strict: bool = False) -> None:
        with self.lock:
            if self.dirty:
                self.save(strict=strict)

    def save(self, *, strict: bool = False) -> None:
        """Write the file (the caller holds the lock); on failure warn, or raise when ``strict``."""
        if self.path is None:
            self.dirty = False
            return
        temp = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            entries = ", ".join(self.rendered[record_id] for record_id in sorted(self.rendered))
            temp.write_text(f'{{"scores": {{{entries}}}}}', encoding="utf-8")
            os.replace(temp, self.path)
            self.dirty = False
        except OSError as exc:
            if strict:
                raise StoreError(f"cannot rewrite the salience sidecar: {exc}", path=str(self.path)) from exc
            # Derived state: a sidecar that cannot be written costs ranking, never a recall.
            _log.warning(
                "salience sidecar %s could not be written (%s); touches kept in memory", self.path, exc
            )
        finally:
            temp.unlink(missing_ok=True)


class Salience:
    """The touch sidecar: in memory, optionally persisted to a JSON file.

    Args:
        path: The sidecar file (``.state/salience.json`` in a Home), or ``None`` to keep counts in memory.
        save_interval: Seconds within which further touches are coalesced into one write.
        clock: Monotonic seconds (injectable for tests).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        save_interval: float = SAVE_INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sidecar = _Sidecar(Path(path) if path is not None else None)
        self._interval = save_interval
        self._clock = clock
        self._saved_at: float | None = None
        for record_id, touch in self._load().items():
            self._sidecar.put(record_id, touch)
        self._sidecar.dirty = False
        if self._sidecar.path is not None:
            weakref.finalize(self, self._sidecar.flush)

    def get(self, record_id: str) -> Touch | None:
        """Return the record's touches, or ``None`` if never touched."""
        with self._sidecar.lock:
            return self._sidecar.scores.get(record_id)

    def count(self, record_id: str) -> int:
        """Return how many times the record was touched (0 if never)."""
        touch = self.get(record_id)
        return touch.touches if touch else 0

    def boost(self, record_id: str) -> float:
        """Return the recall multiplier ``1 + n/(n+5)`` in [1, 2) for ``n`` touches (seed 001)."""
        n = self.count(record_id)
        return 1.0 + n / (n + SALIENCE_HALF_SATURATION)

    def touch(self, record_ids: Iterable[str], *, now: datetime) -> None:
        """Add one touch to each id; persist now, or within ``save_interval`` seconds (see module)."""
        stamp = format_timestamp(now)
        with self._sidecar.lock:
            for record_id in record_ids:
                previous = self._sidecar.scores.get(record_id)
                self._sidecar.put(record_id, Touch((previous.touches if previous else 0) + 1, now), stamp)
            moment = self._clock()
            if self._saved_at is None or moment - self._saved_at >= self._interval:
                self._sidecar.save()
                self._saved_at = moment

    def flush(self) -> None:
        """Write touches that are not on disk yet (a no-op when nothing is pending)."""
        self._sidecar.flush()

    def forget(self, record_ids: Iterable[str]) -> None:
        """Drop the counts of these ids (used by erasure) and persist at once.

        Raises:
            StoreError: The sidecar could not be rewritten (erasure must not leave the ids behind).
        """
        with self._sidecar.lock:
            for record_id in record_ids:
                self._sidecar.scores.pop(record_id, None)
                self._sidecar.rendered.pop(record_id, None)
            self._sidecar.save(strict=True)

    def _load(self) -> dict[str, Touch]:
        path = self._sidecar.path
        if path is None or not path.exists():
            return {}
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return {str(record_id): touch_from_json(entry) for record_id, entry in raw["scores"].items()}
        except Exception as exc:  # any damage to a derived file resets it: bad JSON, shapes, timestamps
            _log.warning("salience sidecar %s is unreadable (%s); starting from zero touches", path, exc)
            return {}


def touch_from_json(entry: object) -> Touch:
    """Read one ``{"touches": n, "last_touched": ts}`` entry of the sidecar strictly (n a whole number ≥ 0).

    Raises:
        ValueError: Not an object, a bad count or timestamp (``doctor`` reports it; the sidecar resets).
        KeyError: A key is missing.
    """
    if not isinstance(entry, dict):
        raise ValueError(f"an entry must be an object, got {type(entry).__name__}")
    touches = entry["touches"]
    if isinstance(touches, bool) or not isinstance(touches, int) or touches < 0:
        raise ValueError(f"touches must be a whole number >= 0, got {touches!r}")
    return Touch(touches, parse_timestamp(entry["last_touched"], "last_touched"))
