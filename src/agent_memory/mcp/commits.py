"""Commit a served Home's writes to git while the MCP server runs, once it has been idle a moment.

A CLI command opens a :class:`~agent_memory.memory.Memory`, writes and closes it, and the
close commits (``agent-memory: put x3, …``). The MCP server holds one Memory for its whole
life, so without this its writes would reach git only when it stops — a crash, a killed
client or a server left running for days would leave them uncommitted.

Timing (DESIGN.md §3 "a folder that is also a git repository"): after a write tool call the
:class:`Committer` waits until no write has come for ``delay`` seconds (default
:data:`COMMIT_DELAY`) and then commits everything the log gained since its last commit, in one
commit named by :func:`~agent_memory.sync.commits.commit_message`. A steady stream of writes is still
committed at least every :data:`LONGEST_WAIT` seconds. A commit costs a ``git add -A`` and a
``git status`` over the whole tree: ``bench/commits.py`` measured 0.1 s on a new Home, 0.4 s at
2,000 notes and 1.9 s at 20,000 — 43 times the ``remember`` it follows (docs/benchmarks.md,
"MCP commits") — so committing after every call would make a busy agent wait on git; one
commit per burst costs what one CLI command's commit costs.

Invariants:

- a commit holds the Home's writer lock (:meth:`Home.writer_lock
  <agent_memory.home.Home.writer_lock>`), so it never seals half a write, and runs on its own
  thread, so no tool call ever waits for git beyond that lock;
- :meth:`Home.autocommit <agent_memory.home.Home.autocommit>` never commits during an
  unfinished merge, rebase or cherry-pick, and a git failure never reaches a tool call: the
  changes wait in the working tree for the next commit (or the one the server makes on stop);
- the log position only advances past entries that a commit took, so a refused commit's
  actions are named by the next one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from agent_memory.errors import AgentMemoryError

if TYPE_CHECKING:
    from agent_memory.home import Home
    from agent_memory.log.base import OperationLog

__all__ = ["COMMIT_DELAY", "LONGEST_WAIT", "Committer"]

COMMIT_DELAY = 2.0
"""Seconds without a write before the server commits (``serve --commit-delay``)."""
LONGEST_WAIT = 30.0
"""Seconds after the first uncommitted write by which a commit is made even if writes go on."""

_log = logging.getLogger(__name__)


class Committer:
    """Commit a Home's new log entries on a background thread after each burst of writes.

    Call :meth:`wrote` after every write tool call; :meth:`close` stops the thread (the
    server's :meth:`Memory.close <agent_memory.memory.Memory.close>` commits what is left).

    Args:
        home: The served Home (its git repository, writer lock and log).
        log: The Home's operation log, as the served Memory holds it.
        delay: Seconds without a write before a commit (≥ 0; 0 commits right after each call,
            still off the caller's thread).
        longest: Seconds after the first uncommitted write by which a commit is made.
        clock: Monotonic clock in seconds (injectable for tests).

    Raises:
        AgentMemoryError: ``delay`` or ``longest`` is negative (field named).
    """

    def __init__(
        self,
        home: Home,
        log: OperationLog,
        *,
        delay: float = COMMIT_DELAY,
        longest: float = LONGEST_WAIT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        for name, value in (("delay", delay), ("longest", longest)):
            if not value >= 0:
                raise AgentMemoryError(f"must be 0 or more seconds, got {value!r}", field=name)
        self.home = home
        self.log = log
        self.delay = delay
        self.longest = max(longest, delay)
        self._clock = clock
        head = log.last()
        self._committed_seq = head.seq if head else 0
        self._since = time.time()  # files changed from here on are the server's to commit
        self._first: float | None = None  # time of the first write not yet committed
        self._last = 0.0  # time of the latest write
        self._stopping = False
        self._changed = threading.Condition()
        self.commits = 0
        """Commits made so far (for the server's own bookkeeping and tests)."""
        self._thread = threading.Thread(target=self._run, name="agent-memory-committer", daemon=True)
        self._thread.start()

    def wrote(self) -> None:
        """Note that a write tool call finished: commit once no write has come for ``delay`` seconds."""
        with self._changed:
            now = self._clock()
            self._last = now
            if self._first is None:
                self._first = now
            self._changed.notify()

    def close(self, timeout: float = 30.0) -> None:
        """Stop the thread, letting a commit in progress finish (waits at most ``timeout`` seconds).

        Writes not yet committed are left to the caller (the server's Memory commits them on close).
        """
        with self._changed:
            self._stopping = True
            self._changed.notify()
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._stopping and self._first is None:
                    self._changed.wait()
                while not self._stopping and self._first is not None:
                    due = min(self._last + self.delay, self._first + self.longest)
                    wait = due - self._clock()
                    if wait <= 0:
                        break
                    self._changed.wait(wait)
                if self._stopping:
                    return
                self._first = None
            try:
                self.commit_now()
            except Exception:  # the thread must outlive any one failed commit
                _log.exception("agent-memory: committing the Home's writes failed")

    def commit_now(self) -> bool:
        """Commit what the log gained since the last commit, under the writer lock; never raise.

        Returns:
            True when a commit was made; False when nothing was logged since, git is absent,
            the Home is not a repository, a merge is unfinished or git refused (logged as a
            warning; the next commit takes the changes along).
        """
        from agent_memory.sync.commits import commit_message

        if not (self.home.root / ".git").is_dir():
            return False  # not a repository (made with --no-git): read nothing
        try:
            with self.home.writer_lock():
                head = self.log.last()
                if head is None or head.seq <= self._committed_seq:
                    return False
                message = commit_message(self.log, since_seq=self._committed_seq)
                started = time.time()
                made = bool(message) and self.home.autocommit(message, since=self._since)
                if made:
                    self._committed_seq, self._since = head.seq, started
                    self.commits += 1
                return made
        except (AgentMemoryError, OSError) as exc:
            _log.warning("agent-memory: the Home's writes stay uncommitted for now: %s", exc)
            return False
