"""Issue 18's numbered cases, each with its repro as a user runs it (the installed command).

1. a MemoryFile holding a tombstone imports; erased ids stay erased; a tombstone erases an
   older live copy; 2. contradictions inside one file are refused before anything is written;
   3. ``migrate`` verifies signatures; 5. a refused note never reaches git; 6. git conflict
   markers are refused by ``sync`` and ``import --from markdown``; 7. ``supersede`` keeps the
   fields it does not change; 8. an importer keeps a turn holding U+0093 and says so, with exit
   status 4; 9. the same note under another file name is one record.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from installed import Cli

from agent_memory.home import Home
from agent_memory.records.signing import address_of

GIT = shutil.which("git") or "git"


def trust(home: Path, other: Path) -> None:
    """Trust ``other``'s key in ``home``'s memory.toml, as a person would."""
    address = address_of(Home.open(other).identity())
    toml = home / "memory.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(
        text.replace("trusted_signers = []", f'trusted_signers = ["{address}"]'), encoding="utf-8"
    )


def remember(cli: Cli, home: Path, text: str, *args: str) -> str:
    out = cli.ok("remember", text, "--source", "test", "--home", str(home), "--json", *args)
    return str(json.loads(out)["record_id"])


def ids_of(cli: Cli, home: Path) -> dict[str, dict[str, object]]:
    exported = home.parent / f"{home.name}-probe.json"
    cli.ok("export", str(exported), "--home", str(home))
    data = json.loads(exported.read_text(encoding="utf-8"))
    exported.unlink()
    return {record["id"]: record for record in data["records"]}


def test_case_1_an_export_with_a_tombstone_imports_again_and_erased_ids_stay_erased(cli: Cli) -> None:
    h1, h2 = cli.home("h1"), cli.home("h2")
    trust(h2, h1)
    kept = remember(cli, h1, "The build server is ci-7.")
    gone = remember(cli, h1, "The old gateway is vpn-1.")
    before = cli.root / "before.json"
    cli.ok("export", str(before), "--home", str(h1))  # an older export: gone is still live
    older = cli.root / "older.json"  # a copy the erasure cannot find (it cleans the exports it logged)
    shutil.copy(before, older)
    cli.ok("erase", gone, "--reason", "wrong", "--authority", "owner", "--yes", "--home", str(h1))
    after = cli.root / "after.json"
    cli.ok("export", str(after), "--home", str(h1))
    result = cli("import", str(after), "--home", str(h2), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)[0]
    assert report["added"] == [kept] and report["tombstones"] == [gone]
    held = ids_of(cli, h2)
    assert held[gone]["redacted"] is True and held[gone]["body"] == "[redacted]"
    # The older export names gone live: it is never brought back.
    again = json.loads(cli.ok("import", str(older), "--home", str(h2), "--json"))[0]
    assert again["erased_here"] == [gone] and again["added"] == []
    assert ids_of(cli, h2)[gone]["redacted"] is True


def test_case_1_a_trusted_files_tombstone_erases_the_older_live_copy_here(cli: Cli) -> None:
    h1, h2 = cli.home("h1"), cli.home("h2")
    trust(h2, h1)
    gone = remember(cli, h1, "The old gateway is vpn-1.")
    early = cli.root / "early.json"
    cli.ok("export", str(early), "--home", str(h1))
    cli.ok("import", str(early), "--home", str(h2))
    cli.ok("erase", gone, "--reason", "wrong", "--authority", "owner", "--yes", "--home", str(h1))
    late = cli.root / "late.json"
    cli.ok("export", str(late), "--home", str(h1))
    report = json.loads(cli.ok("import", str(late), "--home", str(h2), "--json"))[0]
    assert report["erased"] == [gone]
    assert b"vpn-1" not in b"".join(p.read_bytes() for p in (h2 / "notes").rglob("*.md"))
    recalled = json.loads(cli.ok("recall", "gateway vpn", "--home", str(h2), "--json"))
    assert all(record["id"] != gone for record in recalled["records"])


def test_case_1_an_untrusted_files_tombstone_never_erases_what_is_held_here(cli: Cli) -> None:
    h1, h2 = cli.home("h1"), cli.home("h2")
    gone = remember(cli, h1, "The old gateway is vpn-1.")
    early = cli.root / "early.json"
    cli.ok("export", str(early), "--home", str(h1))
    cli.ok("import", str(early), "--home", str(h2))  # untrusted: tainted, a new version
    cli.ok("erase", gone, "--reason", "wrong", "--authority", "owner", "--yes", "--home", str(h1))
    late = cli.root / "late.json"
    cli.ok("export", str(late), "--home", str(h1))
    result = cli("import", str(late), "--home", str(h2), "--json")
    report = json.loads(result.stdout)[0]
    assert gone in report["erasures_held_back"] and report["erased"] == []
    assert ids_of(cli, h2)[gone]["body"] == "The old gateway is vpn-1."


def _tamper(path: Path, change: object) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)  # type: ignore[operator]
    path.write_text(json.dumps(data), encoding="utf-8")


def test_case_2_contradictions_inside_one_file_are_refused_naming_the_id_before_any_write(cli: Cli) -> None:
    h1, h2 = cli.home("h1"), cli.home("h2")
    first = remember(cli, h1, "The build server is ci-7.")
    remember(cli, h1, "The cache is redis-2.")
    base = cli.root / "base.json"
    cli.ok("export", str(base), "--home", str(h1))

    def twice(data: dict[str, Any]) -> None:
        other = dict(data["records"][0], tags=["changed"])
        data["records"].append(other)

    cases = {
        "twice.json": (twice, first),
        "future.json": (lambda data: data.update(format="fg-agent-memory/9.9"), "format"),
        "unknown.json": (lambda data: data.update(surprise=1), "surprise"),
    }
    before = sorted(p.name for p in (h2 / "notes").rglob("*.md"))
    for name, (change, named) in cases.items():
        path = cli.root / name
        shutil.copy(base, path)
        _tamper(path, change)
        result = cli("import", str(path), "--home", str(h2), "--no-verify")
        assert result.returncode == 1, (name, result.stdout, result.stderr)
        assert named in result.stderr and "nothing was written" in result.stderr, result.stderr
    assert sorted(p.name for p in (h2 / "notes").rglob("*.md")) == before


def test_case_3_migrate_refuses_a_signed_version_whose_tags_were_changed(cli: Cli) -> None:
    home = cli.home()
    remember(cli, home, "The build server is ci-7.", "--tag", "infra")
    store = cli.root / "store"
    cli.ok("migrate", "--to", f"json:{store}", "--home", str(home))
    version = next(store.rglob("000001.json"))
    data = json.loads(version.read_text(encoding="utf-8"))
    data["tags"] = ["tampered"]
    version.write_text(json.dumps(data, separators=(",", ":"), sort_keys=True), encoding="utf-8")
    target = cli.root / "copy"
    result = cli("migrate", "--from", f"json:{store}", "--to", f"json:{target}")
    assert result.returncode != 0 and "does not verify" in result.stderr, result.stderr
    assert not target.exists() or not any(target.rglob("*.json"))


def _git_home(cli: Cli, name: str = "home") -> Path:
    path = cli.root / name
    cli.ok("init", str(path))
    return path


def test_case_5_a_note_sync_refused_is_never_committed_by_the_next_write(cli: Cli) -> None:
    home = _git_home(cli)
    token = "gh" + "p_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
    (home / "notes" / "token.md").write_text(f"The deploy token is {token}\n", encoding="utf-8")
    result = cli("sync", "--home", str(home))
    assert "secret" in result.stdout + result.stderr
    remember(cli, home, "An unrelated memory about tea.")
    history = subprocess.run(
        [GIT, "-C", str(home), "log", "-p", "--all"], capture_output=True, text=True, check=True
    ).stdout
    assert token not in history
    tracked = subprocess.run(
        [GIT, "-C", str(home), "ls-files", "notes"], capture_output=True, text=True, check=True
    ).stdout
    assert "notes/token.md" not in tracked and tracked.strip()  # the remembered note is committed


def test_case_6_git_conflict_markers_are_refused_by_sync_and_by_import_from_markdown(cli: Cli) -> None:
    home = cli.home()
    block = "The VPN gateway is\n<<<<<<< HEAD\nvpn-a\n=======\nvpn-b\n>>>>>>> laptop\n"
    (home / "notes" / "vpn.md").write_text(block, encoding="utf-8")
    result = cli("sync", "--home", str(home))
    assert result.returncode != 0 and "conflict marker" in result.stdout + result.stderr
    folder = cli.root / "notes-in"
    folder.mkdir()
    (folder / "vpn.md").write_text(block, encoding="utf-8")
    imported = cli("import", "--from", "markdown", str(folder), "--trust", "--home", str(home))
    assert imported.returncode == 1 and "conflict marker" in imported.stderr, imported.stderr
    recalled = json.loads(cli.ok("recall", "VPN gateway", "--home", str(home), "--json"))
    assert recalled["records"] == []


def test_case_7_supersede_keeps_every_field_it_does_not_change(cli: Cli) -> None:
    home = cli.home()
    old = remember(
        cli,
        home,
        "SSH listens on port 22.",
        "--tag",
        "infra",
        "--tag",
        "ssh",
        "--type",
        "procedure",
        "--namespace",
        "project:ops",
        "--confidence",
        "0.7",
    )
    new = json.loads(
        cli.ok(
            "supersede", old, "SSH listens on port 2222.", "--reason", "moved", "--home", str(home), "--json"
        )
    )["record_id"]
    record = ids_of(cli, home)[new]
    assert record["tags"] == ["infra", "ssh"] and record["type"] == "procedure"
    assert record["namespace"] == "project:ops" and record["confidence"] == "0.7000"


def test_case_8_an_importer_keeps_a_turn_holding_u0093_says_the_cleaning_and_exits_4(cli: Cli) -> None:
    home = cli.home()
    data = [
        {
            "question_id": "q1",
            "haystack_dates": ["2023/05/20 (Sat) 02:21"],
            "haystack_sessions": [
                [
                    {"role": "user", "content": "I said \x93no\x94 to the offer."},
                    {"role": "assistant", "content": "Noted."},
                ]
            ],
        }
    ]
    path = cli.root / "lme.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = cli("import", "--from", "longmemeval", str(path), "--trust", "--home", str(home), "--json")
    assert result.returncode == 4, result.stderr
    report = json.loads(result.stdout)[0]
    assert len(report["added"]) == 2 and report["errors"] == []
    ((source, notes),) = report["cleaned"].items()
    assert source.endswith("#/0/haystack_sessions/0/0") and "U+0093" in notes[0]
    recalled = json.loads(cli.ok("recall", "offer", "--home", str(home), "--json"))
    assert recalled["records"][0]["body"] == "User: I said \u201cno\u201d to the offer."
    again = cli("import", "--from", "longmemeval", str(path), "--trust", "--home", str(home))
    assert again.returncode == 4 and "cleaned" in again.stderr  # said again: the data still holds it


def test_case_9_the_same_note_under_another_file_name_is_one_record(cli: Cli) -> None:
    home = cli.home()
    text = "We agreed to ship the tiles release on Friday.\n"
    for folder, name in (("A", "meeting-notes.md"), ("B", "Meeting Notes.md")):
        (cli.root / folder).mkdir()
        (cli.root / folder / name).write_text(text, encoding="utf-8")
    first = json.loads(
        cli.ok("import", "--from", "markdown", str(cli.root / "A"), "--trust", "--home", str(home), "--json")
    )
    second = json.loads(
        cli.ok("import", "--from", "markdown", str(cli.root / "B"), "--trust", "--home", str(home), "--json")
    )
    assert len(first[0]["added"]) == 1 and second[0]["added"] == [] and second[0]["already_present"] == 1
