"""Pending records through the installed command: review, show, accept, decline/reject (DESIGN.md §9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from installed import Cli, snapshot

from agent_memory.search.recipes import SearchSettings, splice_search

SUBJECT = "host:staging"


@pytest.fixture
def disputed(cli: Cli) -> tuple[Path, list[str]]:
    """A Home whose SUBJECT is disputed (first vs a tainted rival) with two values held back by it."""
    home = cli.home()
    toml = home / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
    ids = []
    for value, extra in (("2", ()), ("3", ("--taint", "external")), ("4", ()), ("5", ())):
        args = ("remember", f"Staging moved to db-{value}.", "--kind", "state", "--subject", SUBJECT)
        ids.append(cli.ok(*args, "--source", f"r{value}", *extra, "--home", str(home)).strip())
    return home, ids


def _pending_ids(cli: Cli, home: Path) -> list[str]:
    queue = json.loads(cli.ok("review", "--home", str(home), "--json"))
    return [item["id"] for item in queue["items"] if item["queue"] == "pending"]


def test_a_pending_record_is_shown_marked_and_accepted_once_the_dispute_is_resolved(
    cli: Cli, disputed: tuple[Path, list[str]]
) -> None:
    home, (first, rival, held, other) = disputed
    assert _pending_ids(cli, home) == [held, other]
    assert "accept ID writes one" in cli.ok("review", "--home", str(home))

    shown = cli("show", held, "--home", str(home))
    assert shown.returncode == 0 and shown.stderr.startswith(f"pending: {held} is not stored yet")
    assert shown.stdout.startswith("---\n") and "Staging moved to db-4." in shown.stdout
    wire = json.loads(cli.ok("show", held, "--home", str(home), "--json"))
    assert (wire["id"], wire["pending"]) == (held, True)

    before = snapshot(home)
    approved = cli("approve", held, "--home", str(home))
    assert approved.returncode == 3 and f"agent-memory accept {held}" in approved.stderr
    early = cli("accept", held, "--home", str(home))
    assert early.returncode == 1 and "still disputed" in early.stdout and "resolve" in early.stdout
    assert snapshot(home) == before

    settled = cli.ok("resolve", first, rival, "--reason", "checked the host", "--home", str(home), "--json")
    assert json.loads(settled) == {
        "records": [{"record_id": first, "state": "active"}, {"record_id": rival, "state": "superseded"}]
    }
    out = cli.ok("accept", held, "--home", str(home), "--json")
    assert json.loads(out) == {"done": [held], "refused": [], "written": [held, first]}
    assert _pending_ids(cli, home) == [other]
    listed = cli.ok("review", "--home", str(home))  # the reason as things stand, not as it was held back
    assert f"held back while subject {SUBJECT} was disputed; accept would supersede {held} now" in listed
    assert "is already disputed" not in listed
    record = json.loads(cli.ok("show", held, "--home", str(home), "--json"))
    assert (record["state"], record["supersedes"], "pending" in record) == ("active", first, False)
    assert json.loads(cli.ok("show", first, "--home", str(home), "--json"))["state"] == "superseded"
    assert not (home / "proposals" / "pending" / f"{held[4:]}.md").exists()


def test_decline_and_reject_drop_a_pending_record_with_a_logged_reason(
    cli: Cli, disputed: tuple[Path, list[str]]
) -> None:
    home, (_, _, held, other) = disputed
    assert cli.ok("decline", held, "--reason", "never used", "--home", str(home)) == f"declined  {held}\n"
    assert cli.ok("reject", other, "--reason", "typo", "--home", str(home)) == f"declined  {other}\n"
    assert _pending_ids(cli, home) == []
    assert list((home / "proposals" / "pending").glob("*.md")) == []
    events = [
        json.loads(line)
        for path in sorted((home / "log").glob("*.jsonl"))
        for line in path.read_text("utf-8").splitlines()
    ]
    declined = [
        (e["record_ids"], e["details"]["reason"])
        for e in events
        if e["details"].get("verdict") == "pending-declined"
    ]
    assert declined == [([held], "never used"), ([other], "typo")]
    gone = cli("show", held, "--home", str(home))
    assert gone.returncode == 3 and "no such record" in gone.stderr


def test_bad_ids_get_a_clear_refusal_and_change_nothing(cli: Cli, disputed: tuple[Path, list[str]]) -> None:
    home, (first, _, _, _) = disputed
    before = snapshot(home)
    for verb in ("accept", "decline"):
        result = cli(verb, "mem:00000000000000000000000000000000", "../x", first, "--home", str(home))
        assert result.returncode == 1, result.stderr
        lines = result.stdout.splitlines()
        assert lines[0] == (
            "refused   mem:00000000000000000000000000000000: no pending record has this id "
            "(`agent-memory review` lists the pending records)"
        )
        assert lines[1].startswith("refused   ../x: no pending record has this id")
        assert (
            lines[2]
            == f"refused   {first}: a stored record, not a pending one (approve/reject mark stored records)"
        )
    missing = cli("show", "mem:00000000000000000000000000000000", "--home", str(home))
    assert missing.returncode == 3 and missing.stderr.count("\n") <= 2
    assert snapshot(home) == before


def test_accept_and_decline_help_say_they_take_pending_records_too(cli: Cli) -> None:
    says = {"accept": "or write pending records (mem:…)", "decline": "or drop pending records"}
    for verb, does in says.items():
        shown = " ".join(cli.ok(verb, "--help").split())
        assert f"{verb.capitalize()} maintenance proposals" in shown and does in shown, shown
