"""Holdings: the indexes a recipe opens, and what each one holds (issue 4 items 6-7).

:func:`open_index` turns a bm25 or vector :class:`~.recipes.RecipeSpec` into its index
(:class:`~.fts.FtsIndex` or :class:`~.vectors.VectorIndex`, with the embedder made by
:func:`make_embedder`) and :func:`fuse` a hybrid's parts into a :class:`~.hybrid.HybridIndex`;
:func:`unavailable` says, without loading a model, why a recipe cannot be opened here.
Embedders and indexes are imported only when needed, so a BM25-only Home never imports
the embedding code, and MiniLM is made once per process (its model loads on first use).

A :class:`Holding` is one index that holds data: its folder ``.cache/indexes/<name>/``, its
``recipe.json``, and what the :class:`Ledger` says it holds. The ledger is
``.cache/indexes/state.sqlite`` (one table, WAL): for every index and record, the store's
cheap version token when the record was last read, and the version digest indexed (``NULL``
when the record was read but is not indexed: unreadable, or an erasure tombstone). Rows are
updated per batch in one transaction, so processes sharing a Home see each other's work
without rewriting a large file; a damaged ledger is replaced by an empty one ("read every
record again").

Invariants: a holding whose ``recipe.json`` exists and differs from its recipe is emptied
before use; the check, the emptying and the first ``recipe.json`` happen under an exclusive
``flock`` on ``.cache/indexes/<name>.lock``, so processes opening a fresh Home at once never
empty an index another one has just created and opened (issue 11);
one whose contents disagree with the ledger is marked ``suspect`` (read everything again,
then rebuild if still off); :meth:`Holding.apply` updates the index first and the ledger
after, so a crash only makes a record look changed, never fresh when it is not. Index and
ledger change together under the same lock (:meth:`Holding.exclusive`), and the two are
compared only under it, so a process opening an index while others write never sees one
ahead of the other (it once did, took the gap for damage and forgot every ledger row).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import logging
import os
import sqlite3
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agent_memory.errors import AgentMemoryError, ConfigError
from agent_memory.records.record import MemoryRecord
from agent_memory.search.base import Embedder, SearchIndex, inputs_digest, version_digest
from agent_memory.search.recipes import RecipeSpec
from agent_memory.stores.sqlite_file import connect, use_wal

__all__ = [
    "Held",
    "Holding",
    "Ledger",
    "close_index",
    "fuse",
    "make_embedder",
    "open_index",
    "read_json",
    "unavailable",
    "write_json",
]

_log = logging.getLogger(__name__)

Held = dict[str, tuple[str, str | None]]
"""``{record id: (version token, version digest or None)}`` for one index."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS held (
    leaf TEXT NOT NULL,
    record_id TEXT NOT NULL,
    token TEXT NOT NULL,
    version TEXT,
    PRIMARY KEY (leaf, record_id)
) STRICT, WITHOUT ROWID
"""


class Ledger:
    """The per-index record of tokens and versions (module docstring), in SQLite or in memory.

    Args:
        path: ``state.sqlite``, created if absent; ``None`` keeps nothing (in-memory catalogs).
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        # What each index was last given by load: a later load of another index shares its
        # (token, version) pairs instead of a copy per index (issue 23: 14 MB at 100k records).
        self._loaded: dict[str, Held] = {}
        if path is not None:
            self._conn = self._connect(path)

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        for attempt in (1, 2):
            conn = connect(str(path), timeout_seconds=5.0)
            try:
                use_wal(conn, synchronous="NORMAL", timeout_seconds=5.0)
                conn.execute(_SCHEMA)
                return conn
            except sqlite3.DatabaseError as exc:
                conn.close()
                if attempt == 2 or isinstance(exc, sqlite3.OperationalError):
                    raise
                # A derived file: any damage means "read every record again".
                _log.warning("index ledger %s is damaged (%s); starting a new one", path, exc)
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{path}{suffix}").unlink(missing_ok=True)
        raise AssertionError("unreachable")  # pragma: no cover

    def data_version(self) -> int | None:
        """SQLite's ``data_version`` of this connection: it moves when another connection commits.

        ``None`` in memory. A holding that loaded its rows at one value need not load them again
        while it stands: this process's own changes go through this connection and are applied to
        the holding as they are made (:meth:`Holding.apply`).
        """
        if self._conn is None:
            return None
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def load(self, leaf: str) -> Held:
        """Return what ``leaf`` holds, by record id (empty for a new index).

        Every index of a Home holds the same ids, store tokens and mostly the same versions,
        and the vector matrix names the same ids again: ids and tokens are interned, and a
        ``(token, version)`` pair equal to the one another index was given by its last load
        is that same tuple, so two indexes cost one copy of their rows, not two (issue 23).
        The returned dict is the caller's to change; a changed pair is simply not shared.
        """
        if self._conn is None:
            return {}
        self._loaded.pop(leaf, None)  # its previous rows are being replaced: never a base
        bases = list(self._loaded.values())  # a list at once: other threads load their leaves too
        like = bases[0] if bases else {}
        rows = self._conn.execute("SELECT record_id, token, version FROM held WHERE leaf = ?", (leaf,))
        intern, held = sys.intern, {}
        for record_id, token, version in rows:
            pair = like.get(record_id)
            if pair is None or pair[0] != token or pair[1] != version:
                pair = (intern(token), version)
            held[intern(record_id)] = pair
        self._loaded[leaf] = held
        return held

    def update(self, leaf: str, held: Mapping[str, tuple[str, str | None]], dropped: Iterable[str]) -> None:
        """Record new ``(token, version)`` pairs of ``leaf`` and forget ``dropped``, in one transaction."""
        if self._conn is None:
            return
        gone = [(leaf, record_id) for record_id in dropped]
        rows = [(leaf, record_id, token, version) for record_id, (token, version) in held.items()]
        if not gone and not rows:
            return
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            self._conn.executemany("DELETE FROM held WHERE leaf = ? AND record_id = ?", gone)
            self._conn.executemany("INSERT OR REPLACE INTO held VALUES (?, ?, ?, ?)", rows)
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise

    def forget(self, leaf: str) -> None:
        """Forget everything ``leaf`` held (its index is being rebuilt)."""
        self._loaded.pop(leaf, None)
        if self._conn is not None:
            self._conn.execute("DELETE FROM held WHERE leaf = ?", (leaf,))

    def close(self) -> None:
        """Close the database."""
        self._loaded.clear()
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def read_json(path: Path) -> Any:
    """Return the JSON in ``path``, or ``None`` when it is absent or unreadable (a cache file)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_json(path: Path, value: Any) -> None:
    """Write ``value`` as indented JSON to ``path`` atomically (temp file, then ``os.replace``).

    A file that already holds exactly that JSON is left alone: every command closing a Home
    flushes each index's files, and most of them have not changed.
    """
    text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except (OSError, ValueError):
        pass  # absent or unreadable: written below
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


@contextlib.contextmanager
def folder_lock(folder: Path | None) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``<folder>.lock`` beside ``folder`` (nothing for ``None``).

    Other processes opening the same index wait; the lock file is left in place (it is
    beside the folder, so emptying the folder never removes a lock someone holds).
    """
    if folder is None:
        yield
        return
    folder.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder.parent / f"{folder.name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the last descriptor releases the lock


