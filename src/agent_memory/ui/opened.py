"""The one memory a review page serves, open for the server's lifetime, one request at a time.

The CLI opens a :class:`~agent_memory.memory.Memory` per command and commits the Home when it
closes. A page that answers a click in milliseconds cannot open a 100k-record Home per
request, so :class:`OpenedMemory` keeps one open and does per action what closing does per
command: after every write it commits the Home's git repository with the same message
(:func:`agent_memory.sync.commits.commit_message`, under the writer lock) and flushes the salience
sidecar. Every use of the Memory holds one lock, so the page's requests never interleave
(other processes still write through the Home's writer lock, as ever).

Invariants: the actor is the Home's configured person (``memory.toml`` ``[actors] owner``),
as for the CLI; nothing here decides or writes on its own: actions are the callers', made
through the Memory's own methods.
"""

from __future__ import annotations

import getpass
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from agent_memory.governance.review_book import ReviewBook
    from agent_memory.home import Home
    from agent_memory.memory import Memory

from agent_memory.ui.latest import LatestRecords

__all__ = ["DATABASE_PREFIXES", "OpenedMemory", "ui_source"]

T = TypeVar("T")

DATABASE_PREFIXES = ("sqlite:", "postgresql://", "postgres://")
"""A ``--home`` starting with one of these names a database (:func:`agent_memory.connect.connect`)."""


def ui_source(now: datetime | None = None) -> str:
    """Return the source of a write made on the page: ``ui:<user>@<local date>``.

    The user and date are found as for the CLI's ``cli:<user>@<date>``
    (:func:`agent_memory.cli.common.default_source`), so a write from the page is never
    unsourced (DESIGN.md §2).
    """
    try:
        user = getpass.getuser() or "unknown"
    except (KeyError, OSError, ImportError):  # no name in the environment and no password entry
        user = "unknown"
    return f"ui:{user}@{(now or datetime.now()).astimezone().date().isoformat()}"


class OpenedMemory:
    """One open Memory, its Home (``None`` for a database), and the lock the page uses it under.

    Args:
        memory: The open Memory (``source_kind="ui"``); closed by :meth:`close`.
        label: How the page names what it serves (the Home's path, or the database URL
            without its password).
    """

    def __init__(self, memory: Memory, label: str) -> None:
        from agent_memory.governance.review_book import ReviewBook

        self.memory = memory
        self.label = label
        self.home: Home | None = memory.home
        self._lock = threading.RLock()
        self._committed = self._head_seq()
        self._since = memory.opened_at  # the Home's files changed from then on are the page's to commit
        self.reviews: ReviewBook = ReviewBook(memory.log)
        self.latest = LatestRecords(memory)

    @classmethod
    def open(cls, where: str | Path | None) -> OpenedMemory:
        """Open the Home at ``where`` (``--home``; else as the CLI finds one) or a database.

        Raises:
            ConfigError: There is no Home there.
            StoreError: The database cannot be opened.
        """
        text = str(where) if where is not None else ""
        if text.startswith(DATABASE_PREFIXES):
            from agent_memory.connect import connect
            from agent_memory.stores.urls import redact_url

            return cls(connect(text, source_kind="ui"), redact_url(text))
        from agent_memory.home import resolve_home
        from agent_memory.memory import Memory

        root = resolve_home(text or None)
        return cls(Memory.open(root, source_kind="ui"), str(Path(root).resolve()))

    @contextmanager
    def using(self) -> Iterator[Memory]:
        """Hold the page's lock and yield the Memory, for reads."""
        with self._lock:
            yield self.memory

    def read(self, func: Callable[[Memory], T]) -> T:
        """Return ``func(memory)`` under the page's lock."""
        with self.using() as memory:
            return func(memory)

    def write(self, func: Callable[[Memory], T]) -> T:
        """Return ``func(memory)`` under the page's lock, then commit what it logged.

        The commit happens even when ``func`` raises after writing part of its work (a
        refused proposal among accepted ones), as closing a Memory would.
        """
        with self.using() as memory:
            try:
                return func(memory)
            finally:
                self.commit()

    def commit(self) -> bool:
        """Commit the Home's changes since the last commit, as :meth:`Memory.close` does; True if committed.

        A database or a Home that is not a git repository has nothing to commit. The
        salience sidecar is flushed first (closing a Memory flushes it too).
        """
        with self._lock:
            self.memory.salience.flush()
            head = self._head_seq()
            if head <= self._committed:
                return False
            since, self._committed = self._committed, head
            home = self.home
            if home is None or not (home.root / ".git").is_dir():
                return False
            from agent_memory.sync.commits import commit_message

            with home.writer_lock():
                message = commit_message(self.memory.log, since_seq=since)
                started = time.time()
                made = bool(message) and home.autocommit(message, since=self._since)
                if made:
                    self._since = started
                return made

    def close(self) -> None:
        """Close the Memory (index bookkeeping, salience, the final commit)."""
        with self._lock:
            self.memory.close()

    def _head_seq(self) -> int:
        head = self.memory.log.last()
        return head.seq if head is not None else 0

    def describe(self) -> dict[str, Any]:
        """Return ``{"label", "actor", "home"}`` for the page header (``home``: a Home, not a database)."""
        return {"label": self.label, "actor": self.memory.actor, "home": self.home is not None}
