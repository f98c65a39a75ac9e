"""`IndexCatalog`: the search indexes of a Home, built from its recipes and kept in step with its store.

Indexes are a disposable cache (seed 003, issue 4 items 6-7). Each recipe
(:mod:`.recipes`) has its own folder ``.cache/indexes/<name>/`` with ``recipe.json`` (how it
is built) and ``inputs.json`` (count, digest of the (record id, version digest) pairs it
holds, build time). Several indexes live side by side; recall reads the *active* ones. A
hybrid recipe holds no data: it fuses the indexes of its parts, which other recipes share.

- **Rebuilds** (:mod:`.holdings`): an index whose ``recipe.json`` differs from its recipe is
  emptied and filled again; so is one whose contents disagree with the ledger after every
  record has been read again.
- **Freshness** (:mod:`.freshness`): a cheap token check re-reads only what changed, so a
  note added or edited outside the library is found by its new text, and a removed, erased
  or unreadable one stops matching; :meth:`IndexCatalog.status` says when an index lags. A
  store that numbers its writes (SQLite, PostgreSQL, in-memory: a
  :class:`~agent_memory.stores.base.ChangeFeed`) is asked only for what changed since the
  last recall, whichever process wrote it.
- **Choice**: with no recipes configured a Home reads ``hybrid`` (BM25 + MiniLM) when the
  model can be loaded (a default install), else ``bm25``; a configured recipe this machine cannot
  open (extra missing, API key variable unset) is left out, and :meth:`describe` says why.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_memory.errors import AgentMemoryError, ConfigError, SignatureError, StoreError
from agent_memory.records.card import Card
from agent_memory.records.record import MemoryRecord
from agent_memory.records.wire import format_timestamp
from agent_memory.search.base import Embedder, Hit, SearchIndex
from agent_memory.search.freshness import FULL_CHECK_SECONDS, Freshness, Progress
from agent_memory.search.holdings import Holding, Ledger, close_index, fuse, unavailable, write_json
from agent_memory.search.hybrid import CANDIDATES, HybridIndex
from agent_memory.search.hybrid import fuse as fuse_rankings
from agent_memory.search.overlap import each
from agent_memory.search.recipes import (
    BUILTIN_RECIPES,
    DEFAULT_CONTEXT,
    DEFAULT_WHY,
    RecipeSpec,
    SearchSettings,
)
from agent_memory.stores.base import RecordStore
from agent_memory.stores.file_tokens import change_signal
from agent_memory.stores.verified import Refusal, Signers, iter_verified, read_verified

__all__ = ["FULL_CHECK_SECONDS", "IndexCatalog", "Progress"]

_log = logging.getLogger(__name__)


class IndexCatalog:
    """The indexes recall reads, and the bookkeeping that keeps them fresh.

    Prefer :meth:`for_home` and :meth:`in_memory`. Thread-safe (one re-entrant lock).

    Args:
        store: The store the indexes derive from.
        indexes: Ready-made indexes, by name; all of them active (recipes add more).
        folder: ``.cache/indexes`` of a Home, or ``None`` for in-memory indexes.
        signal: A cheap callable whose value changes whenever the store may have changed;
            ``None`` means compare every token on every refresh. Unused when ``store`` is a
            :class:`~agent_memory.stores.base.ChangeFeed` (its counter is exact).
        clock: Monotonic seconds, for :data:`FULL_CHECK_SECONDS` (injectable for tests).

    Attributes:
        why: Why the active indexes are the ones they are (shown by ``status``).
        unavailable: Recipes left out or failing here, with the reason.
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
        self._lock = threading.RLock()
        self._ledger = Ledger(folder / "state.sqlite" if folder is not None else None)
        self._holdings: dict[str, Holding] = {}
        self._fresh = Freshness(store, self._ledger, self._holdings, signal=signal, clock=clock)
        self._specs: dict[str, RecipeSpec | None] = {}
        for name, index in (indexes or {}).items():
            holding = Holding(name, None, index, folder / name if folder is not None else None)
            holding.adopt(self._ledger)
            self._holdings[name], self._specs[name] = holding, None
        self._active: tuple[str, ...] = tuple(self._specs)

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

        indexes: dict[str, SearchIndex] = {"bm25": FtsIndex(":memory:", context=DEFAULT_CONTEXT)}
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
        signal = change_signal(root, cache_dir.parent / "log") if isinstance(root, Path) else None
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
            "bm25": FtsIndex(folder / "bm25" / "index.sqlite", name="bm25", context=DEFAULT_CONTEXT),
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
                else:
                    self.unavailable[name] = reason
            if not chosen:
                self.add_recipe(BUILTIN_RECIPES["bm25"])
                chosen = ["bm25"]
                self.why += "; none could be opened here, so bm25 alone"
            self._active = tuple(chosen)

    def add_recipe(self, spec: RecipeSpec) -> None:
        """Open the index of ``spec`` beside the others (not active); parts are shared by name.

        A new or emptied index is filled by the next :meth:`refresh`.

        Raises:
            ConfigError: An open index has the name of one of its parts but other options.
            ImportError, EmbeddingError: Its embedder cannot be made (see :func:`.holdings.unavailable`).
        """
        with self._lock:
            for part in spec.leaves():
                held = self._holdings.get(part.name)
                if held is None:
                    folder = self.folder / part.name if self.folder is not None else None
                    self._holdings[part.name] = Holding.open(part, folder, self._ledger)
                elif held.spec != part:
                    detail = f"two recipes named {part.name!r} have different options"
                    raise ConfigError(detail, field=f"search.recipe.{part.name}")
            self._specs[spec.name] = spec
            if self.folder is not None and spec.kind == "hybrid":
                (self.folder / spec.name).mkdir(exist_ok=True)
                write_json(self.folder / spec.name / "recipe.json", self._view(spec.name).recipe.to_json())
            self._fresh.due = True

    @property
    def active(self) -> tuple[str, ...]:
        """Names of the indexes :meth:`query` reads, in order."""
        return self._active

    @property
    def indexes(self) -> dict[str, SearchIndex]:
        """The active indexes, by name."""
        return {name: self._view(name) for name in self._active}

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

        Cheap when nothing changed (see :mod:`.freshness`). A record whose index update
        fails (an embedding server down) is tried again by the next refresh.
        """
        with self._lock:
            return self._fresh.refresh(force=force, progress=progress)

    def rebuild(self, names: Iterable[str] | None = None, *, progress: Progress | None = None) -> int:
        """Empty the indexes of ``names`` (default: the active ones) and fill them from the store.

        Returns:
            How many records were read.

        Raises:
            ConfigError: A name is not open.
        """
        with self._lock:
            for name in self._check_open(list(names) if names is not None else self._active):
                for holding in self._holdings_of(name):
                    holding.wipe(self._ledger)
            return self._fresh.catch_up(self._fresh.tokens(), progress)

    @property
    def defer_embedding(self) -> bool:
        """Whether writes leave every vector index to the next query (:mod:`.freshness`, "Deferred").

        Off by default; the MCP server turns it on, so ``remember`` returns before its
        vector is computed and the next ``recall`` embeds everything waiting in one batch.
        """
        return self._fresh.defer_embedding

    @defer_embedding.setter
    def defer_embedding(self, value: bool) -> None:
        with self._lock:
            self._fresh.defer_embedding = bool(value)

    def written(self, records: Iterable[MemoryRecord]) -> None:
        """Index versions this process just wrote (so a recall right after finds them).

        A vector index whose model is not loaded yet (and, with :attr:`defer_embedding`,
        every vector index) gets them at the next :meth:`query` or :meth:`refresh` instead
        (:mod:`.freshness`, "Deferred"): a write never loads a model.
        """
        with self._lock:
            self._fresh.written(records)

    def erased(self, record_ids: Iterable[str]) -> None:
        """Remove records from every index and purge what can be purged (erasure)."""
        with self._lock:
            self._fresh.erased(record_ids)

    def query(
        self,
        text: str,
        *,
        k: int = 32,
        recipes: Sequence[str] | None = None,
        now: datetime | None = None,
    ) -> list[list[Hit]]:
        """Return each active index's hits for ``text`` (best first), one list per index.

        An index that fails (an embedding server down) does not fail the query: a hybrid
        fuses the parts that answered, any other index gives ``[]``, and :meth:`describe`
        reports the failure.

        Args:
            text: Any user text (searched literally).
            k: Hits per index.
            recipes: Read these open indexes instead of the active ones.
            now: When the question is asked: a hybrid reads the dates the question names
                ("four weeks ago") against it (:mod:`.dates`); ``None``: the hybrid's clock.

        Versions this process wrote while an index was cold are indexed first, so every
        index answers over them.

        Raises:
            ConfigError: A name in ``recipes`` is not open.
        """
        with self._lock:
            self._fresh.settle()
            names = self._check_open(recipes) if recipes is not None else self._active
            # Side by side (BM25 beside vectors: search.overlap); results in the order of names.
            return each([functools.partial(self._query_one, name, text, k, now) for name in names])

    def cards(self, record_ids: Iterable[str]) -> dict[str, Card] | None:
        """Return the :class:`~agent_memory.records.card.Card` an active index keeps of each id.

        ``None`` when no active index keeps cards (a vector-only or PostgreSQL recipe): the
        caller reads every record. Ids the index does not hold are left out. The cards are
        those of the versions the index was last given: as fresh as the index after
        :meth:`refresh`, and recall compares each one it uses with the version it reads.
        """
        with self._lock:
            for name in self._active:
                for holding in self._holdings_of(name):
                    keeper = getattr(holding.index, "cards", None)
                    if keeper is not None and not holding.suspect:
                        try:
                            found: dict[str, Card] = keeper(record_ids)
                        except AgentMemoryError as exc:  # a server down: recall reads the records
                            _log.warning("index %s gave no cards (%s); reading the records", name, exc)
                            return None
                        return found
            return None

    # ------------------------------------------------------------------ reporting

    def status(self) -> list[dict[str, Any]]:
        """Return every open index as ``status`` shows it, comparing tokens now (nothing is refreshed).

        Each entry: ``name``, ``kind``, ``active``, ``indexed`` (records it holds), ``records``
        (readable records in the store), ``stale`` (records added, changed or removed since
        it was brought up to date), ``waiting`` (of those, in an index whose model is not loaded
        in this process, the versions another index of the Home already holds: written while the
        model was not loaded, :mod:`.freshness` "Deferred"; the next query indexes them) and
        ``dirty`` (stale beyond ``waiting``, or its contents disagree with the ledger).
        """
        with self._lock:
            # Another process may have written since: take each ledger as it is now.
            agreeing = {name: holding.agrees(self._ledger) for name, holding in self._holdings.items()}
            current = self._fresh.tokens()
            indexed_now = {
                rid
                for holding in self._holdings.values()
                for rid, (token, version) in holding.held.items()
                if version is not None and current.get(rid) == token
            }
            out = []
            for name in self._specs:
                stale: set[str] = set()
                waiting: set[str] = set()
                unread: set[str] = set()
                off = False
                for holding in self._holdings_of(name):
                    changed, vanished = holding.changes(current)
                    stale.update(changed, vanished)
                    if self._fresh.defers(holding):  # a write of this process left these to a query
                        waiting.update(rid for rid in changed if rid in indexed_now)
                    unread |= holding.unreadable(current)
                    off = off or not agreeing[holding.name]
                view = self._view(name)
                out.append(
                    {
                        "name": name,
                        "kind": view.recipe.kind,
                        "active": name in self._active,
                        "indexed": view.inputs().count,
                        "records": len(current) - len(unread),
                        "stale": len(stale),
                        "waiting": len(waiting),
                        "dirty": bool(stale - waiting) or off,
                    }
                )
            return out

    def describe(self) -> dict[str, Any]:
        """Return ``{"recipes": [active names], "why": reason, "unavailable": {name: reason}}``."""
        return {"recipes": list(self._active), "why": self.why, "unavailable": dict(self.unavailable)}

    def readable_records(self) -> list[MemoryRecord]:
        """Return the latest version of every record that verifies, by ``(created_at, id)``.

        The one verified read path (:func:`~agent_memory.stores.verified.read_verified`):
        unlike ``store.list()``, a note that does not parse or verify does not hide the others
        and is never returned; it is reported by :meth:`problems`.
        """
        signers = self._fresh.signers
        reading = read_verified(self.store, home_signer=signers.home, trusted=signers.trusted)
        for refusal in reading.refused:
            self._refused(refusal)
        return list(reading.records)

    def each_readable(self) -> Iterator[MemoryRecord]:
        """Yield what :meth:`readable_records` returns, in id order, a thousand records read at a time.

        For a pass over every record that keeps none of them (counts, a search): memory stays
        bounded however large the Home (:func:`~agent_memory.stores.verified.iter_verified`).
        """
        signers = self._fresh.signers
        yield from iter_verified(
            self.store, home_signer=signers.home, trusted=signers.trusted, refused=self._refused
        )

    def _refused(self, refusal: Refusal) -> None:
        if isinstance(refusal.error, StoreError | SignatureError):
            self._fresh.problems[refusal.record_id] = refusal.error

    def sign_as(self, signers: Signers) -> None:
        """Name whose signatures the Home takes: its own key and ``memory.toml [trust]``.

        From then on a record is read only when it is signed by one of them and verifies
        (:meth:`Signers.check <agent_memory.stores.verified.Signers.check>`).
        """
        self._fresh.signers = signers

    @property
    def signers(self) -> Signers:
        """Whose signatures the Home takes (:meth:`sign_as`; none before it)."""
        return self._fresh.signers

    def unreadable(self) -> list[str]:
        """Return the ids of notes the active indexes could not read (not indexed), sorted.

        From the ledger (what the last refresh found, at the notes' current tokens) and the
        problems seen by this process; ``doctor`` names each file and why (issue 24 item 4).
        """
        with self._lock:
            found: set[str] = set(self._fresh.problems)
            holdings = [holding for name in self._active for holding in self._holdings_of(name)]
            # Only the few ids held without a version are looked up: recall calls this every
            # time, and the store's every token is a stat per note (seconds at 100k notes).
            unindexed = sorted({rid for holding in holdings for rid in holding.unindexed})
            if unindexed:
                current = self._fresh.tokens(only=unindexed)
                for holding in holdings:
                    found |= holding.unreadable(current)
            return sorted(found)

    def behind(self, record_ids: Iterable[str]) -> set[str]:
        """Return which of ``record_ids`` an active index holds at another version than the store's now.

        Compares the store's token of each (one ``stat`` for a note) with what every active
        index last read, refreshing nothing: a record is behind when its note changed, appeared
        or went since the index read it, until the next refresh (the next recall, at its next
        full comparison for a note edited in place; ``reindex`` at once).

        A vector index (it can be *cold*: its model not loaded in the writing process) is judged
        only when no other index is active: a write may leave its embedding to the
        next query, which embeds it before it searches (:mod:`~agent_memory.search.freshness`,
        "Deferred"), so every freshly remembered record would otherwise read as behind,
        depending on which process wrote it; a hand edit or a note written by another program
        still shows in the text indexes (BM25), which read the same notes.
        """
        wanted = sorted(set(record_ids))
        if not wanted:
            return set()
        with self._lock:
            current = self._fresh.tokens(only=wanted)
            found: set[str] = set()
            holdings = [holding for name in self._active for holding in self._holdings_of(name)]
            steady = [holding for holding in holdings if holding.index.recipe.kind != "vector"]
            for holding in steady or holdings:
                found.update(holding.changes(current, partial=True)[0])
                found.update(rid for rid in wanted if rid not in current and rid in holding.held)
            return found

    def problems(self) -> list[StoreError | SignatureError]:
        """Return the records that could not be read or do not verify (not indexed), as last seen."""
        return list(self._fresh.problems.values())

    def flush(self) -> None:
        """Write each index folder's ``recipe.json`` and ``inputs.json`` (the ledger is always current)."""
        with self._lock:
            if self.folder is None:
                return
            views = {**{name: h.index for name, h in self._holdings.items()}, **self.every_view()}
            for name, view in views.items():
                held = view.inputs()
                folder = self.folder / name
                folder.mkdir(parents=True, exist_ok=True)
                write_json(folder / "recipe.json", view.recipe.to_json())
                built = format_timestamp(held.built_at) if held.built_at else None
                inputs = {"count": held.count, "digest": held.digest, "built_at": built}
                write_json(folder / "inputs.json", inputs)

    def every_view(self) -> dict[str, SearchIndex]:
        """Return every open index by name, active or not (a hybrid as its fused view)."""
        return {name: self._view(name) for name in self._specs}

    def close(self) -> None:
        """Write the folder files and close every index and the ledger."""
        with self._lock:
            self.flush()
            for holding in self._holdings.values():
                close_index(holding.index)
            self._ledger.close()

    # ------------------------------------------------------------------ internals

    def _check_open(self, names: Sequence[str]) -> tuple[str, ...]:
        closed = [name for name in names if name not in self._specs]
        if closed or not names:
            raise ConfigError(f"no open index named {closed or 'at all'}", field="search.recipes")
        return tuple(names)

    def _holdings_of(self, name: str) -> list[Holding]:
        spec = self._specs[name]
        return [self._holdings[p.name] for p in spec.leaves()] if spec is not None else [self._holdings[name]]

    def _view(self, name: str) -> SearchIndex:
        """The index a name reads: a holding's, or a hybrid fused over its parts' current indexes."""
        spec = self._specs[name]
        parts = [holding.index for holding in self._holdings_of(name)]
        return fuse(spec, parts) if spec is not None and spec.kind == "hybrid" else parts[0]

    def _query_one(self, name: str, text: str, k: int, now: datetime | None = None) -> list[Hit]:
        try:
            view = self._view(name)
            if isinstance(view, HybridIndex):
                return view.query(text, k=k, now=now)
            return view.query(text, k=k)
        except AgentMemoryError as exc:
            _log.warning("index %s failed to answer (%s); using what still works", name, exc)
            self.unavailable[name] = f"the last query failed: {exc}"
        spec = self._specs[name]
        if spec is None or spec.kind != "hybrid" or k <= 0:
            return []
        rankings: list[list[Hit]] = []
        for holding in self._holdings_of(name):
            try:
                rankings.append(holding.index.query(text, k=max(k, CANDIDATES)))
            except AgentMemoryError:
                rankings.append([])
        options = spec.options
        fused = fuse_rankings(
            rankings,
            options["weights"],
            method=options["fusion"],
            k_rrf=options.get("k_rrf", 60),
            normalise=options.get("normalise", "max"),
        )
        return fused[:k]
