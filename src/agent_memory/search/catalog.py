"""`IndexCatalog`: the search indexes of a Home, built from its recipes and kept in step with its store.

Indexes are a disposable cache (seed 003, issue 4 items 6-7). Each recipe
(:mod:`.recipes`) has its own folder ``.cache/indexes/<name>/`` with ``recipe.json`` (how it
is built) and ``inputs.json`` (count, digest of the (record id, version digest) pairs it
holds, build time). Several indexes live side by side; recall reads the *active* ones.
A hybrid recipe holds no data: it fuses the indexes of its parts, which other recipes share.

- **Rebuilds.** An index whose ``recipe.json`` differs from its configured recipe is emptied
  and rebuilt from the store; so is one whose contents disagree with the ledger
  (:mod:`.ledger`) after every record has been read again.
- **Freshness** (DESIGN.md §9): :meth:`IndexCatalog.refresh` compares the store's cheap
  version tokens with the ledger and reads only the records whose token changed, so a note
  added or edited outside the library is found by its new text, and a removed, erased or
  unreadable one stops matching. A cheaper signal (the notes folder's and the log's change
  times) lets most calls skip even that comparison for :data:`FULL_CHECK_SECONDS`. Only
  records that parse and verify are indexed; the others are reported by :meth:`problems`.
- **Choice.** With no recipes configured a Home reads ``hybrid`` (BM25 + MiniLM) when the
  ``embeddings`` extra is installed, else ``bm25``; a configured recipe this machine cannot
  open (extra missing, API key variable unset) is left out, and :meth:`describe` says why.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agent_memory.errors import AgentMemoryError, ConfigError, RecordNotFound, StoreError
from agent_memory.records import MemoryRecord
from agent_memory.search.base import Embedder, Hit, SearchIndex, inputs_digest, version_digest
from agent_memory.search.hybrid import CANDIDATES, fuse
from agent_memory.search.ledger import Held, Ledger, empty_folder, read_json, write_json
from agent_memory.search.recipes import (
    BUILTIN_RECIPES,
    DEFAULT_WHY,
    RecipeSpec,
    SearchSettings,
    fuse_parts,
    open_leaf,
    unavailable,
)
from agent_memory.stores.base import RecordStore
from agent_memory.wire import format_timestamp

__all__ = ["FULL_CHECK_SECONDS", "IndexCatalog", "Progress"]

FULL_CHECK_SECONDS = 5.0
Progress = Callable[[int, int], None]
"""Called with (records read, records to read) while an index catches up."""
_CHUNK = 256
_log = logging.getLogger(__name__)


class _Leaf:
    """An index that holds data, its recipe (``None`` when given ready-made) and what it holds."""

    def __init__(self, name: str, spec: RecipeSpec | None, index: SearchIndex, folder: Path | None) -> None:
        self.name, self.spec, self.index, self.folder = name, spec, index, folder
        self.held: Held = {}
        self.suspect = False  # contents disagreed with the ledger: check again after a full read

    def changes(self, current: Mapping[str, str]) -> tuple[list[str], list[str]]:
        """Return (ids to read again, ids no longer in the store)."""
        held = self.held
        changed = [rid for rid, token in current.items() if rid not in held or held[rid][0] != token]
        return changed, [rid for rid in held if rid not in current]

    def digest(self) -> str:
        """The inputs digest this index should report, from the ledger."""
        return inputs_digest((rid, version) for rid, (_, version) in self.held.items() if version is not None)


class IndexCatalog:
    """The indexes recall reads, and the bookkeeping that keeps them fresh.

    Prefer :meth:`for_home` and :meth:`in_memory`. Thread-safe (one re-entrant lock).

    Args:
        store: The store the indexes derive from.
        indexes: Ready-made indexes, by name; all of them active (recipes add more).
        folder: ``.cache/indexes`` of a Home, or ``None`` for in-memory indexes.
        signal: A cheap callable whose value changes whenever the store may have changed;
            ``None`` means compare every token on every refresh.
        clock: Monotonic seconds, for :data:`FULL_CHECK_SECONDS` (injectable for tests).
    """

    def __init__(
        self,
        store: RecordStore,
        indexes: Mapping[str, SearchIndex] | None = None,
        *,
        folder: Path | None = None,
        signal: Callable[[], object] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.folder = folder
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
        self.why = "indexes given by the caller"
        self.unavailable: dict[str, str] = {}
        self._signal = signal
        self._clock = clock
        self._lock = threading.RLock()
        self._ledger = Ledger(folder / "state.sqlite" if folder is not None else None)
        self._leaves: dict[str, _Leaf] = {}
        self._specs: dict[str, RecipeSpec | None] = {}
        self._views: dict[str, SearchIndex] = {}
        self._active: tuple[str, ...] = ()
        self._problems: dict[str, StoreError] = {}
        self._last_signal: object = None
        self._last_full = -math.inf
        self._catch_up_due = True
        for name, index in (indexes or {}).items():
            self._adopt(_Leaf(name, None, index, folder / name if folder is not None else None))
            self._specs[name], self._views[name] = None, index
        self._active = tuple(self._views)

    # ------------------------------------------------------------------ construction

    @classmethod
    def in_memory(
        cls, store: RecordStore, *, embedder: Embedder | None = None, search: SearchSettings | None = None
    ) -> IndexCatalog:
        """Return in-memory indexes: BM25 (plus vectors of ``embedder``), or the recipes of ``search``."""
        if search is not None:
            catalog = cls(store)
            catalog.choose(search)
            return catalog
        from agent_memory.search.fts import FtsIndex
        from agent_memory.search.vectors import VectorIndex

        indexes: dict[str, SearchIndex] = {"bm25": FtsIndex(":memory:")}
        if embedder is not None:
            indexes["vectors"] = VectorIndex(":memory:", embedder)
        return cls(store, indexes)

    @classmethod
    def for_home(
        cls,
        cache_dir: Path,
        store: RecordStore,
        *,
        search: SearchSettings | None = None,
        embedder: Embedder | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> IndexCatalog:
        """Open or create a Home's indexes in ``cache_dir/indexes/``, as its ``[search]`` settings say.

        Args:
            cache_dir: The Home's ``.cache`` folder (the Home is its parent).
            store: The Home's store.
            search: The ``[search]`` settings; ``None`` for the default choice.
            embedder: Instead of recipes, BM25 beside vectors of this embedder (not fused).
            clock: Monotonic seconds (see :class:`IndexCatalog`).

        Raises:
            ConfigError: Two recipes of one name differ.
        """
        folder = cache_dir / "indexes"
        root = getattr(store, "root", None)
        log_dir = cache_dir.parent / "log"
        signal = (lambda: (_mtime(root), _newest(log_dir))) if isinstance(root, Path) else None
        if embedder is None:
            catalog = cls(store, folder=folder, signal=signal, clock=clock)
            catalog.choose(search or SearchSettings())
            return catalog
        from agent_memory.search.fts import FtsIndex
        from agent_memory.search.vectors import VectorIndex

        name = f"vectors-{embedder.name}".lower().replace("/", "-")
        for sub in ("bm25", name):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        indexes: dict[str, SearchIndex] = {
            "bm25": FtsIndex(folder / "bm25" / "index.sqlite", name="bm25"),
            name: VectorIndex(folder / name / "index.sqlite", embedder, name=name),
        }
        return cls(store, indexes, folder=folder, signal=signal, clock=clock)

    def choose(self, search: SearchSettings) -> None:
        """Open the recipes ``search`` makes active (or the default), leaving out those it cannot open here.

        Sets :attr:`why` and :attr:`unavailable`; when nothing is left, falls back to ``bm25``.

        Raises:
            ConfigError: Two recipes of one name differ.
        """
        with self._lock:
            if search.recipes is None:
                missing = unavailable(BUILTIN_RECIPES["hybrid"])
                wanted, self.why = ["hybrid" if missing is None else "bm25"], DEFAULT_WHY[missing is None]
            else:
                wanted, self.why = list(search.recipes), "memory.toml [search] recipes"
            chosen = []
            for name in wanted:
                spec = search.recipe(name)
                reason = unavailable(spec)
                if reason is None:
                    self.add_recipe(spec)
                    chosen.append(name)
                elif search.recipes is not None:
                    self.unavailable[name] = reason
            if not chosen:
                self.add_recipe(BUILTIN_RECIPES["bm25"])
                chosen = ["bm25"]
                if search.recipes is not None:
                    self.why += "; none could be opened here, so bm25 alone"
            self._active = tuple(chosen)

    def add_recipe(self, spec: RecipeSpec) -> None:
        """Open the index of ``spec`` beside the others (not active); its parts are shared by name.

        A new or rebuilt index is filled by the next :meth:`refresh`.

        Raises:
            ConfigError: Another open recipe has the name of one of its parts with other options.
            ImportError, EmbeddingError: Its embedder cannot be made (see :func:`.unavailable`).
        """
        with self._lock:
            leaves = [self._open_leaf(part) for part in spec.leaves()]
            self._specs[spec.name] = spec
            self._views[spec.name] = self._view(spec, leaves)
            if self.folder is not None and spec.kind == "hybrid":
                (self.folder / spec.name).mkdir(exist_ok=True)
                write_json(self.folder / spec.name / "recipe.json", self._views[spec.name].recipe.to_json())
            self._catch_up_due = True

    @property
    def active(self) -> tuple[str, ...]:
        """Names of the indexes :meth:`query` reads, in order."""
        return self._active

    @property
    def indexes(self) -> dict[str, SearchIndex]:
        """The active indexes, by name."""
        return {name: self._views[name] for name in self._active}

    def activate(self, names: Sequence[str], why: str) -> None:
        """Make ``names`` (open indexes) the ones :meth:`query` reads, for the reason ``why``.

        Raises:
            ConfigError: A name is not open.
        """
        with self._lock:
            self._active = self._check_open(names)
            self.why = why

    @contextmanager
    def using(self, names: Sequence[str]) -> Iterator[None]:
        """Read ``names`` (open indexes) instead of the active ones inside the ``with`` block.

        Raises:
            ConfigError: A name is not open.
        """
        with self._lock:
            before, self._active = self._active, self._check_open(names)
            try:
                yield
            finally:
                self._active = before

    # ------------------------------------------------------------------ keeping fresh

    def refresh(self, *, force: bool = False, progress: Progress | None = None) -> int:
        """Bring every open index up to date with the store; return how many records changed.

        Cheap when nothing changed: the signal is compared first, and the per-record tokens
        at most every :data:`FULL_CHECK_SECONDS` unless the signal moved, an index is new, or
        ``force``. A record whose index update fails (an embedding server down) is retried
        by the next refresh.
        """
        with self._lock:
            signal = self._signal() if self._signal is not None else None
            quiet = signal == self._last_signal and self._clock() - self._last_full < FULL_CHECK_SECONDS
            if not (force or self._catch_up_due or self._signal is None or not quiet):
                return 0
            self._last_signal, self._last_full, self._catch_up_due = signal, self._clock(), False
            return self._catch_up(self._current_tokens(), progress)

    def rebuild(self, names: Iterable[str] | None = None, *, progress: Progress | None = None) -> int:
        """Empty the indexes of ``names`` (default: the active ones) and fill them from the store.

        Returns:
            How many records were read.
        """
        with self._lock:
            for name in self._check_open(list(names) if names is not None else self._active):
                for leaf in self._leaves_of(name):
                    self._wipe(leaf)
            return self._catch_up(self._current_tokens(), progress)

    def written(self, records: Iterable[MemoryRecord]) -> None:
        """Index versions this process just wrote (so a recall right after finds them)."""
        with self._lock:
            batch = {record.id: record for record in records}
            if batch:
                tokens = self._current_tokens(only=list(batch))
                self._apply(list(self._leaves.values()), batch, tokens, set(batch) - set(tokens))

    def erased(self, record_ids: Iterable[str]) -> None:
        """Remove records from every index and purge what can be purged (erasure)."""
        with self._lock:
            ids = list(record_ids)
            tokens = self._current_tokens(only=ids)
            for leaf in self._leaves.values():
                leaf.index.remove(ids)
                update = {rid: (tokens[rid], None) for rid in ids if rid in tokens}
                leaf.held.update(update)
                for rid in set(ids) - set(tokens):
                    leaf.held.pop(rid, None)
                self._ledger.update(leaf.name, update, set(ids) - set(tokens))
                purge = getattr(leaf.index, "purge", None)
                if callable(purge):
                    purge()

    def query(self, text: str, *, k: int = 32, recipes: Sequence[str] | None = None) -> list[list[Hit]]:
        """Return each active index's hits for ``text`` (best first), one list per index.

        An index that fails (an embedding server down) does not fail the query: a hybrid
        fuses the parts that answered, any other index gives ``[]``, and :meth:`describe`
        reports the failure.

        Args:
            text: Any user text (searched literally).
            k: Hits per index.
            recipes: Read these open indexes instead of the active ones.

        Raises:
            ConfigError: A name in ``recipes`` is not open.
        """
        with self._lock:
            names = self._check_open(recipes) if recipes is not None else self._active
            return [self._query_one(name, text, k) for name in names]

    def _query_one(self, name: str, text: str, k: int) -> list[Hit]:
        try:
            return self._views[name].query(text, k=k)
        except AgentMemoryError as exc:
            _log.warning("index %s failed to answer (%s); using what still works", name, exc)
            self.unavailable[name] = f"the last query failed: {exc}"
        spec = self._specs.get(name)
        if spec is None or spec.kind != "hybrid" or k <= 0:
            return []
        rankings = []
        for part in spec.parts:
            try:
                rankings.append(self._leaves[part.name].index.query(text, k=max(k, CANDIDATES)))
            except AgentMemoryError:
                rankings.append([])
        options = spec.options
        fused = fuse(
            rankings,
            options["weights"],
            method=options["fusion"],
            k_rrf=options.get("k_rrf", 60),
            normalise=options.get("normalise", "max"),
        )
        return fused[:k]

    # ------------------------------------------------------------------ reporting

    def status(self) -> list[dict[str, Any]]:
        """Return every open index as ``status`` shows it, comparing tokens now (nothing is refreshed).

        Each entry: ``name``, ``kind``, ``active``, ``indexed`` (records it holds), ``records``
        (readable records in the store), ``stale`` (records added, changed or removed since
        it was brought up to date) and ``dirty`` (stale, or its contents disagree with the ledger).
        """
        with self._lock:
            current = self._current_tokens()
            out = []
            for name, view in self._views.items():
                leaves = self._leaves_of(name)
                stale: set[str] = set()
                unread: set[str] = set()
                off = False
                for leaf in leaves:
                    changed, vanished = leaf.changes(current)
                    stale.update(changed, vanished)
                    unread.update(r for r, (t, v) in leaf.held.items() if v is None and current.get(r) == t)
                    off = off or leaf.digest() != leaf.index.inputs().digest
                out.append(
                    {
                        "name": name,
                        "kind": view.recipe.kind,
                        "active": name in self._active,
                        "indexed": view.inputs().count,
                        "records": len(current) - len(unread),
                        "stale": len(stale),
                        "dirty": bool(stale) or off,
                    }
                )
            return out

    def describe(self) -> dict[str, Any]:
        """Return ``{"recipes": [active names], "why": reason, "unavailable": {name: reason}}``."""
        return {"recipes": list(self._active), "why": self.why, "unavailable": dict(self.unavailable)}

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
        """Return the records that could not be read (not indexed), as last seen."""
        return list(self._problems.values())

    def flush(self) -> None:
        """Write each index folder's ``recipe.json`` and ``inputs.json`` (the ledger is always current)."""
        with self._lock:
            if self.folder is None:
                return
            every = {**{leaf.name: leaf.index for leaf in self._leaves.values()}, **self._views}
            for name, view in every.items():
                held = view.inputs()
                folder = self.folder / name
                folder.mkdir(parents=True, exist_ok=True)
                write_json(folder / "recipe.json", view.recipe.to_json())
                built = format_timestamp(held.built_at) if held.built_at else None
                write_json(
                    folder / "inputs.json", {"count": held.count, "digest": held.digest, "built_at": built}
                )

    def close(self) -> None:
        """Write the folder files and close every index and the ledger."""
        with self._lock:
            self.flush()
            for leaf in self._leaves.values():
                _close(leaf.index)
            self._ledger.close()

    # ------------------------------------------------------------------ internals

    def _check_open(self, names: Sequence[str]) -> tuple[str, ...]:
        closed = [name for name in names if name not in self._views]
        if closed or not names:
            raise ConfigError(f"no open index named {closed or 'at all'}", field="search.recipes")
        return tuple(names)

    def _leaves_of(self, name: str) -> list[_Leaf]:
        spec = self._specs[name]
        return [self._leaves[p.name] for p in spec.leaves()] if spec is not None else [self._leaves[name]]

    def _view(self, spec: RecipeSpec, leaves: list[_Leaf]) -> SearchIndex:
        return fuse_parts(spec, [leaf.index for leaf in leaves]) if spec.kind == "hybrid" else leaves[0].index

    def _open_leaf(self, spec: RecipeSpec) -> _Leaf:
        existing = self._leaves.get(spec.name)
        if existing is not None:
            if existing.spec != spec:
                raise ConfigError(
                    f"two recipes named {spec.name!r} have different options",
                    field=f"search.recipe.{spec.name}",
                )
            return existing
        folder = self.folder / spec.name if self.folder is not None else None
        if folder is not None:
            folder.mkdir(exist_ok=True)
        leaf = _Leaf(spec.name, spec, open_leaf(spec, folder), folder)
        if folder is not None and read_json(folder / "recipe.json") != leaf.index.recipe.to_json():
            if (folder / "recipe.json").exists():
                _log.warning("the recipe of index %s changed: rebuilding it", spec.name)
            self._leaves[spec.name] = leaf
            self._wipe(leaf)
        else:
            self._adopt(leaf)
        return leaf

    def _adopt(self, leaf: _Leaf) -> None:
        """Load what the ledger says ``leaf`` holds; if its contents disagree, read everything again."""
        self._leaves[leaf.name] = leaf
        leaf.held = self._ledger.load(leaf.name)
        if leaf.digest() != leaf.index.inputs().digest:
            leaf.held, leaf.suspect = {}, True
            self._ledger.forget(leaf.name)

    def _wipe(self, leaf: _Leaf) -> None:
        """Empty ``leaf`` (delete its files and reopen it, or remove every id it holds)."""
        self._ledger.forget(leaf.name)
        if leaf.spec is not None and leaf.folder is not None:
            _close(leaf.index)
            empty_folder(leaf.folder)
            leaf.index = open_leaf(leaf.spec, leaf.folder)
            write_json(leaf.folder / "recipe.json", leaf.index.recipe.to_json())
            for name, spec in self._specs.items():
                if spec is not None:
                    self._views[name] = self._view(spec, [self._leaves[p.name] for p in spec.leaves()])
        else:
            leaf.index.remove(list(leaf.held))
        leaf.held, leaf.suspect = {}, False
        self._catch_up_due = True

    def _catch_up(self, current: dict[str, str], progress: Progress | None) -> int:
        leaves = list(self._leaves.values())
        plans = {leaf.name: leaf.changes(current) for leaf in leaves}
        wanted = sorted({rid for changed, _ in plans.values() for rid in changed})
        vanished = {rid for _, gone in plans.values() for rid in gone}
        for leaf in leaves:
            gone = plans[leaf.name][1]
            if gone:
                leaf.index.remove(gone)
                for rid in gone:
                    leaf.held.pop(rid, None)
                    self._problems.pop(rid, None)
                self._ledger.update(leaf.name, {}, gone)
        if progress is not None:
            progress(0, len(wanted))
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            batch: dict[str, MemoryRecord] = {}
            missing: set[str] = set()
            for record_id in chunk:
                try:
                    batch[record_id] = self.store.get(record_id)
                    self._problems.pop(record_id, None)
                except RecordNotFound:
                    missing.add(record_id)
                except StoreError as exc:  # unreadable: stops matching by its old text, is reported
                    self._problems[record_id] = exc
            for leaf in leaves:
                mine = set(plans[leaf.name][0])
                self._apply(
                    [leaf],
                    {r: rec for r, rec in batch.items() if r in mine},
                    {r: current[r] for r in chunk if r in mine},
                    missing & mine,
                )
            if progress is not None:
                progress(start + len(chunk), len(wanted))
        for leaf in leaves:
            if leaf.suspect:
                leaf.suspect = False
                if leaf.digest() != leaf.index.inputs().digest:
                    _log.warning("index %s holds records the store does not: rebuilding it", leaf.name)
                    self._wipe(leaf)
                    return self._catch_up(current, progress)
        return len(wanted) + len(vanished - set(wanted))

    def _apply(
        self, leaves: list[_Leaf], batch: dict[str, MemoryRecord], tokens: dict[str, str], missing: set[str]
    ) -> None:
        """Make ``leaves`` hold ``batch`` and nothing for the other ids of ``tokens`` and ``missing``."""
        fresh = [record for record in batch.values() if not record.redacted]
        versions = {record.id: version_digest(record) for record in fresh}
        dropped = [rid for rid in tokens if rid not in versions] + sorted(missing)
        for leaf in leaves:
            try:
                if dropped:
                    leaf.index.remove(dropped)
                if fresh:
                    leaf.index.index(fresh)
            except AgentMemoryError as exc:  # e.g. an embedding server down: retried next refresh
                _log.warning("index %s could not be updated (%s); will retry", leaf.name, exc)
                continue
            update = {rid: (token, versions.get(rid)) for rid, token in tokens.items() if rid not in missing}
            leaf.held.update(update)
            for rid in missing:
                leaf.held.pop(rid, None)
            self._ledger.update(leaf.name, update, missing)

    def _current_tokens(self, only: list[str] | None = None) -> dict[str, str]:
        tokens = getattr(self.store, "version_tokens", None)
        if callable(tokens):
            result: dict[str, str] = tokens(only) if only is not None else tokens()
            return result
        if only is not None:
            found = {}
            for rid in only:
                try:
                    found[rid] = version_digest(self.store.get(rid))
                except RecordNotFound:
                    continue
            return found
        return {r.id: version_digest(r) for r in self.store.list()}


def _close(index: SearchIndex) -> None:
    close = getattr(index, "close", None)
    if callable(close):
        close()


def _mtime(path: Path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def _newest(folder: Path) -> tuple[int, int]:
    """Return (latest change time, total size) of the files in ``folder``: moves on every log append."""
    try:
        with os.scandir(folder) as entries:
            stats = [entry.stat() for entry in entries if entry.is_file()]
    except OSError:
        return (0, 0)
    return (max((s.st_mtime_ns for s in stats), default=0), sum(s.st_size for s in stats))
