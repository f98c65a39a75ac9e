import json
from pathlib import Path

import pytest
from installed import REASON, Cli, seed, snapshot

from agent_memory.home import Home
from agent_memory.records.note import load_note


@pytest.fixture
def home(cli: Cli) -> Path:
    """A Home holding a superseded state record (two versions), its successor and one more."""
    home = cli.home()
    opened = Home.open(home)
    seed(opened.store(), opened.identity())
    return home


def note_files(home: Path, record_id: str) -> list[Path]:
    return sorted((home / "notes" / record_id.removeprefix("mem:")).glob("*.md"))


def ids(home: Path) -> tuple[str, str]:
    """(old, new): the superseded record and its successor, read from the note files."""
    latest = [load_note(sorted(d.glob("*.md"))[-1].read_bytes()) for d in (home / "notes").iterdir()]
    (old,) = [r for r in latest if r.superseded_by]
    return old.id, str(old.superseded_by)


def test_show_prints_the_latest_note_file_byte_for_byte(cli: Cli, home: Path) -> None:
    old, new = ids(home)
    assert cli.ok("show", old, "--home", str(home)) == note_files(home, old)[-1].read_text(encoding="utf-8")
    assert cli.ok("show", new, "--home", str(home)) == note_files(home, new)[0].read_text(encoding="utf-8")


def test_show_json_prints_the_wire_object_of_the_latest_version(cli: Cli, home: Path) -> None:
    old, new = ids(home)
    shown = json.loads(cli.ok("show", old, "--home", str(home), "--json"))
    assert shown == load_note(note_files(home, old)[-1].read_bytes()).to_wire()
    assert shown["state"] == "superseded" and shown["superseded_by"] == new


def test_the_home_comes_from_the_environment(cli: Cli, home: Path) -> None:
    old, _ = ids(home)
    result = cli("show", old, "--json", env={"AGENT_MEMORY_HOME": str(home)})
    assert result.returncode == 0 and json.loads(result.stdout)["id"] == old


def test_history_lists_every_version_oldest_first_with_the_reason_of_each_change(
    cli: Cli, home: Path
) -> None:
    old, new = ids(home)
    versions = [load_note(path.read_bytes()) for path in note_files(home, old)]
    lines = cli.ok("history", old, "--home", str(home)).splitlines()
    assert [line.split()[:3] for line in lines] == [
        ["1", versions[0].updated_at.isoformat(), "active"],  # type: ignore[union-attr]
        ["2", versions[1].updated_at.isoformat(), "superseded"],  # type: ignore[union-attr]
    ]
    assert lines[1].endswith(f"-> {new}  ({REASON})")
    assert cli.ok("history", new, "--home", str(home)).splitlines()[0].split()[::2] == ["1", "active"]


def test_history_json_holds_each_version_number_and_wire_object(cli: Cli, home: Path) -> None:
    old, _ = ids(home)
    shown = json.loads(cli.ok("history", old, "--home", str(home), "--json"))
    expected = [load_note(path.read_bytes()).to_wire() for path in note_files(home, old)]
    assert [item.pop("version") for item in shown] == [1, 2]
    assert shown == expected


@pytest.mark.parametrize("command", ["show", "history"])
def test_an_unknown_id_exits_three_with_one_line_naming_it(cli: Cli, home: Path, command: str) -> None:
    missing = "mem:" + "0" * 32
    result = cli(command, missing, "--home", str(home))
    assert result.returncode == 3 and result.stdout == ""
    assert result.stderr == f"agent-memory: error: {missing}: no such record\n"


@pytest.mark.parametrize("bad", ["mem:../../etc/passwd", "/etc/passwd", "mem:" + "A" * 32])
def test_an_id_that_could_escape_the_store_is_refused(cli: Cli, home: Path, bad: str) -> None:
    result = cli("show", bad, "--home", str(home))
    assert result.returncode == 3
    assert result.stderr.startswith(f"agent-memory: error: refused record id {bad!r}")


def test_a_hand_broken_note_is_named_with_a_hint_and_left_as_it_is(cli: Cli, home: Path) -> None:
    old, new = ids(home)
    broken = note_files(home, old)[-1]
    broken.write_bytes(broken.read_bytes().replace(b"state: ", b"state: [", 1))
    before = snapshot(home / "notes")
    result = cli("history", old, "--home", str(home))
    assert result.returncode == 3
    first, hint = result.stderr.splitlines()
    assert first.startswith(f"agent-memory: error: {broken}: {old}: unreadable version file")
    assert hint.startswith("hint: ")
    assert snapshot(home / "notes") == before
    assert cli.ok("show", new, "--home", str(home))  # the other record stays readable


def test_show_without_a_home_says_how_to_make_one(cli: Cli) -> None:
    result = cli("show", "mem:" + "0" * 32, "--home", str(cli.root / "nowhere"))
    assert result.returncode == 3
    assert "not a Home" in result.stderr.splitlines()[0]
    assert result.stderr.splitlines()[1] == "hint: create one with: agent-memory init PATH"


def test_list_prints_one_line_per_record_and_filters(cli: Cli, home: Path) -> None:
    listed = cli("list", "--home", str(home))
    assert listed.returncode == 0, listed.stderr
    assert len(listed.stdout.splitlines()) == 3
    state_only = json.loads(
        cli("list", "--kind", "state", "--state", "active", "--json", "--home", str(home)).stdout
    )
    assert [r["subject"] for r in state_only] == ["host:staging"]
    assert cli("list", "--state", "bogus", "--home", str(home)).returncode == 2


def test_history_refuses_a_version_whose_note_was_signed_again_by_another_key(cli: Cli, home: Path) -> None:
    # Issue 20: history reads through the verified read path, as Memory.history does.
    from agent_memory.records.note import dump_note
    from agent_memory.records.signing import KeyPair, sign_record

    old, _ = ids(home)
    first = note_files(home, old)[0]
    record = load_note(first.read_bytes())
    first.write_bytes(dump_note(sign_record(record.evolve(tags=("edited",)), KeyPair.generate())))
    result = cli("history", old, "--home", str(home))
    assert result.returncode == 3 and result.stdout == ""
    assert "version 1" in result.stderr and "does not trust" in result.stderr, result.stderr
