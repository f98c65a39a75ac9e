"""One memory shared by many agents: a Memory over a SQLite file or a PostgreSQL schema (DESIGN.md §6).

A Home keeps its records as Markdown notes; when several agents or machines must write one
memory, the records, the operation log and the full-text index live together in one SQL
database instead, behind the same ports (:class:`~agent_memory.stores.base.RecordStore`,
:class:`~agent_memory.log.base.OperationLog`, :class:`~agent_memory.search.base.SearchIndex`)::

    with connect("postgresql://agent@db.internal:5432/memory?schema=team") as memory:
        memory.remember("Staging runs on db-3.", source="ticket-481")

- ``postgresql://…`` (or ``postgres://…``): :class:`~agent_memory.stores.postgres.PostgresStore`,
  :class:`~agent_memory.log.postgres.PostgresLog` and a
  :class:`~agent_memory.search.postgres.PgTextIndex` (``tsvector`` + GIN), all in the schema
  the URL's ``schema=`` parameter names (default ``agent_memory``); safe for any number of
  writer processes on any number of machines.
- ``sqlite:PATH``: :class:`~agent_memory.stores.sqlite.SQLiteStore` and
  :class:`~agent_memory.log.sqlite.SQLiteLog` in one file (WAL), for processes on one machine;
  its BM25 index is built in memory when the Memory opens.

Every write is gated, logged and governed exactly as in a Home (withdrawals and reviews are log
events in the shared log, so every agent sees them). What a Home has beyond this (the inbox and
archive, generated views, maintenance branches, ``golden.yaml``) lives in files and needs a
Home. To move a Home's records into a database, ``agent-memory migrate --to URL``.

Invariant: everything :func:`connect` opens, :meth:`ConnectedMemory.close` closes, once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_memory.errors import ConfigError
from agent_memory.memory import Memory
from agent_memory.search.catalog import IndexCatalog
from agent_memory.search.fts import FtsIndex
from agent_memory.stores.urls import parse_store_url

__all__ = ["ConnectedMemory", "connect"]


class ConnectedMemory(Memory):
    """A :class:`~agent_memory.memory.Memory` that owns its store, log and index connections."""

    _parts: tuple[Any, ...] = ()

    def close(self) -> None:
        """Close the Memory (see :meth:`Memory.close`), then its index, log and store connections."""
        try:
            super().close()
        finally:
            parts, self._parts = self._parts, ()
            for part in parts:
                part.close()


def connect(url: str, *, key_file: str | Path | None = None, **options: Any) -> ConnectedMemory:
    """Open a Memory over the SQL database ``url`` names (module docstring), creating its tables.

    Args:
        url: ``postgresql://USER@HOST:PORT/DB[?schema=NAME]`` or ``sqlite:PATH`` (the store
            URLs of :mod:`agent_memory.stores.urls`; keep passwords in ``~/.pgpass`` or
            ``PGPASSWORD``, never in the URL).
        key_file: An existing Ed25519 key file to sign records with (``agent-memory init``
            makes one per Home); records are unsigned without it.
        **options: Passed to :class:`~agent_memory.memory.Memory` (``actor``, ``actors``,
            ``taint``, ``source_kind``, ``timezone``).

    Returns:
        The open Memory; close it (or use ``with``) to close its connections.

    Raises:
        ConfigError: ``url`` names a file store or a Home (open those with
            :meth:`Memory.open <agent_memory.memory.Memory.open>`), or ``key_file`` is missing.
        StoreError: The URL is malformed, the server is unreachable, or the file or schema
            holds something else.
        LogError: The log's table cannot be opened.
    """
    parsed = parse_store_url(url)
    if parsed.kind not in ("postgresql", "sqlite"):
        raise ConfigError(
            f"connect opens a database, not a {parsed.kind} store: {parsed.display()}",
            hint="open a Home with Memory.open(PATH); write postgresql://… or sqlite:PATH",
        )
    identity = None
    if key_file is not None:
        from agent_memory.records.signing import load_or_create_identity

        path = Path(key_file).expanduser()
        if not path.is_file():
            raise ConfigError("no key file here", path=str(path), hint="make one with: agent-memory init-key")
        identity = load_or_create_identity(path)
    opened: list[Any] = []
    try:
        store = parsed.open()
        opened.append(store)
        log = parsed.open_log()
        if log is None:  # parse_store_url gave a database kind: each has a log
            raise ConfigError(f"no operation log for {parsed.display()}")
        opened.append(log)
        index: Any
        if parsed.kind == "postgresql":
            from agent_memory.search.postgres import PgTextIndex

            index = PgTextIndex(parsed.location, schema=parsed.schema or "agent_memory")
            name = "fulltext"
        else:
            index, name = FtsIndex(":memory:"), "bm25"
        opened.append(index)
        memory = ConnectedMemory(store, log, IndexCatalog(store, {name: index}), identity=identity, **options)
    except BaseException:
        for part in reversed(opened):
            part.close()
        raise
    memory._parts = (log, store)  # the catalog closes the index
    return memory
