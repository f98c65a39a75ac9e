"""`LogFold`: the one incremental reading of an operation log that its readers fold.

The withdrawal gate, the review book and metamemory each keep state computed from the log's
events (controls in force, review marks, retrieval and feedback events). Each holds a
:class:`LogFold`, which remembers how far it has read and feeds it the entries after that, up
to the head, once each and in order; another process's appends are seen at the next read.
When the log moved under it — shorter than what was read, or a different entry at the last
seq read, or a first new entry that does not link to it (cut, restored from an older copy,
rewritten) — the reader is told to start over and the log is read again from the start.
With ``verify``, an entry that does not link to the one before it raises (the gate fails
closed).

:func:`one_pass` makes a run of reads (a recall asking the review state of each candidate)
read each log's head once: inside a pass a fold that has caught up does not look again.

Invariant: a reader has folded exactly the entries up to :attr:`LogFold.seen`, in order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import KW_ONLY, dataclass, field

from agent_memory.errors import LogError
from agent_memory.log.base import GENESIS, LogEntry, OperationLog

__all__ = ["LogFold", "log_head", "one_pass"]

# The active pass: the log heads read in it, by ``id`` of the log (the log is kept alongside,
# so its id cannot be reused while the pass lasts).
_PASS: ContextVar[dict[int, tuple[OperationLog, LogEntry | None]] | None] = ContextVar(
    "agent_memory_review_pass", default=None
)


@contextmanager
def one_pass() -> Iterator[None]:
    """Within this block every :class:`LogFold` and :func:`log_head` read a log's head once.

    A recall asks for the review state of each candidate; without this, each question would
    first check the log's head (a file read for a Home, a round trip for PostgreSQL). Inside
    one pass the answers come from one consistent reading of the log, as of the first
    question. A pass opened inside another is the same pass. Only reads belong in a pass: a
    write inside it would not be seen by later questions of the same pass.
    """
    if _PASS.get() is not None:
        yield
        return
    token = _PASS.set({})
    try:
        yield
    finally:
        _PASS.reset(token)


def log_head(log: OperationLog) -> LogEntry | None:
    """Return ``log.last()``; inside :func:`one_pass`, read once per log for the whole pass.

    Raises:
        LogError: As ``log.last()`` does.
    """
    heads = _PASS.get()
    if heads is None:
        return log.last()
    if id(log) not in heads:
        heads[id(log)] = (log, log.last())
    return heads[id(log)][1]


@dataclass(eq=False)
class LogFold:
    """How far one reader has read a log; :meth:`catch_up` feeds it what came since.

    Args:
        log: The operation log read.
        step: Folds one entry into the reader's state (called in log order, once per entry).
        restart: Clears the reader's state when the log moved under it (then every entry is
            folded again from the start).
        verify: Raise when an entry does not link to the one before it, instead of folding it.
        in_pass: Read the head once per :func:`one_pass`; ``False`` for a reader that also
            writes (it must see its own appends), which reads the head at every call.

    Attributes:
        seen: The seq of the last entry folded (0 before any).
    """

    log: OperationLog
    step: Callable[[LogEntry], None]
    _: KW_ONLY
    restart: Callable[[], None]
    verify: bool = False
    in_pass: bool = True
    seen: int = field(default=0, init=False)
    _digest: str = field(default=GENESIS, init=False, repr=False)
    _pass: object | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def catch_up(self) -> tuple[LogEntry | None, bool]:
        """Fold the entries after :attr:`seen` up to the log's head; return ``(head, moved)``.

        ``moved`` is true when anything was folded or the reader started over.

        Raises:
            LogError: The log cannot be read, or (``verify``) an entry does not link to the
                one before it; what was folded before it stays folded.
        """
        current = _PASS.get() if self.in_pass else None
        with self._lock:
            if current is not None and current is self._pass:
                return log_head(self.log), False
            head, moved = self._catch_up()
            self._pass = current  # only once read whole: a refusal is raised again, never skipped
            return head, moved

    def _catch_up(self) -> tuple[LogEntry | None, bool]:
        head = log_head(self.log) if self.in_pass else self.log.last()
        moved = False
        if self.seen and (
            head is None or head.seq < self.seen or (head.seq == self.seen and head.digest != self._digest)
        ):
            moved = True
            self._start_over()
        if head is None or head.seq <= self.seen:
            return head, moved
        if not self._read(head.seq):
            self._start_over()
            self._read(head.seq)
        return head, True

    def _read(self, until: int) -> bool:
        """Fold the entries after :attr:`seen` up to ``until``; False when the first does not link to it."""
        first = self.seen
        for entry in self.log.entries(since_seq=first):
            if entry.seq > until:
                break  # appended after the head this read is judged at
            if entry.prev != self._digest:
                if first and entry.seq == first + 1:
                    return False
                if self.verify:
                    raise LogError(
                        f"log entry {entry.seq} does not follow the entry before it (its prev differs): "
                        "a line was edited, removed or inserted",
                        hint="the gate fails closed: nothing is exposed until the log is restored "
                        "(agent-memory log --verify names the line)",
                    )
            self.step(entry)
            self.seen, self._digest = entry.seq, entry.digest
        return True

    def _start_over(self) -> None:
        self.seen, self._digest = 0, GENESIS
        self.restart()
