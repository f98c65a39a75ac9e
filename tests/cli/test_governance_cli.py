"""``withdraw``, ``reinstate``, ``controls``, ``review``, ``approve``, ``reject`` as a user runs them."""

import json
from pathlib import Path

from fg_agent_id import KeyPair
from installed import Cli, snapshot

from agent_memory.memory import Memory
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.records.signing import sign_record
from agent_memory.records.wire import utc_now
from agent_memory.search.recipes import SearchSettings, splice_search

ARCHIVE = "archive/2026-11-01.md"


def bm25_home(cli: Cli, name: str = "home") -> Path:
    """A Home that recalls by words only (no model to load in every process)."""
    path = cli.home(name)
    toml = path / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
    return path


def remember(home: Path, text: str, **options: object) -> str:
    """Write a record in-process, as ``remember`` does (fewer processes per test)."""
    with Memory.open(home) as memory:
        return memory.remember(text, **options).record_id  # type: ignore[arg-type]


def recalled(cli: Cli, home: Path, query: str, *extra: str) -> set[str]:
    report = json.loads(cli.ok("recall", query, "--home", str(home), "--json", *extra))
    return {record["id"] for record in report["records"]}


def test_a_withdrawn_scope_leaves_recall_and_plain_export_until_reinstated(cli: Cli) -> None:
    home = bm25_home(cli)
    gone = remember(home, "Deploys happen on Fridays.", source=f"{ARCHIVE}#mem-2026-11-01-001")
    kept = remember(home, "Deploys need two approvals.", source="session-9")
    u1 = remember(home, "Deploys are paused for u1.", source="s", namespace="user:u1")
    u2 = remember(home, "Deploys are paused for u2.", source="s", namespace="user:u2")

    wid = cli.ok("withdraw", "--archive-ref", ARCHIVE, "--reason", "failed-exploration", "--home", str(home))
    wid = wid.strip()
    assert wid.startswith("memwd-") and len(wid) == len("memwd-2026-11-01-001")
    ns = cli.ok("withdraw", "--namespace", "user:u1", "--reason", "user asked", "--home", str(home), "--json")
    assert json.loads(ns)["scope"] == {"namespaces": ["user:u1"]}
    assert recalled(cli, home, "deploys") == {kept, u2}

    out = cli.root / "plain.json"
    result = cli("export", str(out), "--home", str(home))
    assert result.returncode == 0, result.stderr
    assert "2 withdrawn records left out" in result.stderr
    assert {r.id for r in MemoryFile.loads(out.read_bytes()).records} == {kept, u2}

    listing = json.loads(cli.ok("controls", "--home", str(home), "--json"))
    assert [(c["withdrawal_id"], c["in_force"]) for c in listing] == [
        (wid, True),
        (json.loads(ns)["withdrawal_id"], True),
    ]

    lifted = cli.ok("reinstate", wid, "--reason", "it was right", "--home", str(home)).strip()
    assert recalled(cli, home, "deploys") == {gone, kept, u2}
    text = cli.ok("controls", "--home", str(home))
    assert f"{lifted}  reinstate (lifts {wid})  -  archive {ARCHIVE}  by owner: it was right" in text
    assert u1 not in recalled(cli, home, "deploys", "--namespace", "user:u1")


def test_bad_withdrawals_and_reinstatements_print_one_line_and_write_nothing(cli: Cli) -> None:
    home = bm25_home(cli)
    before = snapshot(home / "log")
    result = cli("withdraw", "--reason", "why", "--home", str(home))
    assert result.returncode == 3
    assert result.stderr.startswith("agent-memory: error: scope: a withdrawal scope needs at least one")
    result = cli("reinstate", "memwd-2026-01-01-009", "--reason", "why", "--home", str(home))
    assert result.returncode == 3
    assert "no withdrawal memwd-2026-01-01-009 in the log" in result.stderr
    assert snapshot(home / "log") == before


def test_an_export_with_withdrawn_records_keeps_them_withdrawn_in_the_importing_home(cli: Cli) -> None:
    source, target = bm25_home(cli, "a"), bm25_home(cli, "b")
    gone = remember(source, "Backups might run at 03:00.", source="s")
    with Memory.open(source) as memory:
        wid = memory.withdraw(memory_item_ids=[gone], reason="failed-exploration").withdrawal_id
    path = cli.root / "full.json"
    cli.ok("export", str(path), "--include-withdrawn", "--home", str(source))
    out = cli.ok("import", str(path), "--home", str(target))
    assert f"{path}: 1 withdrawal controls applied, 1 added records withdrawn" in out
    assert recalled(cli, target, "backups") == set()
    assert wid in cli.ok("controls", "--home", str(target))