def empty_folder(folder: Path) -> None:
    """Delete every file in ``folder`` (an index being rebuilt); sub-folders are left alone."""
    if not folder.is_dir():
        return
    for entry in folder.iterdir():
        if entry.is_file() or entry.is_symlink():
            entry.unlink(missing_ok=True)


def make_embedder(spec: RecipeSpec) -> Embedder:
    """Return the embedder of a vector recipe; MiniLM is shared per process (its model loads once).

    Raises:
        ImportError: MiniLM without the ``embeddings`` extra (the message has the install hint).
        ConfigError: ``api_key_env`` names an unset variable.
        EmbeddingError: A configured model or tokenizer file does not exist.
    """
    from agent_memory.search import embedders

    options = spec.options
    if options["embedder"] == "hash":
        return embedders.HashEmbedder(options["dimensions"])
    if options["embedder"] == "minilm":
        return _minilm(options["max_tokens"], options.get("model_path"), options.get("tokenizer_path"))
    key = None
    if "api_key_env" in options:
        key = os.environ.get(options["api_key_env"])
        if not key:
            detail = f"the environment variable {options['api_key_env']} is not set"
            raise ConfigError(detail, field="api_key_env")
    return embedders.OpenAIEmbedder(
        options["base_url"],
        options["model"],
        api_key=key,
        dimensions=options.get("dimensions"),
        timeout=float(options.get("timeout_seconds", 30)),
    )


@functools.lru_cache(maxsize=4)
def _minilm(max_tokens: int, model_path: str | None, tokenizer_path: str | None) -> Embedder:
    from agent_memory.search.embedders import MiniLMEmbedder

    return MiniLMEmbedder(max_tokens=max_tokens, model_path=model_path, tokenizer_path=tokenizer_path)


