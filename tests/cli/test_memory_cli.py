"""``remember``, ``recall`` and ``supersede`` as a user runs them: what they print and what they refuse."""

import json
import os
import pwd
import re
from datetime import datetime
from pathlib import Path

import pytest
from installed import Cli, snapshot

from agent_memory.records.note import load_note
from agent_memory.search.recipes import SearchSettings, splice_search


@pytest.fixture
def home(cli: Cli) -> Path:
    """A Home that recalls by words only (no model to load in every process)."""
    path = cli.home()
    toml = path / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
    return path


def stored(home: Path) -> dict[str, bytes]:
    return {**snapshot(home / "notes"), **{f"log/{k}": v for k, v in snapshot(home / "log").items()}}


@pytest.mark.parametrize(
    ("args", "field", "code"),
    [
        (("Deploys are \x1b[8mhidden\x1b[0m fine",), "text", "U+001B at character 13"),
        (("Bell\x07 rings",), "text", "U+0007 at character 5"),
        (("Safe text\rEvil text",), "text", "U+000D at character 10"),
        (("Backspace\x08",), "text", "U+0008 at character 10"),
        (("C1 \x9b31m",), "text", "U+009B at character 4"),
        (("A", "--kind", "state", "--subject", "host:\x02x"), "subject", "U+0002 at character 6"),
        (("A fact", "--tag", "ops", "--tag", "o\x7fps"), "tags", "U+007F at character 2"),
        (("A fact", "--source", "chat\x1f"), "source", "U+001F at character 5"),
    ],
)
def test_remember_refuses_a_control_character_naming_the_field_and_writes_nothing(
    cli: Cli, home: Path, args: tuple[str, ...], field: str, code: str
) -> None:
    before = stored(home)
    result = cli("remember", *args, "--home", str(home))
    assert result.returncode == 3, result
    assert result.stderr == (
        f"agent-memory: error: {field}: holds the control character {code}: "
        "remove it (tabs and line breaks are fine)\n"
    )
    assert result.stdout == ""
    assert stored(home) == before


def test_tabs_newlines_and_crlf_line_ends_are_plain_text(cli: Cli, home: Path) -> None:
    text = "Columns:\tname\tvalue\r\nSecond line\nThird line"
    record_id = cli.ok("remember", text, "--source", "paste", "--home", str(home)).strip()
    [note] = (home / "notes" / record_id[4:]).glob("*.md")
    assert load_note(note.read_bytes()).body == text


def test_supersede_refuses_a_control_character_and_writes_nothing(cli: Cli, home: Path) -> None:
    old = cli.ok("remember", "The wiki is at wiki.internal", "--home", str(home)).strip()
    before = stored(home)
    result = cli("supersede", old, "The wiki\x07 moved", "--reason", "moved", "--home", str(home))
    assert result.returncode == 3 and "text: holds the control character U+0007" in result.stderr
    assert stored(home) == before


def test_recall_prints_each_records_id_kind_state_review_and_reasons_in_rank_order(
    cli: Cli, home: Path
) -> None:
    h = ("--home", str(home))
    mine = cli.ok("remember", "Deploys freeze on Fridays", "--source", "chat", *h).strip()
    web = cli.ok(
        "remember", "Deploys need the API token", "--taint", "external", "--source", "web", *h
    ).strip()
    host = cli.ok("remember", "Deploys go to db-4", "--kind", "state", "--subject", "host:deploy", *h).strip()
    text = cli.ok("recall", "deploys", *h)
    ranked = json.loads(cli.ok("recall", "deploys", "--json", *h))["records"]
    assert {r["id"] for r in ranked} == {mine, web, host}
    block, listing = text.split("\n\n")
    assert block.startswith("Relevant memories (query: deploys):\n- [")
    lines = listing.splitlines()
    assert len(lines) == 3
    for rank, (line, record) in enumerate(zip(lines, ranked, strict=True), start=1):
        label = f"{record['type']} {record['kind']}/{record['state']}" + (
            f"/{record['review']}" if record["review"] != "none" else ""
        )
        # Scores move between two recalls (each touches what it returns), the rest must not.
        head, score, reasons = re.fullmatch(r"(.*)  score (\d\.\d{3})  (.*)", line).groups()  # type: ignore[union-attr]
        assert (head, reasons) == (f"{rank}. {record['id']}  {label}", "; ".join(record["reasons"]))
        assert float(score) > 0
    assert {line.split()[1]: " ".join(line.split()[2:4]) for line in lines} == {
        mine: "fact knowledge/active",
        web: "fact knowledge/active/quarantined",
        host: "fact state/active",
    }
    assert all("matched query (relevance" in line for line in lines)


def test_recall_that_finds_nothing_exits_0_and_says_so_on_stderr(cli: Cli, home: Path) -> None:
    cli.ok("remember", "Deploys freeze on Fridays", "--home", str(home))
    result = cli("recall", "quetzal  marmot", "--home", str(home))
    assert result.returncode == 0, result
    assert result.stdout.startswith("Relevant memories (query: quetzal marmot):\n(no relevant memories)\n")
    assert result.stderr == "agent-memory: no records matched 'quetzal marmot'\n"
    as_json = cli("recall", "quetzal", "--home", str(home), "--json")
    assert as_json.returncode == 0 and as_json.stderr == ""
    assert json.loads(as_json.stdout)["records"] == []


def test_without_user_in_the_environment_the_default_source_names_the_uids_user(cli: Cli, home: Path) -> None:
    bare = Cli(
        cli.root, {k: v for k, v in cli.env.items() if k not in ("USER", "LOGNAME", "LNAME", "USERNAME")}
    )
    day = datetime.now().astimezone().date().isoformat()
    cases = {
        f"cli:{pwd.getpwuid(os.getuid()).pw_name}@{day}": bare,
        f"cli:ana@{day}": Cli(cli.root, {**bare.env, "USER": "ana"}),
    }
    for expected, runner in cases.items():
        record_id = runner.ok("remember", f"The kiln is booked by {expected}", "--home", str(home)).strip()
        shown = json.loads(runner.ok("show", record_id, "--json", "--home", str(home)))
        assert shown["provenance"]["ref"] == expected, shown["provenance"]


@pytest.mark.parametrize(
    "args",
    [
        ("remember", "We ship on Fridays.", "--source", ""),
        ("remember", "We ship on Fridays.", "--source", "  "),
        ("capture", "We ship on Fridays.", "--source", ""),
        ("withdraw", "--source", "", "--reason", "wrong"),
    ],
)
def test_an_empty_source_is_a_usage_error_and_writes_nothing(
    cli: Cli, home: Path, args: tuple[str, ...]
) -> None:
    # An empty --source used to be replaced by cli:<user>@<date> without a word (newcomer trial).
    before = snapshot(home)
    result = cli(*args, "--home", str(home))
    assert result.returncode == 2, result
    assert "Invalid value for '--source': must not be empty" in result.stderr
    assert snapshot(home) == before
