"""``promote``, ``promotions``, ``promote-accept``, ``promote-reject`` as a user runs them (seed 000 §17)."""

import json
from pathlib import Path

from installed import Cli, snapshot

from agent_memory.memory import Memory
from agent_memory.search.recipes import SearchSettings, splice_search


def bm25_home(cli: Cli) -> Path:
    """A Home that recalls by words only (no model to load in every process)."""
    path = cli.home()
    toml = path / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
    return path


def test_a_promotion_waits_for_a_decision_and_is_applied_exactly_once(cli: Cli) -> None:
    home = bm25_home(cli)
    with Memory.open(home) as memory:
        lint = memory.remember("Always run the linter before pushing.", source="s").record_id
        friday = memory.remember("Deployed on a Friday once.", source="s").record_id
    conventions = (home / "conventions.md").read_bytes()

    pid = cli.ok("promote", lint, "--reason", "confirmed three times", "--home", str(home)).strip()
    other = json.loads(cli.ok("promote", friday, "--reason", "r", "--text", "Never deploy on Fridays.",
                              "--home", str(home), "--json"))  # fmt: skip
    assert pid.startswith("mempromo-") and other["rule"] == "Never deploy on Fridays."
    listed = json.loads(cli.ok("promotions", "--home", str(home), "--json"))
    assert [(p["id"], p["status"], p["source_record"]) for p in listed] == [
        (pid, "pending-review", lint),
        (other["id"], "pending-review", friday),
    ]
    assert (home / "conventions.md").read_bytes() == conventions  # a proposal applies nothing

    assert "accepted" in cli.ok("promote-accept", pid, "--reason", "yes", "--home", str(home))
    applied = (home / "conventions.md").read_bytes()
    assert (
        applied
        == conventions + f"- Always run the linter before pushing. (promoted from {lint} by {pid})\n".encode()
    )
    before = snapshot(home)
    again = cli("promote-accept", pid, "--reason", "again", "--home", str(home))
    assert again.returncode == 3 and "already accepted" in again.stderr
    assert snapshot(home) == before

    cli.ok("promote-reject", other["id"], "--reason", "a one-off incident", "--home", str(home))
    text = cli.ok("promotions", "--home", str(home), "--status", "rejected")
    assert text.split("  ")[:3] == [other["id"], "rejected", friday]
    assert (home / "conventions.md").read_bytes() == applied


def test_a_withdrawn_source_refuses_the_accept_and_writes_nothing(cli: Cli) -> None:
    home = bm25_home(cli)
    with Memory.open(home) as memory:
        rid = memory.remember("Always run the linter before pushing.", source="run-9").record_id
    pid = cli.ok("promote", rid, "--reason", "seen often", "--home", str(home)).strip()
    cli.ok("withdraw", "--source", "run-9", "--reason", "failed-exploration", "--home", str(home))
    before = snapshot(home)
    refused = cli("promote-accept", pid, "--reason", "yes", "--home", str(home))
    assert refused.returncode == 3
    assert "cannot promote" in refused.stderr and "withdrawn by memwd-" in refused.stderr
    assert snapshot(home) == before
