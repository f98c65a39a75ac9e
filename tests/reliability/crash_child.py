"""The writer that the crash tests kill: a zygote that forks one child per kill (issue 11 item 2).

Run as ``python crash_child.py ACK_FD``. The zygote imports agent-memory once, then reads
commands from stdin, one per line:

- ``run OP HOME CYCLE SEED``: fork a child that opens the Home and performs OP in a loop
  until it is killed; the zygote answers ``pid N``;
- ``wait PID``: reap that child (after the test's SIGKILL); answers ``dead STATUS``;
- ``quit``: exit.

A child reports on the pipe ``ACK_FD`` with one JSON line per event, written in one
``write`` (atomic for a pipe, under 4 KiB) *after* the operation returned: ``ready`` once the
Home is open, then one acknowledgement per completed write (``{"cycle", "op", "kind", …}``).
What is acknowledged was done; the test checks that it survives the kill. An exception in a
child is reported as ``{"kind": "error"}`` and ends it: any error is a finding.

Forking from a warm zygote keeps a kill cycle near the time of the operation itself (a fresh
interpreter would spend most of it importing), so the soak's 200 kills per operation fit.
"""

from __future__ import annotations

import json
import os
import random
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_memory.home import Home
from agent_memory.jobs.archive import archive_inbox
from agent_memory.jobs.inbox import capture
from agent_memory.memory import Memory

WORDS = ("staging", "backup", "deploy", "lighthouse", "tea", "printer", "vpn", "budget", "cluster", "ticket")


class Child:
    """One child's loop: an operation repeated until SIGKILL, each completion acknowledged."""

    def __init__(self, op: str, home: Path, cycle: int, seed: int, ack_fd: int) -> None:
        self.op = op
        self.home = home
        self.cycle = cycle
        self.random = random.Random(seed)  # noqa: S311 - test data, reproducible
        self.ack_fd = ack_fd
        self.memory: Memory | None = None

    def ack(self, kind: str, **data: Any) -> None:
        line = json.dumps({"cycle": self.cycle, "op": self.op, "kind": kind, **data}) + "\n"
        os.write(self.ack_fd, line.encode("utf-8"))

    def words(self, count: int = 4) -> str:
        return " ".join(self.random.choice(WORDS) for _ in range(count))

    def run(self) -> None:
        self.memory = Memory.open(self.home)
        self.ack("ready")
        step = OPS[self.op]
        number = 0
        while True:
            number += 1
            step(self, self.memory, number)


def remember(child: Child, memory: Memory, number: int) -> None:
    text = f"Crash {child.cycle}-{number}: the {child.words()} note."
    result = memory.remember(text, source=f"crash:{child.cycle}:{number}")
    child.ack("remember", id=result.record_id, deduped=result.deduped)


def supersede(child: Child, memory: Memory, number: int) -> None:
    subject = f"host:{child.cycle % 3}"
    text = f"Host {subject} runs on db-{child.cycle}-{number}."
    if number % 2:
        result = memory.remember(text, source=f"crash:{child.cycle}:{number}", kind="state", subject=subject)
        child.ack("state", id=result.record_id, superseded=result.superseded)
        child.last = result.record_id  # type: ignore[attr-defined]
    else:
        old = child.last  # type: ignore[attr-defined]
        result = memory.supersede(
            old,
            text + " (corrected)",
            source=f"crash:{child.cycle}:{number}",
            reason="corrected in a crash test",
        )
        child.ack("state", id=result.record_id, superseded=result.superseded)
        child.last = result.record_id  # type: ignore[attr-defined]


def consolidate_accept(child: Child, memory: Memory, number: int) -> None:
    stem = f"The nightly build of project {child.cycle}-{number} starts at two in the morning on the"
    ids = [
        memory.remember(f"{stem} build server", source=f"crash:{child.cycle}:{number}").record_id,
        memory.remember(f"{stem} main build server", source=f"crash:{child.cycle}:{number}").record_id,
    ]
    child.ack("remember", ids=ids)
    report = memory.maintenance.consolidate()
    child.ack("consolidate", proposals=[p.id for p in report.proposals])
    outcome = memory.proposals.accept(everything=True)
    child.ack("accept", done=outcome.done, written=sorted({v.id for v in outcome.written}))


