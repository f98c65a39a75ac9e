"""Issue 20 case 2: an erase killed after its first tombstone ends with its receipt.

A child process erases three records and is killed by SIGKILL right after the store wrote
the second tombstone (a deterministic point inside step 3, where the issue's run lost its
receipts). Then the next open finishes the erasure: every tombstone has an ``erase`` entry
naming it, the third record is erased too, no erased byte is left in ``notes/``, the
archive or the views, and running ``erase`` again names the receipt.
"""

from __future__ import annotations

import signal
from datetime import UTC, datetime
from pathlib import Path

import pytest
from reliability_kit import killed_after

from agent_memory.errors import LifecycleError
from agent_memory.home import Home
from agent_memory.jobs.views import render
from agent_memory.memory import Memory

T0 = datetime(2026, 11, 29, 9, tzinfo=UTC)
TEXTS = [f"Private note {n}: the door code is zq{n}{n}41 on the north side." for n in range(3)]

ERASE = (
    "from agent_memory.memory import Memory\n"
    "Memory.open(argv[0]).erase(argv[1:], reason='user request', authority='ada')"
)
"""The child's operation; it is killed right after the store wrote the second tombstone."""


@pytest.fixture
def killed(tmp_path: Path) -> tuple[Path, list[str]]:
    home = Home.init(tmp_path / "home", git=False, timezone="UTC", now=T0)
    with Memory.open(home.root) as memory:
        ids = sorted(memory.remember(text, source="chat", now=T0).record_id for text in TEXTS)
    render(home)
    child = killed_after("agent_memory.stores.files:FileStore.erase", 2, ERASE, str(home.root), *ids)
    assert child.returncode == -signal.SIGKILL, child.stderr
    return home.root, ids


def _erased_and_receipted(root: Path) -> tuple[set[str], set[str]]:
    home = Home.open(root)
    erased = {r.id for r in home.store().list() if r.redacted}
    receipted = {rid for e in home.log().entries() if e.action == "erase" for rid in e.record_ids}
    return erased, receipted


def test_the_kill_leaves_tombstones_and_an_intent_but_no_receipt_yet(killed: tuple[Path, list[str]]) -> None:
    root, _ = killed
    erased, receipted = _erased_and_receipted(root)
    assert len(erased) == 2 and not receipted
    actions = [e.action for e in Home.open(root).log().entries()]
    assert "erase-intent" in actions and "erase" not in actions


def test_the_next_open_finishes_the_erasure_with_a_receipt_for_every_tombstone(
    killed: tuple[Path, list[str]],
) -> None:
    root, ids = killed
    with Memory.open(root):
        pass
    erased, receipted = _erased_and_receipted(root)
    assert erased == set(ids) and erased <= receipted
    everything = b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)
    for text in TEXTS:
        assert text.encode() not in everything
    assert not any((root / ".cache" / "erase-journal").glob("*.json"))
    (receipt,) = [e for e in Home.open(root).log().entries() if e.action == "erase"]
    assert {h["holder_ref"] for h in receipt.details["holders"]} >= {"notes/", "views", "indexes"}
    assert all(h["result"] == "completed" for h in receipt.details["holders"] if h["holder_ref"] == "notes/")
    with (
        Memory.open(root) as memory,
        pytest.raises(LifecycleError, match="already erased \\(receipt memerase-"),
    ):
        memory.erase(ids[:1], reason="again", authority="ada")


def test_doctor_warns_of_an_interrupted_erasure_until_the_next_open(killed: tuple[Path, list[str]]) -> None:
    from agent_memory.doctor.diagnose import diagnose

    root, _ = killed
    (intents,) = [c for c in diagnose(Home.open(root)) if c.name == "intents"]
    assert intents.warning and "interrupted before its receipt" in intents.details[0]
    with Memory.open(root):
        pass
    (intents,) = [c for c in diagnose(Home.open(root)) if c.name == "intents"]
    assert intents.ok and not intents.warning
