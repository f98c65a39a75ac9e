"""Crash consistency: a writer killed by SIGKILL at random points keeps its acknowledged writes (issue 11 #2).

For each operation (remember, remember_many in batches, supersede, consolidate + accept,
capture + archive-inbox, erase, reindex) a child process repeats it in a loop and acknowledges
each completed write on a pipe; the test kills it at a random moment, :data:`KILLS_PER_OP`
times. After each kill:

- ``doctor`` is clean, or ``doctor --fix`` makes it clean by rebuilding derived state or
  rolling logged work forward: no note version file already there changes (an open intent
  adds the version it names), and ``archive/`` only gains the bytes an interrupted run's
  logged digests fix;
- every acknowledged write is there: the record, its supersede, the accepted proposal's
  versions, the captured or archived inbox line, the erasure (and no byte of the erased text
  in ``notes/``);
- the Home opens as a :class:`Memory` again, which finishes an interrupted erasure: a receipt
  is present for every tombstone (issue 20 item 2).

The children are forked from a warm zygote (``crash_child.py``) so a kill cycle costs about
as much as the operation itself.
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import IO, Any

import pytest
from reliability_kit import (
    KILLS_PER_OP,
    doctor_after_kill,
    make_home,
    receipts_for_every_tombstone,
    record_figures,
)

from agent_memory.home import Home
from agent_memory.memory import Memory
from agent_memory.records.record import State

CHILD = Path(__file__).with_name("crash_child.py")
OPS = ("remember", "remember-many", "supersede", "consolidate-accept", "archive-inbox", "erase", "reindex")
# How long after the child is ready the kill may come (seconds, uniform): about a few operations.
WINDOWS = {
    "remember": 0.5,
    "remember-many": 0.8,
    "supersede": 0.6,
    "consolidate-accept": 1.5,
    "archive-inbox": 0.6,
    "erase": 1.2,
    "reindex": 1.0,
}
FRESH_HOME_EVERY = 25  # cycles: keeps a soak's Home, and so each cycle's checks, small
READY_SECONDS = 120.0


class Zygote:
    """The ``crash_child.py`` zygote: forks children on request, reports their acknowledgements."""

    def __init__(self) -> None:
        self.read_fd, write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        self.process = subprocess.Popen(
            [sys.executable, str(CHILD), str(write_fd)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            pass_fds=(write_fd,),
        )
        os.close(write_fd)
        self.pending = b""

    def _ask(self, command: str) -> str:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(command + "\n")
        stdin.flush()
        return _readline(stdout)

    def run(self, op: str, home: Path, cycle: int, seed: int) -> int:
        return int(self._ask(f"run {op} {home} {cycle} {seed}").split()[1])

    def kill(self, pid: int) -> None:
        os.kill(pid, signal.SIGKILL)
        self._ask(f"wait {pid}")

    def acks(self, wait_for: str | None = None, timeout: float = READY_SECONDS) -> list[dict[str, Any]]:
        """Return the acknowledgements written so far (waiting for one of kind ``wait_for``)."""
        found: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while True:
            ready, _, _ = select.select([self.read_fd], [], [], 0 if wait_for is None else 0.05)
            if ready:
                try:
                    chunk = os.read(self.read_fd, 1 << 16)
                except BlockingIOError:
                    chunk = b""
                self.pending += chunk
            *lines, self.pending = self.pending.split(b"\n")
            found.extend(json.loads(line) for line in lines if line)
            if any(a["kind"] == "error" for a in found):
                return found
            if wait_for is None and not ready:
                return found
            if wait_for is not None and any(a["kind"] == wait_for for a in found):
                return found
            if time.monotonic() > deadline:
                pytest.fail(f"no {wait_for!r} from the child within {timeout} s")

    def close(self) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write("quit\n")
        stdin.close()
        self.process.wait(timeout=30)
        if self.process.stdout is not None:
            self.process.stdout.close()
        os.close(self.read_fd)


def _readline(stream: IO[str]) -> str:
    line = stream.readline()
    if not line:
        pytest.fail("the crash zygote exited")
    return line.strip()


# ---------------------------------------------------------------------- checks after a kill


def check_acknowledged(root: Path, acks: list[dict[str, Any]]) -> int:
    """Assert that every acknowledged write is in the Home; return how many were checked."""
    home = Home.open(root)
    store = home.store()
    log = list(home.log().entries())
    accepted = {
        str(e.details.get("proposal_id"))
        for e in log
        if e.action == "review" and e.details.get("verdict") == "accepted"
    }
    erasures = {str(e.details.get("erasure_id")) for e in log if e.action == "erase"}
    archive_text = "".join(p.read_text("utf-8") for p in sorted((root / "archive").glob("*.md")))
    inbox_text = (root / "inbox.md").read_text("utf-8")
    notes = b"".join(p.read_bytes() for p in (root / "notes").rglob("*.md"))
    checked = 0
    for ack in acks:
        kind = ack["kind"]
        if kind == "remember":
            for record_id in ack.get("ids", [ack.get("id")]):
                store.get(record_id)
        elif kind == "state":
            store.get(ack["id"])
            if ack["superseded"]:
                assert store.get(ack["superseded"]).state is not State.ACTIVE, ack
        elif kind == "consolidate":
            for proposal_id in ack["proposals"]:
                assert (root / "proposals" / "pending-consolidation" / f"{proposal_id}.json").exists(), ack
        elif kind == "accept":
            assert set(ack["done"]) <= accepted, ack
            for record_id in ack["written"]:
                store.get(record_id)
        elif kind == "capture":
            assert f"[{ack['id']}]" in inbox_text + archive_text, ack
        elif kind == "archive":
            assert all(f"[{item}]" in archive_text for item in ack["ids"]), ack
        elif kind == "erase":
            assert store.get(ack["id"]).redacted, ack
            assert ack["erasure_id"] in erasures, ack
            assert ack["text"].encode("utf-8") not in notes, ack
        elif kind not in ("ready", "reindex"):
            pytest.fail(f"unknown acknowledgement {ack}")
        checked += 1
    return checked


@pytest.mark.parametrize("op", OPS)
def test_a_writer_killed_at_random_points_loses_no_acknowledged_write(op: str, tmp_path: Path) -> None:
    seed = random.Random(op).getrandbits(32)  # noqa: S311 - test schedule, reproducible
    rng = random.Random(seed)  # noqa: S311 - test schedule, reproducible
    failed_checks: Counter[str] = Counter()
    repairs: Counter[str] = Counter()
    acknowledged = 0
    zygote = Zygote()
    root = tmp_path / "home-0"
    acks: list[dict[str, Any]] = []
    started = time.perf_counter()
    try:
        for cycle in range(KILLS_PER_OP):
            if cycle % FRESH_HOME_EVERY == 0:
                root = make_home(tmp_path / f"home-{cycle}")
                acks = []
            pid = zygote.run(op, root, cycle, rng.getrandbits(32))
            if rng.random() < 0.15:
                time.sleep(rng.uniform(0, 0.3))  # maybe while the child still opens the Home
            else:
                zygote.acks(wait_for="ready")
                time.sleep(rng.uniform(0, WINDOWS[op]))
            zygote.kill(pid)
            new = zygote.acks()
            errors = [a for a in new if a["kind"] == "error"]
            assert not errors, f"the child failed: {errors[0]['error']}\n{errors[0]['trace']}"
            acks.extend(new)
            found, fixed = doctor_after_kill(root)
            failed_checks.update(found)
            repairs.update(line.split(":")[0] for line in fixed)
            acknowledged += check_acknowledged(root, [a for a in new if a["kind"] != "ready"])
            # Older acknowledgements must survive later kills (and repairs) too.
            check_acknowledged(root, acks)
            with Memory.open(root) as memory:  # finishes an erasure the kill interrupted
                memory.status()
            receipts_for_every_tombstone(root)
    finally:
        zygote.close()
    record_figures(
        "crash",
        op=op,
        kills=KILLS_PER_OP,
        seed=seed,
        acknowledged=acknowledged,
        doctor_found=dict(failed_checks),
        doctor_fixed=dict(repairs),
        seconds=round(time.perf_counter() - started, 1),
    )