def archive(child: Child, memory: Memory, number: int) -> None:
    home = Home.open(child.home)
    item = capture(home, f"Captured {child.cycle}-{number}: {child.words()}.", source=f"crash:{child.cycle}")
    child.ack("capture", id=item.id)
    if number % 3 == 0:
        result = archive_inbox(home)
        child.ack("archive", ids=list(result.item_ids))


def erase(child: Child, memory: Memory, number: int) -> None:
    text = f"Erasable {child.cycle}-{number} zq{child.random.getrandbits(64):016x} {child.words()}."
    record_id = memory.remember(text, source=f"crash:{child.cycle}:{number}").record_id
    child.ack("remember", id=record_id, text=text)
    receipt = memory.erase([record_id], reason="crash test", authority="reliability suite")
    child.ack("erase", id=record_id, erasure_id=receipt.erasure_id, text=text)


def reindex(child: Child, memory: Memory, number: int) -> None:
    result = memory.remember(
        f"Indexed {child.cycle}-{number}: {child.words(6)}.", source=f"crash:{child.cycle}"
    )
    child.ack("remember", id=result.record_id)
    if number % 2 == 0:
        count = memory.catalog.rebuild()
        memory.catalog.flush()
        memory.log.append("reindex", actor=memory.actor, details={"records": count, "rebuilt": True})
        child.ack("reindex", records=count)


def remember_many(child: Child, memory: Memory, number: int) -> None:
    # Twelve texts in batches of five: a text met twice, and a state record its successor supersedes.
    items: list[dict[str, Any]] = [
        {"text": f"Batch {child.cycle}-{number}-{i}: the {child.words()} note.", "source": f"crash:{i}"}
        for i in range(10)
    ]
    items.insert(6, dict(items[2], source="crash:again"))
    subject = f"host:{child.cycle}-{number}"
    items.insert(3, {"text": f"{subject} is db-1.", "source": "crash:s", "kind": "state", "subject": subject})
    items.append({"text": f"{subject} is db-2.", "source": "crash:s", "kind": "state", "subject": subject})
    results = memory.remember_many(items, batch=5)
    ids = [r.record_id for r in results if not isinstance(r, Exception)]
    assert len(ids) == len(items), results
    child.ack("remember", ids=ids)
    last = results[-1]
    assert not isinstance(last, Exception)
    child.ack("state", id=last.record_id, superseded=last.superseded)


OPS: dict[str, Callable[[Child, Memory, int], None]] = {
    "remember": remember,
    "remember-many": remember_many,
    "supersede": supersede,
    "consolidate-accept": consolidate_accept,
    "archive-inbox": archive,
    "erase": erase,
    "reindex": reindex,
}


def _child(op: str, home: str, cycle: str, seed: str, ack_fd: int) -> None:
    child = Child(op, Path(home), int(cycle), int(seed), ack_fd)
    try:
        child.run()
    except BaseException as exc:  # any escape is a finding: report it, then end the child
        child.ack("error", error=repr(exc), trace=traceback.format_exc()[-3000:])
        os._exit(1)


def main() -> None:
    """Serve ``run``/``wait``/``quit`` commands from stdin (see the module docstring)."""
    ack_fd = int(sys.argv[1])
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        if words[0] == "run":
            pid = os.fork()
            if pid == 0:
                _child(*words[1:5], ack_fd)
                os._exit(0)
            print(f"pid {pid}", flush=True)
        elif words[0] == "wait":
            _, status = os.waitpid(int(words[1]), 0)
            print(f"dead {status}", flush=True)


if __name__ == "__main__":
    main()