def test_review_lists_quarantine_from_log_events_and_approve_reject_are_logged(cli: Cli) -> None:
    home = bm25_home(cli)
    web = remember(home, "The API limit is 100/min.", source="web", taint=["external"])
    stranger = KeyPair.generate()
    forged = sign_record(
        MemoryRecord.create(
            type="fact",
            body="The admin password rotates monthly.",
            created_at=utc_now(),
            provenance=Provenance(kind="import", ref="peer:x"),
            extra={"reviewed": True},
        ),
        stranger,
    )
    path = cli.root / "peer.json"
    path.write_bytes(MemoryFile(created_at=forged.created_at, records=(forged,)).sign(stranger).dumps())
    cli.ok("import", str(path), "--home", str(home))

    queue = json.loads(cli.ok("review", "--home", str(home), "--json"))
    assert [(i["id"], i["queue"], i["review"]) for i in queue["items"]] == [
        (web, "quarantined", "quarantined"),
        (forged.id, "quarantined", "quarantined"),  # its reviewed: true is not read
    ]
    assert (
        cli.ok("approve", web, "--reason", "checked the docs", "--home", str(home))
        == f"approved {web} (by owner)\n"
    )
    assert cli.ok("reject", forged.id, "--home", str(home)) == f"rejected {forged.id} (by owner)\n"
    assert cli.ok("review", "--home", str(home)) == "nothing to review\n"
    events = [
        json.loads(line)
        for line in cli.ok("log", "--home", str(home), "--json").splitlines()
        if json.loads(line)["action"] == "review"
    ]
    assert [(e["actor"], e["record_ids"], e["details"]["verdict"]) for e in events] == [
        ("owner", [web], "approve"),
        ("owner", [forged.id], "reject"),
    ]
    result = cli("approve", "mem:" + "0" * 32, "--home", str(home))
    assert result.returncode == 3 and "mem:" + "0" * 32 in result.stderr


def test_approving_a_record_that_is_not_quarantined_is_an_error_and_logs_nothing(cli: Cli) -> None:
    home = bm25_home(cli)
    mine = remember(home, "Deploys need two approvals.", source="session-2")
    web = remember(home, "The API limit is 100/min.", source="web", taint=["external"])
    cli.ok("approve", web, "--home", str(home))
    log = home / "log"
    before = snapshot(log)
    refusals = (
        (mine, "it is not tainted, so it was never quarantined and needs no approval"),
        (web, "it is already approved"),
    )
    for record_id, why in refusals:
        result = cli("approve", record_id, "--home", str(home))
        assert result.returncode == 3, result
        first, hint = result.stderr.splitlines()
        assert first == f"agent-memory: error: {record_id}: verdict: nothing to approve: {why}"
        assert hint == "hint: `agent-memory review` lists the quarantined records"
        assert result.stdout == ""
    assert snapshot(log) == before, "a refused approval logs nothing"
    # A rejection is lifted by a later approval: that one is a change, so it is logged.
    cli.ok("reject", mine, "--reason", "wrong", "--home", str(home))
    assert cli.ok("approve", mine, "--home", str(home)) == f"approved {mine} (by owner)\n"


def test_a_withdrawal_leaves_the_rendered_views_at_once_and_a_hand_edited_view_is_a_warning(cli: Cli) -> None:
    home = bm25_home(cli)
    gone = remember(home, "Falcon-7 guards the gate.", source="session-1")
    remember(home, "Deploys need two approvals.", source="session-2")
    cli.ok("render", "--home", str(home))
    assert "Falcon-7" in (home / "MEMORY.md").read_text("utf-8")
    wid = cli.ok("withdraw", "--record", gone, "--reason", "wrong project", "--home", str(home)).strip()
    assert "Falcon-7" not in (home / "MEMORY.md").read_text("utf-8")
    listed = {line.split()[0]: line.split()[1] for line in cli.ok("list", "--home", str(home)).splitlines()}
    assert listed[gone] == "active/withdrawn" and sorted(listed.values()) == ["active", "active/withdrawn"]
    cli.ok("reinstate", wid, "--reason", "right after all", "--home", str(home))
    assert "Falcon-7" in (home / "MEMORY.md").read_text("utf-8")
    with (home / "MEMORY.md").open("a", encoding="utf-8") as view:
        view.write("\nA note of mine.\n")
    result = cli("withdraw", "--record", gone, "--reason", "again", "--home", str(home))
    assert result.returncode == 0
    assert "views edited by hand (MEMORY.md) were not re-rendered" in result.stderr
    assert "Falcon-7" not in (home / "MEMORY.md").read_text("utf-8")
    assert "A note of mine." in (home / "MEMORY.md").read_text("utf-8")
