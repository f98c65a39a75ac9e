"""kill -9 in the middle of import, migrate, accept and revert (issue 20 "Interrupted operations finish").

Each test runs one operation in a child process that SIGKILLs itself right after the n-th
write of a chosen kind (:func:`reliability_kit.killed_after`, the harness the interrupted
erase uses too), for several n, then checks what the kill left:

- ``doctor`` is clean, or ``doctor --fix`` makes it clean touching only derived state
  (:func:`reliability_kit.doctor_after_kill`, shared with the random-kill crash test), and
  every note verifies;
- the next open finishes what has a journal (an accept or revert: a journaled batch; an
  erasure an import carried: its erase journal), and every tombstone has its receipt;
- asking again finishes the rest and writes nothing twice: an import puts what the Home still
  lacks, a migration continues from where it stopped, an accept or revert is already done.

A migration's target is not in use while it fills: killed part way, its copy is incomplete
(every note verifies, but a subject may show two active values until the retired version
arrives) and running migrate again completes it; the checks above then hold.
"""

from __future__ import annotations

import signal
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from reliability_kit import doctor_after_kill, killed_after, make_home, receipts_for_every_tombstone

from agent_memory.doctor.diagnose import diagnose
from agent_memory.errors import ProposalError
from agent_memory.home import Home
from agent_memory.jobs.verdicts import verdicts
from agent_memory.memory import Memory
from agent_memory.records.memory_file import MemoryFile
from agent_memory.stores.verified import read_verified
from agent_memory.transfer.exchange import export_memory_file
from agent_memory.transfer.migrate import history_digest, migrate_urls

T0 = datetime(2026, 11, 29, 9, tzinfo=UTC)
PUT = "agent_memory.stores.files:FileStore.put"
ERASE = "agent_memory.stores.files:FileStore.erase"
STEM = "The nightly build of project {} starts at two in the morning on the"


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # the child inherits it


def _trusting(target: Path, source: Path) -> None:
    toml = target / "memory.toml"
    signer = Home.open(source).signer()
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text.replace("trusted_signers = []", f'trusted_signers = ["{signer}"]'), encoding="utf-8")


def _verified(root: Path) -> None:
    home = Home.open(root)
    reading = read_verified(home.store(), home_signer=home.signer(), trusted=home.settings.trusted_signers)
    assert not reading.refused, [str(r) for r in reading.refused]


def _after_kill(root: Path) -> None:
    doctor_after_kill(root)
    with Memory.open(root):  # finishes a journaled batch or an erasure the kill interrupted
        pass
    _verified(root)
    receipts_for_every_tombstone(root)
    assert not any((root / ".cache" / "write-journal").glob("*.json")), "a batch is still open"


def _export(root: Path) -> bytes:
    home = Home.open(root)
    made = export_memory_file(home.store(), keys=home.identity(), log=home.log(), home_signer=home.signer())
    return made.dumps()


# ---------------------------------------------------------------------- import


IMPORT = (
    "from agent_memory.memory import Memory\n"
    "from agent_memory.records.memory_file import MemoryFile\n"
    "with open(argv[1], 'rb') as handle:\n"
    "    Memory.open(argv[0]).import_file(MemoryFile.loads(handle.read()), path=argv[1])\n"
)


