"""Store URLs: one string names any store adapter, for ``agent-memory migrate`` and scripts.

Spellings (issue 3, "migrate --to URL")::

    notes:PATH  file:PATH        FileStore, Markdown notes (PATH/<hex>/000001.md)
    json:PATH                    FileStore, canonical JSON in the origin's layout (PATH/<hex>/000001.json,
                                 the ``records/`` folder of an fg-agent-memory 0.1 ``Memory``)
    sqlite:PATH                  SQLiteStore (the file is created when absent)
    postgresql://… postgres://…  PostgresStore; an optional ``schema=NAME`` query parameter picks
                                 the schema (default ``agent_memory``), every other part is libpq's
    home:PATH                    the notes store of the Home at PATH (``PATH/notes``, Markdown)

``file://`` URLs (``file:///abs/path``, ``file://localhost/abs/path``) are read as paths; ``~``
is expanded in every path. Invariant: no message built here quotes a password: a URL is
shown only through :func:`redact_url`, and libpq's own errors are cleaned by
:func:`agent_memory.stores.postgres.connect`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from agent_memory.errors import StoreError
from agent_memory.records.record import MemoryRecord
from agent_memory.stores.base import RecordStore

if TYPE_CHECKING:
    from agent_memory.log.base import OperationLog

__all__ = [
    "SCHEMES",
    "AdapterStore",
    "StoreURL",
    "open_store",
    "opened_store",
    "parse_store_url",
    "redact_url",
]

SCHEMES: tuple[str, ...] = ("notes", "file", "json", "sqlite", "postgresql", "postgres", "home")
_KINDS = {"notes": "notes", "file": "notes", "json": "json", "sqlite": "sqlite", "home": "home"}
_HINT = "write notes:PATH, json:PATH, sqlite:PATH, home:PATH or postgresql://USER@HOST:PORT/DB"
_DEFAULT_SCHEMA = "agent_memory"
_PASSWORD_PARAM = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
_LOOSE_USERINFO = re.compile(r"\A([^/@:]*):[^/@]*@")


@runtime_checkable
class AdapterStore(RecordStore, Protocol):
    """What :func:`open_store` returns: the port plus the two methods every adapter has beyond it.

    Neither method is on :class:`~agent_memory.stores.base.RecordStore` (DESIGN.md §4): only
    code that opened a concrete store, like ``migrate`` and erasure, may reach them.
    """

    def erase(self, record_id: str, reason: str, *, now: datetime | None = None) -> MemoryRecord:
        """Replace every version of ``record_id`` by its tombstone; return the tombstone."""
        ...

    def restore_erased(self, history: Sequence[MemoryRecord]) -> int:
        """Store an erased history (copies of one tombstone) under an id not held yet."""
        ...


@dataclass(frozen=True, slots=True, repr=False)
class StoreURL:
    """A parsed store URL.

    Attributes:
        kind: ``notes``, ``json``, ``sqlite``, ``postgresql`` or ``home``.
        location: The path (``~`` expanded) or, for ``postgresql``, the libpq DSN without
            the ``schema`` parameter.
        schema: The PostgreSQL schema; ``None`` for the other kinds.
        text: The URL as given (may hold a password: show :meth:`display` instead).
    """

    kind: str
    location: str
    schema: str | None
    text: str

    def __repr__(self) -> str:
        return f"StoreURL({self.display()!r})"

    def display(self) -> str:
        """Return the URL with any password replaced by ``***``, for messages and the log."""
        return redact_url(self.text)

    @property
    def identity(self) -> tuple[str, ...]:
        """What names the stored data: two URLs with one identity open the same records.

        File stores compare by their resolved folder (``home:H`` is ``notes:H/notes``, and a
        folder read with both codecs counts as one), SQLite by its resolved file, PostgreSQL
        by DSN and schema.
        """
        if self.kind == "postgresql":
            return ("postgresql", self.location, self.schema or _DEFAULT_SCHEMA)
        path = Path(self.location) / "notes" if self.kind == "home" else Path(self.location)
        return ("sqlite" if self.kind == "sqlite" else "files", str(path.resolve()))

    def open(self) -> AdapterStore:
        """Open the store this URL names; SQLite and PostgreSQL stores hold a connection to close.

        Raises:
            StoreError: The server is unreachable, or the file or schema holds something else.
            ConfigError: A ``home:`` URL names a folder that is not a Home.
        """
        if self.kind == "notes":
            from agent_memory.stores.files import FileStore

            return FileStore(self.location, codec="markdown")
        if self.kind == "json":
            from agent_memory.stores.files import FileStore

            return FileStore(self.location, codec="json")
        if self.kind == "sqlite":
            from agent_memory.stores.sqlite import SQLiteStore

            return SQLiteStore(self.location)
        if self.kind == "postgresql":
            from agent_memory.stores.postgres import PostgresStore

            return PostgresStore(self.location, schema=self.schema or _DEFAULT_SCHEMA)
        from agent_memory.home import Home

        return Home.open(self.location).store()

    @contextmanager
    def opened(self) -> Iterator[AdapterStore]:
        """Open the store (see :func:`open_store`) and close it on exit when it holds a connection."""
        store = self.open()
        try:
            yield store
        finally:
            close = getattr(store, "close", None)
            if callable(close):
                close()

    def open_log(self) -> OperationLog | None:
        """Open the operation log that lives with this store, or ``None`` when it has none.

        A Home's is its JSONL log; a SQLite store's the ``oplog`` table of the same file; a
        PostgreSQL store's the ``oplog`` table of the same schema. Plain ``notes:`` and
        ``json:`` folders have no log. Open the store first: a SQLite store refuses a file
        that already holds tables it did not create.

        Raises:
            LogError: The database or server cannot be opened.
            ConfigError: A ``home:`` URL names a folder that is not a Home.
        """
        if self.kind == "home":
            from agent_memory.home import Home

            return Home.open(self.location).log()
        if self.kind == "sqlite":
            from agent_memory.log.sqlite import SQLiteLog

            return SQLiteLog(self.location)
        if self.kind == "postgresql":
            from agent_memory.log.postgres import PostgresLog

            return PostgresLog(self.location, schema=self.schema or _DEFAULT_SCHEMA)
        return None


def parse_store_url(url: str) -> StoreURL:
    """Parse a store URL (spellings in the module docstring) without opening anything.

    Raises:
        StoreError: Not a string, an unknown scheme, an empty path, a ``file://`` URL naming
            another host, or a PostgreSQL URL that cannot be split; the message quotes the
            URL with its password hidden.
    """
    if not isinstance(url, str) or not url.strip():
        raise StoreError(f"not a store URL: {url!r}", hint=_HINT)
    scheme, sep, rest = url.partition(":")
    scheme = scheme.lower()
    if not sep or scheme not in SCHEMES:
        raise StoreError(f"not a store URL: {redact_url(url)!r} (unknown scheme)", hint=_HINT)
    if scheme in ("postgresql", "postgres"):
        return _parse_postgres(url)
    path = rest
    if scheme == "file" and rest.startswith("//"):
        host, _, tail = rest[2:].partition("/")
        if host not in ("", "localhost"):
            raise StoreError(f"not a store URL: {url!r} (a file URL on another host {host!r})", hint=_HINT)
        path = "/" + tail
    if not path or "\0" in path:
        raise StoreError(f"not a store URL: {url!r} (the path is empty or holds NUL)", hint=_HINT)
    return StoreURL(_KINDS[scheme], os.path.expanduser(path), None, url)


def open_store(url: str) -> AdapterStore:
    """Open the store a URL names: the port plus ``erase`` and ``restore_erased``.

    SQLite and PostgreSQL stores hold a connection: close them (``close()``) or use
    :func:`opened_store`.

    Raises:
        StoreError: The URL is malformed (:func:`parse_store_url`), the server is unreachable
            or the file cannot be opened as this store.
        ConfigError: A ``home:`` URL names a folder that is not a Home.
    """
    return parse_store_url(url).open()


def opened_store(url: str) -> AbstractContextManager[AdapterStore]:
    """Open the store a URL names and close it on exit when it holds a connection.

    Raises:
        StoreError, ConfigError: As :func:`open_store`.
    """
    return parse_store_url(url).opened()


def redact_url(url: str) -> str:
    """Return ``url`` with any password shown as ``***``.

    Covers ``scheme://user:password@host``, a ``password=`` query parameter, and the
    spellings of a mistyped URL: ``user:password@host`` without a scheme and libpq's
    ``key=value`` form (``host=h password=p``).
    """
    if "://" not in url:
        url = _PASSWORD_PARAM.sub(r"\1***", url)
        return _LOOSE_USERINFO.sub(r"\1:***@", url)
    try:
        parts = urlsplit(url)
    except ValueError:
        return url.split("://", 1)[0] + "://***"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        netloc = f"{user}{':***' if colon else ''}@{hostport}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, "***" if k.lower() == "password" else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _parse_postgres(url: str) -> StoreURL:
    try:
        parts = urlsplit(url)
        pairs = parse_qsl(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
    except ValueError:
        raise StoreError(f"not a store URL: {redact_url(url)!r} (cannot split it)", hint=_HINT) from None
    if not url.lower().startswith(("postgresql://", "postgres://")):
        raise StoreError(f"not a store URL: {redact_url(url)!r} (expected postgresql://…)", hint=_HINT)
    schemas = [value for key, value in pairs if key == "schema"]
    if len(schemas) > 1:
        raise StoreError(f"not a store URL: {redact_url(url)!r} (schema given twice)", hint=_HINT)
    dsn = url
    if schemas:
        rest = urlencode([(k, v) for k, v in pairs if k != "schema"])
        dsn = urlunsplit((parts.scheme, parts.netloc, parts.path, rest, parts.fragment))
    return StoreURL("postgresql", dsn, schemas[0] if schemas else None, url)