def unavailable(spec: RecipeSpec) -> str | None:
    """Return why ``spec`` cannot be opened on this machine, or ``None`` when it can.

    Checked without loading any model: a MiniLM part needs the ``embeddings`` extra (and its
    model files, when configured); an OpenAI part with ``api_key_env`` needs that variable set.
    """
    for leaf in spec.leaves():
        embedder = leaf.options.get("embedder")
        if embedder == "minilm":
            try:
                make_embedder(leaf)
            except (ImportError, AgentMemoryError) as exc:
                return f"{leaf.name} is unavailable: {exc}"
        elif embedder == "openai" and "api_key_env" in leaf.options:
            variable = leaf.options["api_key_env"]
            if not os.environ.get(variable):
                return f"{leaf.name} is unavailable: the environment variable {variable} is not set"
    return None


def open_index(spec: RecipeSpec, folder: Path | None) -> SearchIndex:
    """Open (or create) the index of a bm25 or vector recipe in ``folder`` (``None``: in memory).

    Raises:
        ImportError, ConfigError, EmbeddingError: As for :func:`make_embedder`.
        ValueError: ``spec`` is a hybrid.
    """
    path: str | Path = ":memory:" if folder is None else folder / "index.sqlite"
    if spec.kind == "bm25":
        from agent_memory.search.fts import FtsIndex

        return FtsIndex(
            path, name=spec.name, mode=spec.options["mode"], context=spec.options.get("context", 0)
        )
    if spec.kind == "vector":
        from agent_memory.search.vectors import VectorIndex, scoring_options

        return VectorIndex(path, make_embedder(spec), name=spec.name, **scoring_options(spec.options))
    raise ValueError(f"{spec.name} is a hybrid: open its parts")


def fuse(spec: RecipeSpec, parts: Sequence[SearchIndex]) -> SearchIndex:
    """Return the :class:`~.hybrid.HybridIndex` of a hybrid recipe over its opened parts."""
    from agent_memory.search.hybrid import HybridIndex

    options = spec.options
    return HybridIndex(
        parts,
        method=options["fusion"],
        k_rrf=options.get("k_rrf", 60),
        weights=options["weights"],
        normalise=options.get("normalise", "max"),
        name=spec.name,
    )


def close_index(index: SearchIndex) -> None:
    """Close ``index`` if it can be closed."""
    close = getattr(index, "close", None)
    if callable(close):
        close()