def _import_case(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """Home B imported A's early export; A then erased one record and remembered three: A's late export."""
    a, b = make_home(tmp_path / "a"), make_home(tmp_path / "b")
    _trusting(b, a)
    with Memory.open(a) as memory:
        gone = memory.remember(
            "The old gateway is vpn-1 behind door zq4711.", source="chat", now=T0
        ).record_id
        memory.remember("The build server is ci-7.", source="chat", now=T0)
    early = tmp_path / "early.json"
    early.write_bytes(_export(a))
    with Memory.open(b) as memory:
        memory.import_file(MemoryFile.loads(early.read_bytes()), path=str(early))
    with Memory.open(a) as memory:
        memory.erase([gone], reason="wrong value", authority="ada", now=T0 + timedelta(hours=1))
        new = [
            memory.remember(
                f"Fact {n} of the late export.", source="chat", now=T0 + timedelta(hours=2)
            ).record_id
            for n in range(3)
        ]
    late = tmp_path / "late.json"
    late.write_bytes(_export(a))
    return b, late, {"gone": gone, **{f"new{n}": rid for n, rid in enumerate(new)}}


@pytest.mark.parametrize(("point", "calls"), [(PUT, 1), (PUT, 2), (ERASE, 1)])
def test_an_import_killed_part_way_is_finished_by_importing_again(
    tmp_path: Path, point: str, calls: int
) -> None:
    b, late, ids = _import_case(tmp_path)
    child = killed_after(point, calls, IMPORT, str(b), str(late))
    assert child.returncode == -signal.SIGKILL, child.stderr
    _after_kill(b)
    with Memory.open(b) as memory:
        report = memory.import_file(MemoryFile.loads(late.read_bytes()), path=str(late))
        assert set(report.added) | set(report.skipped) >= {ids["new0"], ids["new1"], ids["new2"]}
        assert memory.get(ids["gone"]).redacted
        for n in range(3):
            assert memory.get(ids[f"new{n}"]).body == f"Fact {n} of the late export."
    _verified(b)
    receipts_for_every_tombstone(b)
    log = list(Home.open(b).log().entries())
    assert len([e for e in log if e.action == "erase" and ids["gone"] in e.record_ids]) == 1
    assert log[-1].action == "import"


# ---------------------------------------------------------------------- migrate


MIGRATE = "from agent_memory.transfer.migrate import migrate_urls\nmigrate_urls(argv[0], argv[1])\n"


@pytest.mark.parametrize("calls", [1, 3])
def test_a_migration_killed_part_way_continues_from_there_when_run_again(tmp_path: Path, calls: int) -> None:
    a, b = make_home(tmp_path / "a"), make_home(tmp_path / "b")
    _trusting(b, a)
    with Memory.open(a) as memory:
        memory.remember("Staging runs on db-3.", source="t", kind="state", subject="host:staging", now=T0)
        memory.remember("Staging runs on db-4.", source="t", kind="state", subject="host:staging", now=T0)
        for n in range(3):
            memory.remember(f"Deploy fact number {n}.", source="t", now=T0)
    child = killed_after(PUT, calls, MIGRATE, f"home:{a}", f"home:{b}")
    assert child.returncode == -signal.SIGKILL, child.stderr
    # The copy is incomplete until migrate runs again (a target is not in use while it fills):
    # every note written verifies, and doctor names at most what the missing versions would
    # settle (a subject whose retired value has not arrived yet), never damage.
    _verified(b)
    failed = {c.name for c in diagnose(Home.open(b)) if not c.ok}
    assert failed <= {"state"}, failed
    report, _ = migrate_urls(f"home:{a}", f"home:{b}")
    # What the killed run wrote is kept, not rewritten: a history it finished is skipped, one it
    # began (the first version of a superseded value: ids are random, so either) is continued.
    assert report.verified and (report.skipped or report.extended)
    source, target = Home.open(a).store(), Home.open(b).store()
    for record in source.list():
        assert history_digest(target.history(record.id)) == history_digest(source.history(record.id))
    _after_kill(b)


# ---------------------------------------------------------------------- accept and revert


ACCEPT = "from agent_memory.memory import Memory\nMemory.open(argv[0]).proposals.accept([argv[1]])\n"
REVERT = "from agent_memory.memory import Memory\nMemory.open(argv[0]).proposals.revert(argv[1])\n"


def _merge_filed(tmp_path: Path) -> tuple[Path, str]:
    """A Home whose consolidation filed one near-duplicate merge (two supersedes: three puts to accept)."""
    root = make_home(tmp_path / "home")
    with Memory.open(root) as memory:
        memory.remember(f"{STEM.format(1)} build server", source="t", now=T0)
        memory.remember(f"{STEM.format(1)} main build server", source="t", now=T0)
        (pending,) = memory.maintenance.consolidate(now=T0 + timedelta(hours=1)).proposals
    return root, pending.id


def _verdicts(root: Path, proposal_id: str) -> list[str]:
    return [str(e["verdict"]) for e in verdicts(Home.open(root).log()).get(proposal_id, [])]


@pytest.mark.parametrize("calls", [1, 2])
def test_an_accept_killed_part_way_is_finished_by_the_next_open(tmp_path: Path, calls: int) -> None:
    root, proposal_id = _merge_filed(tmp_path)
    child = killed_after(PUT, calls, ACCEPT, str(root), proposal_id)
    assert child.returncode == -signal.SIGKILL, child.stderr
    _after_kill(root)
    assert _verdicts(root, proposal_id) == ["accepted"]
    with Memory.open(root) as memory:
        assert memory.proposals.accept([proposal_id]).refused  # already decided: nothing twice
        active = [r for r in memory.store.list() if r.state.value == "active"]
        assert len(active) == 1 and "build server" in active[0].body  # the merge, whole


@pytest.mark.parametrize("calls", [1, 2])
def test_a_revert_killed_part_way_is_finished_by_the_next_open(tmp_path: Path, calls: int) -> None:
    root, proposal_id = _merge_filed(tmp_path)
    with Memory.open(root) as memory:
        assert memory.proposals.accept([proposal_id], now=T0 + timedelta(hours=2)).done == [proposal_id]
    child = killed_after(PUT, calls, REVERT, str(root), proposal_id)
    assert child.returncode == -signal.SIGKILL, child.stderr
    _after_kill(root)
    assert _verdicts(root, proposal_id) == ["accepted", "reverted"]
    with Memory.open(root) as memory:
        with pytest.raises(ProposalError, match="already reverted"):
            memory.proposals.revert(proposal_id)
        active = sorted(r.body for r in memory.store.list() if r.state.value == "active")
        # Both originals are back (as correction records), the merged record is retired.
        assert active == sorted([f"{STEM.format(1)} build server", f"{STEM.format(1)} main build server"])
