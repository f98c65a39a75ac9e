"""`IndexCatalog`: the search indexes of a Home, kept in step with its store.

Indexes are a disposable cache (seed 003): each lives in its own folder under
``.cache/indexes/<name>/`` with ``recipe.json`` (how it is built) and ``inputs.json``
(count, digest of the (record id, version digest) pairs it holds, build time), and can be
deleted and rebuilt from the notes at any time.

Freshness (issue 4 item 6; DESIGN.md §9 "Freshness"): the catalog remembers a cheap
*version token* per record (for a file store, the latest version file's name, size and
change time — a ``stat``, not a read). :meth:`refresh` compares the store's tokens with the
remembered ones and re-reads only the records whose token changed, so a note added or
edited outside the library is found by its new text, and a removed or unreadable one stops
matching. Between full comparisons a cheaper signal (the store folder's change time and the
log head) lets most recalls skip the comparison entirely. Only records that parse and whose
ids verify are indexed; the others are reported by :meth:`problems`.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_memory.errors import RecordNotFound, StoreError
from agent_memory.records import MemoryRecord
from agent_memory.search.base import Embedder, Hit, SearchIndex, version_digest
from agent_memory.search.fts import FtsIndex
from agent_memory.search.vectors import VectorIndex
from agent_memory.stores.base import RecordStore
from agent_memory.wire import format_timestamp

__all__ = ["FULL_CHECK_SECONDS", "IndexCatalog", "IndexStatus"]

FULL_CHECK_SECONDS = 5.0
_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """One index as ``status`` shows it: whether its inputs match the store, with counts."""

    name: str
    kind: str
    indexed: int
    records: int
    dirty: bool

    def to_json(self) -> dict[str, Any]:
        """Return ``{"name", "kind", "indexed", "records", "dirty"}``."""
        return {
            "name": self.name,
            "kind": self.kind,
            "indexed": self.indexed,
            "records": self.records,
            "dirty": self.dirty,
        }


class IndexCatalog:
    """The indexes recall reads, and the bookkeeping that keeps them fresh.

    Args:
        store: The store the indexes derive from.
        indexes: The indexes, by name.
        folder: ``.cache/indexes`` of a Home, or ``None`` for in-memory indexes.
        signal: A cheap callable whose value changes whenever the store may have changed
            (e.g. the notes folder's change time); ``None`` means always compare tokens.
    """

    def __init__(
        self,
        store: RecordStore,
        indexes: dict[str, SearchIndex],
        *,
        folder: Path | None = None,
        signal: Callable[[], object] | None = None,
    ) -> None:
        self.store = store
        self.indexes = indexes
        self.folder = folder
        self._signal = signal
        self._lock = threading.RLock()
        self._tokens: dict[str, str] = self._load_state()
        self._digests: dict[str, str] = {}
        self._problems: dict[str, StoreError] = {}
        self._last_signal: object = None
        self._last_full = 0.0
        self._saved = False

    # ------------------------------------------------------------------ construction

    @classmethod
    def in_memory(cls, store: RecordStore, *, embedder: Embedder | None = None) -> IndexCatalog:
        """Return a catalog of in-memory indexes: BM25, plus vectors when an embedder is given."""
        indexes: dict[str, SearchIndex] = {"bm25": FtsIndex(":memory:")}
        if embedder is not None:
            indexes["vectors"] = VectorIndex(":memory:", embedder)
        return cls(store, indexes)

    @classmethod
    def for_home(
        cls, cache_dir: Path, store: RecordStore, *, embedder: Embedder | None = None
    ) -> IndexCatalog:
        """Open or create the Home's indexes in ``cache_dir/indexes/``: BM25, and vectors with an embedder."""
        folder = cache_dir / "indexes"
        (folder / "bm25").mkdir(parents=True, exist_ok=True)
        indexes: dict[str, SearchIndex] = {"bm25": FtsIndex(folder / "bm25" / "index.sqlite", name="bm25")}
        if embedder is not None:
            name = f"vectors-{embedder.name}".lower().replace("/", "-")
            (folder / name).mkdir(parents=True, exist_ok=True)
            indexes[name] = VectorIndex(folder / name / "index.sqlite", embedder, name=name)
        root = getattr(store, "root", None)
        signal = (lambda: _mtime(root)) if isinstance(root, Path) else None
        return cls(store, indexes, folder=folder, signal=signal)

    # ------------------------------------------------------------------ keeping fresh

    def refresh(self, *, force: bool = False) -> int:
        """Bring every index up to date with the store; return how many records changed.

        Cheap when nothing changed: the store's signal is compared first, and the per-record
        tokens at most every :data:`FULL_CHECK_SECONDS` unless the signal moved or ``force``.
        """
        with self._lock:
            signal = self._signal() if self._signal is not None else None
            due = time.monotonic() - self._last_full >= FULL_CHECK_SECONDS
            if not force and self._signal is not None and signal == self._last_signal and not due:
                return 0
            self._last_signal = signal
            self._last_full = time.monotonic()
            current = self._current_tokens()
            changed = [rid for rid, token in current.items() if self._tokens.get(rid) != token]
            vanished = [rid for rid in self._tokens if rid not in current]
            fresh: list[MemoryRecord] = []
            for record_id in changed:
                try:
                    fresh.append(self.store.get(record_id))
                    self._problems.pop(record_id, None)
                except RecordNotFound:
                    vanished.append(record_id)
                except StoreError as exc:
                    # An unreadable note must stop matching by its old text, and is reported.
                    self._problems[record_id] = exc
                    vanished.append(record_id)
            self._apply(fresh, vanished, current)
            if fresh or vanished or not self._saved:
                self.flush()
            return len(changed) + len(vanished)

    def written(self, records: Iterable[MemoryRecord]) -> None:
        """Index versions this process just wrote (so a recall right after finds them)."""
        with self._lock:
            batch = list(records)
            if batch:
                tokens = self._current_tokens(only=[r.id for r in batch])
                self._apply(batch, [], {**self._tokens, **tokens})

    def erased(self, record_ids: Iterable[str]) -> None:
        """Remove records from every index and purge what can be purged (erasure)."""
        with self._lock:
            ids = list(record_ids)
            self._apply([], ids, {k: v for k, v in self._tokens.items() if k not in ids})
            for index in self.indexes.values():
                purge = getattr(index, "purge", None)
                if callable(purge):
                    purge()

    def query(self, text: str, *, k: int = 32) -> list[list[Hit]]:
        """Return each index's hits for ``text`` (best first), one list per index."""
        with self._lock:
            return [index.query(text, k=k) for index in self.indexes.values()]

    def close(self) -> None:
        """Flush the bookkeeping and close every index that can be closed."""
        with self._lock:
            self.flush()
            for index in self.indexes.values():
                close = getattr(index, "close", None)
                if callable(close):
                    close()

    def readable_records(self) -> list[MemoryRecord]:
        """Return the latest version of every record that can be read, by ``(created_at, id)``.

        Unlike ``store.list()``, one unreadable note does not hide the others: it is skipped
        and reported by :meth:`problems`.
        """
        try:
            return self.store.list()
        except StoreError:
            records = []
            for record_id in sorted(self._current_tokens()):
                try:
                    records.append(self.store.get(record_id))
                except StoreError as exc:
                    self._problems[record_id] = exc
            return sorted(records, key=lambda r: (r.created_at, r.id))

    def problems(self) -> list[StoreError]:
        """Return the records that could not be read at the last refresh (not indexed)."""
        return list(self._problems.values())

    def status(self) -> list[dict[str, Any]]:
        """Return each index's :class:`IndexStatus` as JSON, after a forced freshness check."""
        with self._lock:
            current = self._current_tokens()
            out = []
            for name, index in self.indexes.items():
                held = index.inputs()
                dirty = any(self._tokens.get(r) != t for r, t in current.items()) or len(self._tokens) != len(
                    current
                )
                out.append(IndexStatus(name, index.recipe.kind, held.count, len(current), dirty).to_json())
            return out

    # ------------------------------------------------------------------ internals

    def _apply(self, fresh: list[MemoryRecord], vanished: list[str], tokens: dict[str, str]) -> None:
        for index in self.indexes.values():
            if vanished:
                index.remove(vanished)
            if fresh:
                index.index(fresh)
        for record in fresh:
            self._digests[record.id] = version_digest(record)
        self._tokens = {rid: tok for rid, tok in tokens.items() if rid not in self._problems}
        self._saved = False

    def _current_tokens(self, only: list[str] | None = None) -> dict[str, str]:
        tokens = getattr(self.store, "version_tokens", None)
        if callable(tokens):
            result: dict[str, str] = tokens(only) if only is not None else tokens()
            return result
        if only is not None:
            return {rid: version_digest(self.store.get(rid)) for rid in only}
        return {r.id: version_digest(r) for r in self.store.list()}

    def _state_path(self) -> Path | None:
        return self.folder / "state.json" if self.folder is not None else None

    def _load_state(self) -> dict[str, str]:
        path = self._state_path()
        if path is None or not path.exists():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return {str(k): str(v) for k, v in data["tokens"].items()}
        except Exception as exc:  # a derived file: any damage means "rebuild"
            _log.warning("index state %s is unreadable (%s); rebuilding the indexes", path, exc)
            return {}

    def flush(self) -> None:
        """Persist the token state, and each index's ``recipe.json`` and ``inputs.json``.

        Called after a refresh that changed anything and by :meth:`close`; a crash before
        it only costs re-reading the records written since (their tokens look changed).
        """
        path = self._state_path()
        self._saved = True
        if path is None:
            return
        temp = path.with_name(f".state.{os.getpid()}.tmp")
        temp.write_text(json.dumps({"tokens": self._tokens}, sort_keys=True), encoding="utf-8")
        os.replace(temp, path)
        for name, index in self.indexes.items():
            held = index.inputs()
            inputs = {
                "count": held.count,
                "digest": held.digest,
                "built_at": format_timestamp(held.built_at) if held.built_at else None,
            }
            folder = path.parent / name
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "recipe.json").write_text(
                json.dumps(index.recipe.to_json(), indent=2) + "\n", encoding="utf-8"
            )
            (folder / "inputs.json").write_text(json.dumps(inputs, indent=2) + "\n", encoding="utf-8")


def _mtime(path: Path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0