class Holding:
    """One index that holds data, its recipe (``None`` when given ready-made) and what it holds.

    Attributes:
        name: The index's name (its folder under ``.cache/indexes/``).
        spec: Its recipe, or ``None`` for an index given ready-made.
        index: The open index.
        folder: Its folder, or ``None`` in memory.
        held: What the ledger says it holds: ``{record id: (token, version digest | None)}``;
            change it only through :meth:`adopt`, :meth:`wipe` and :meth:`apply`, which keep
            :attr:`unindexed` in step.
        suspect: Its contents disagreed with the ledger: check again after reading everything.
    """

    def __init__(self, name: str, spec: RecipeSpec | None, index: SearchIndex, folder: Path | None) -> None:
        self.name, self.spec, self.index, self.folder = name, spec, index, folder
        self.held: Held = {}
        self._unindexed: set[str] = set()
        self.suspect = False
        self._locked = False
        self._loaded_at: int | None = None  # the ledger's data_version when held was loaded

    @property
    def unindexed(self) -> frozenset[str]:
        """The ids held with no version (read, but unreadable or erased): a few, kept in step."""
        return frozenset(self._unindexed)

    @classmethod
    def open(cls, spec: RecipeSpec, folder: Path | None, ledger: Ledger) -> Holding:
        """Open the index of ``spec`` in ``folder``: emptied when its ``recipe.json`` differs, else adopted.

        Under :func:`folder_lock`: a folder without ``recipe.json`` is a new index (or one
        whose recipe file was lost): it gets the file and is adopted, its contents checked
        against the ledger like any other; only a ``recipe.json`` that exists and differs
        (or cannot be read) empties the folder.

        Raises:
            ImportError, ConfigError, EmbeddingError: As for :func:`open_index`.
        """
        with folder_lock(folder):
            if folder is not None:
                folder.mkdir(parents=True, exist_ok=True)
            holding = cls(spec.name, spec, open_index(spec, folder), folder)
            holding._locked = True  # the lock above is the holding's own
            try:
                path, wanted = folder and folder / "recipe.json", holding.index.recipe.to_json()
                if path is not None and path.exists() and read_json(path) != wanted:
                    _log.warning("the recipe of index %s changed: rebuilding it", spec.name)
                    holding.wipe(ledger)
                else:
                    if path is not None and not path.exists():
                        write_json(path, wanted)
                    holding.adopt(ledger)
            finally:
                holding._locked = False
            return holding

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold this index's :func:`folder_lock` (re-entrant in this process; nothing in memory).

        Every change of the index with its ledger rows, and every comparison of the two, runs
        under it: other processes sharing the Home see both or neither.
        """
        if self._locked or self.folder is None:
            yield
            return
        with folder_lock(self.folder):
            self._locked = True
            try:
                yield
            finally:
                self._locked = False

    @property
    def cold(self) -> bool:
        """Whether updating this index now would first load a model (its index's ``cold``)."""
        return bool(getattr(self.index, "cold", False))

    @property
    def embeds(self) -> bool:
        """Whether updating this index computes embeddings (a vector index: it has ``cold``)."""
        return hasattr(type(self.index), "cold")

    def adopt(self, ledger: Ledger) -> None:
        """Load what the ledger says this index holds; if its contents disagree, mark it suspect."""
        if not self.agrees(ledger):
            self.held, self.suspect, self._unindexed = {}, True, set()
            ledger.forget(self.name)

    def agrees(self, ledger: Ledger) -> bool:
        """Take what the ledger says this index holds (other processes write too); return whether it agrees.

        Under :meth:`exclusive`, so no write of another process is half done. An in-memory
        ledger keeps nothing and no other process shares the index: :attr:`held` stands.
        """
        with self.exclusive():
            seen = ledger.data_version()
            if ledger.path is not None and seen != self._loaded_at:
                # Loaded again only after another connection wrote: at 100k records the rows
                # are 30 MB per index, and a second copy for a moment is a peak (issue 23).
                self.held = {}
                self.held = ledger.load(self.name)
                self._unindexed = {rid for rid, (_, version) in self.held.items() if version is None}
                self._loaded_at = seen
            return self.digest() == self.index.inputs().digest

    def wipe(self, ledger: Ledger) -> None:
        """Empty this index: delete its files and reopen it, or (ready-made) remove every id it holds."""
        with self.exclusive():
            ledger.forget(self.name)
            if self.spec is not None and self.folder is not None:
                close_index(self.index)
                empty_folder(self.folder)
                self.index = open_index(self.spec, self.folder)
                write_json(self.folder / "recipe.json", self.index.recipe.to_json())
            else:
                self.index.remove(list(self.held))
            self.held, self.suspect = {}, False
            self._unindexed = set()

    def changes(self, current: Mapping[str, str], *, partial: bool = False) -> tuple[list[str], list[str]]:
        """Return (ids to read again, ids no longer in the store) against the store's ``current`` tokens.

        With ``partial``, ``current`` holds only some records (those written lately), so
        none counts as gone.
        """
        held = self.held
        changed = [rid for rid, token in current.items() if rid not in held or held[rid][0] != token]
        return changed, [] if partial else [rid for rid in held if rid not in current]

    def unreadable(self, current: Mapping[str, str]) -> set[str]:
        """Return the ids read at their current token but not indexed (unreadable or erased).

        ``current`` needs only the tokens of :attr:`unindexed` (the others are not looked at).
        """
        return {rid for rid in self._unindexed if current.get(rid) == self.held[rid][0]}

    def digest(self) -> str:
        """Return the inputs digest this index should report, from the ledger."""
        return inputs_digest((rid, version) for rid, (_, version) in self.held.items() if version is not None)

    def apply(
        self, ledger: Ledger, batch: Mapping[str, MemoryRecord], tokens: Mapping[str, str], missing: set[str]
    ) -> bool:
        """Hold ``batch`` (erased ones excepted) and nothing for the other ids of ``tokens`` and ``missing``.

        Returns:
            False when the index could not be updated (an embedding server down): nothing
            is recorded, so the next refresh tries again.
        """
        fresh = [record for record in batch.values() if not record.redacted]
        versions = {record.id: version_digest(record) for record in fresh}
        dropped = [rid for rid in tokens if rid not in versions] + sorted(missing)
        update = {rid: (token, versions.get(rid)) for rid, token in tokens.items() if rid not in missing}
        with self.exclusive():
            try:
                if dropped:
                    self.index.remove(dropped)
                if fresh:
                    self.index.index(fresh)
            except AgentMemoryError as exc:
                _log.warning("index %s could not be updated (%s); will retry", self.name, exc)
                return False
            ledger.update(self.name, update, missing)
        self.held.update(update)
        for rid, (_, version) in update.items():
            if version is None:
                self._unindexed.add(rid)
            else:
                self._unindexed.discard(rid)
        for rid in missing:
            self.held.pop(rid, None)
            self._unindexed.discard(rid)
        return True
