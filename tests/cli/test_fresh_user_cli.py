"""What a fresh user's trial found, run through the installed command (session 3, second wave).

An empty query is a usage error; ``erase`` refuses an unknown or erased id before it asks;
``init`` on a file says it is a file; ``supersede`` with the current text changes nothing;
docs/bind.md and the README describe ``bind`` as it behaves. Each refusal leaves every
stored byte as it was.
"""

import json
import subprocess
from pathlib import Path

import pytest
from installed import COMMAND, Cli, seed, snapshot

from agent_memory.bindings import AGENTS
from agent_memory.home import Home
from agent_memory.memory import Memory
from agent_memory.search.recipes import SearchSettings, splice_search

ROOT = Path(__file__).resolve().parents[2]
PROMPT = "irreversibly?"


def bm25_home(cli: Cli) -> Path:
    path = cli.home()
    toml = path / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
    return path


def answered(cli: Cli, answer: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the command with ``answer`` on its standard input (a person at the prompt)."""
    assert COMMAND
    return subprocess.run(
        [COMMAND, *args], input=answer, capture_output=True, text=True, timeout=120, cwd=cli.root, env=cli.env
    )


@pytest.mark.parametrize("query", ["", "   ", "\t"])
def test_recall_refuses_an_empty_or_blank_query_as_a_usage_error_naming_query(cli: Cli, query: str) -> None:
    home = bm25_home(cli)
    before = snapshot(home)
    refused = cli("recall", query, "--home", str(home))
    assert refused.returncode == 2, refused.stderr
    assert "QUERY" in refused.stderr and "at least one word" in refused.stderr
    assert refused.stdout == "" and snapshot(home) == before


def test_recall_still_answers_a_query_with_words(cli: Cli) -> None:
    home = bm25_home(cli)
    with Memory.open(home) as memory:
        kept = memory.remember("The staging database is db-4", source="test").record_id
    report = json.loads(cli.ok("recall", " staging database ", "--home", str(home), "--json"))
    assert [r["id"] for r in report["records"]] == [kept]


def test_erase_of_an_unknown_id_says_so_before_asking_and_changes_nothing(cli: Cli) -> None:
    home = cli.home()
    opened = Home.open(home)
    seeded = seed(opened.store(), opened.identity())
    before = snapshot(home)
    unknown = "mem:" + "0" * 32
    for ids in ([unknown], [seeded.tea, unknown]):
        refused = answered(
            cli, "y\n", "erase", *ids, "--reason", "r", "--authority", "ada", "--home", str(home)
        )
        assert refused.returncode == 3, refused.stderr
        assert f"{unknown}: no such record" in refused.stderr
        assert PROMPT not in refused.stdout + refused.stderr
    malformed = answered(
        cli, "y\n", "erase", "bogus", "--reason", "r", "--authority", "ada", "--home", str(home)
    )
    assert malformed.returncode == 3 and "'bogus'" in malformed.stderr and PROMPT not in malformed.stdout
    assert snapshot(home) == before


def test_erase_asks_for_a_known_id_and_refuses_an_erased_one_before_asking(cli: Cli) -> None:
    home = cli.home()
    opened = Home.open(home)
    seeded = seed(opened.store(), opened.identity())
    before = snapshot(home)
    declined = answered(
        cli, "n\n", "erase", seeded.tea, "--reason", "r", "--authority", "ada", "--home", str(home)
    )
    assert declined.returncode == 3 and PROMPT in declined.stdout and "aborted" in declined.stderr
    assert snapshot(home) == before
    cli.ok("erase", seeded.tea, "--reason", "r", "--authority", "ada", "--yes", "--home", str(home))
    erased = snapshot(home)
    again = answered(
        cli, "y\n", "erase", seeded.tea, "--reason", "r", "--authority", "ada", "--home", str(home)
    )
    assert again.returncode == 3 and "already erased" in again.stderr and PROMPT not in again.stdout
    assert snapshot(home) == erased


def test_init_on_a_regular_file_says_it_is_a_file_and_leaves_it_alone(cli: Cli) -> None:
    target = cli.root / "afile"
    target.write_bytes(b"notes of mine\n")
    refused = cli("init", str(target), "--no-git")
    assert refused.returncode == 3
    assert (
        f"{target}: is a file, not a folder" in refused.stderr and "not an empty folder" not in refused.stderr
    )
    assert target.read_bytes() == b"notes of mine\n"
    assert sorted(p.name for p in cli.root.iterdir()) == ["afile"]  # no key file, no folder


def test_init_still_refuses_a_folder_that_is_not_empty(cli: Cli) -> None:
    folder = cli.root / "full"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine\n", encoding="utf-8")
    refused = cli("init", str(folder), "--no-git")
    assert refused.returncode == 3 and "not an empty folder" in refused.stderr
    assert [p.name for p in folder.iterdir()] == ["keep.txt"]


def test_supersede_with_the_current_text_is_refused_and_writes_no_version(cli: Cli) -> None:
    home = bm25_home(cli)
    with Memory.open(home) as memory:
        record = memory.remember("Backups run nightly at 02:00", source="ops").record_id
    before = snapshot(home)
    for same in ("Backups run nightly at 02:00", "  Backups run nightly at 02:00\n"):
        refused = cli("supersede", record, same, "--reason", "no change", "--home", str(home))
        assert refused.returncode == 3, refused.stderr
        assert f"{record}: text: is identical to the record's current text" in refused.stderr
        assert "nothing was changed" in refused.stderr
        assert "give the corrected text" in refused.stderr  # the hint of Memory.supersede's error
    assert snapshot(home) == before
    changed = cli.ok(
        "supersede", record, "Backups run nightly at 03:00", "--reason", "moved", "--home", str(home)
    )
    with Memory.open(home) as memory:
        assert [v.state.value for v in memory.history(record)] == ["active", "superseded"]
        assert memory.get(changed.strip()).body == "Backups run nightly at 03:00"


def test_bind_docs_name_the_absolute_server_command_and_the_readme_names_every_agent(cli: Cli) -> None:
    project = cli.root / "project"
    Home.init(project / "memory", timezone="UTC", key_file=cli.root / "config" / "k.key", git=False)
    cli.ok("bind", "claude-code", "--project", str(project), "--home", str(project / "memory"))
    entry = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["agent-memory"]
    assert Path(entry["command"]).is_absolute() and entry["command"] == COMMAND
    bind_md = (ROOT / "docs" / "bind.md").read_text(encoding="utf-8")
    assert "the absolute path of the `agent-memory` program you ran" in bind_md
    assert "`agent-memory serve --home" not in bind_md  # the bare name is never what is written
    [sentence] = [
        p
        for p in (ROOT / "README.md").read_text(encoding="utf-8").split("\n\n")
        if "`agent-memory bind AGENT`" in p
    ]
    for agent in AGENTS.values():
        assert agent.title in " ".join(sentence.split()), agent.name
