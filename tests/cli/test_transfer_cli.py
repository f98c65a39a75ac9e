import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from installed import Cli, Seeded, seed, snapshot

from agent_memory.home import Home
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.signing import address_of
from agent_memory.transfer.exchange import export_memory_file


def trust(home: Path, address: str) -> None:
    """Add ``address`` to the Home's trusted signers, as a person editing memory.toml would."""
    toml = home / "memory.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(
        text.replace("trusted_signers = []", f'trusted_signers = ["{address}"]'), encoding="utf-8"
    )


def log_entries(cli: Cli, home: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in cli.ok("log", "--home", str(home), "--json").splitlines()]


@pytest.fixture
def exported(cli: Cli) -> tuple[Path, Seeded, Path]:
    """(Home A, what it holds, its MemoryFile): three records, the oldest in two versions.

    The file is written in-process as ``export`` writes it (``export`` itself is run by the
    round-trip test), to keep the number of processes per test low.
    """
    home = cli.home("a")
    opened = Home.open(home)
    seeded = seed(opened.store(), opened.identity())
    path = cli.root / "a.json"
    path.write_bytes(export_memory_file(opened.store(), keys=opened.identity()).dumps())
    return home, seeded, path


def test_export_and_import_round_trip_between_two_homes_byte_for_byte(
    cli: Cli, exported: tuple[Path, Seeded, Path]
) -> None:
    source, seeded, path = exported
    out = cli.ok("export", str(path), "--home", str(source))
    assert out == f"exported 3 records to {path} (signed by {address_of(Home.open(source).identity())})\n"
    target = cli.home("b")
    trust(target, address_of(Home.open(source).identity()))
    out = cli.ok("import", str(path), "--home", str(target))
    assert out == f"{path}: added 3, skipped 0 already present, 0 tainted external\n"
    ours, theirs = Home.open(source).store(), Home.open(target).store()
    for record_id in seeded.ids:
        assert theirs.get(record_id).canonical_bytes() == ours.get(record_id).canonical_bytes()
        assert len(theirs.history(record_id)) == 1  # the latest version travels, not the history
    (export_event,) = [e for e in log_entries(cli, source) if e["action"] == "export"]
    # Outside the Home: the absolute path and the root of the Home that made it (issue 20 item 3).
    assert export_event["details"] == {"path": str(path), "home": str(source), "records": 3}
    (import_event,) = [e for e in log_entries(cli, target) if e["action"] == "import"]
    assert import_event["record_ids"] == [r.id for r in MemoryFile.loads(path.read_bytes()).records]
    details = import_event["details"]
    assert isinstance(details, dict) and details["verified"] is True and details["skipped"] == []
    assert details["digests"] == {
        record_id: hashlib.sha256(ours.get(record_id).canonical_bytes()).hexdigest()
        for record_id in seeded.ids
    }


def test_records_from_an_untrusted_signer_arrive_tainted_external(
    cli: Cli, exported: tuple[Path, Seeded, Path]
) -> None:
    _, seeded, path = exported
    target = cli.home("b")
    (report,) = json.loads(cli.ok("import", str(path), "--home", str(target), "--json"))
    assert sorted(report["tainted"]) == sorted(report["added"]) == sorted(seeded.ids)
    assert all(Home.open(target).store().get(i).taint == ("external",) for i in seeded.ids)


def test_importing_again_skips_every_record_and_says_so(
    cli: Cli, exported: tuple[Path, Seeded, Path]
) -> None:
    _, seeded, path = exported
    target = cli.home("b")
    cli.ok("import", str(path), "--home", str(target))
    before = snapshot(target / "notes")
    out = cli.ok("import", str(path), "--home", str(target))
    assert out == f"{path}: added 0, skipped 3 already present, 0 tainted external\n"
    assert snapshot(target / "notes") == before
    (report,) = json.loads(cli.ok("import", str(path), "--home", str(target), "--json"))
    assert report["added"] == [] and sorted(report["skipped"]) == sorted(seeded.ids)


def test_no_verify_taints_even_what_a_trusted_key_signed(
    cli: Cli, exported: tuple[Path, Seeded, Path]
) -> None:
    source, seeded, path = exported
    target = cli.home("b")
    trust(target, address_of(Home.open(source).identity()))
    (report,) = json.loads(cli.ok("import", str(path), "--no-verify", "--home", str(target), "--json"))
    assert sorted(report["tainted"]) == sorted(seeded.ids)
    (event,) = [e for e in log_entries(cli, target) if e["action"] == "import"]
    assert isinstance(event["details"], dict) and event["details"]["verified"] is False


def test_a_tampered_file_writes_nothing_and_exits_one(cli: Cli, exported: tuple[Path, Seeded, Path]) -> None:
    _, seeded, path = exported
    wire = json.loads(path.read_bytes())
    (tea,) = [r for r in wire["records"] if r["id"] == seeded.tea]
    tea["body"] = "Likes black coffee."
    path.write_text(json.dumps(wire), encoding="utf-8")
    target = cli.home("b")
    before = snapshot(target)
    result = cli("import", str(path), "--home", str(target))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith(f"FAIL {path}: ")
    assert snapshot(target) == before


def test_an_unsigned_file_is_refused_unless_verification_is_switched_off(
    cli: Cli, exported: tuple[Path, Seeded, Path]
) -> None:
    _, seeded, path = exported
    unsigned = cli.root / "unsigned.json"
    signed = MemoryFile.loads(path.read_bytes())
    unsigned.write_bytes(MemoryFile(created_at=signed.created_at, records=signed.records).dumps())
    target = cli.home("b")
    before = snapshot(target)
    result = cli("import", str(unsigned), "--home", str(target))
    assert result.returncode == 1 and "sign" in result.stderr
    assert snapshot(target) == before
    (report,) = json.loads(cli.ok("import", str(unsigned), "--no-verify", "--home", str(target), "--json"))
    assert sorted(report["added"]) == sorted(seeded.ids)


def test_a_missing_file_fails_with_exit_four_while_the_others_still_import(
    cli: Cli, exported: tuple[Path, Seeded, Path]
) -> None:
    _, seeded, path = exported
    target = cli.home("b")
    result = cli("import", str(cli.root / "missing.json"), str(path), "--home", str(target))
    assert result.returncode == 4  # done with exceptions (issue 18); 1 only when nothing was written
    assert result.stderr == f"FAIL {cli.root / 'missing.json'}: cannot read: No such file or directory\n"
    assert result.stdout.startswith(f"{path}: added 3,")
    assert all(Home.open(target).store().contains(i) for i in seeded.ids)


def test_export_into_a_missing_folder_is_one_line_and_exit_three(cli: Cli) -> None:
    home = cli.home("a")
    target = cli.root / "no" / "such" / "out.json"
    result = cli("export", str(target), "--home", str(home))
    assert result.returncode == 3
    assert (
        result.stderr
        == f"agent-memory: error: {target}: cannot write the MemoryFile: No such file or directory\n"
    )


def test_export_json_names_the_path_the_count_and_the_signer(cli: Cli) -> None:
    home = cli.home("a")
    opened = Home.open(home)
    seed(opened.store(), opened.identity())
    made = json.loads(cli.ok("export", "out.json", "--home", str(home), "--json"))
    assert made == {"path": "out.json", "records": 3, "agent": address_of(opened.identity())}
    assert MemoryFile.loads((cli.root / "out.json").read_bytes()).verify() is None


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_export_signs_and_commits_its_log_line(cli: Cli, tmp_path: Path) -> None:
    # A fresh user's first export left `log --verify` warning of a line no checkpoint covered and
    # `git status` showing the log changed (newcomer trial, session 6).
    home = tmp_path / "gitted"
    cli.ok("init", str(home))
    cli.ok("remember", "We ship on Fridays.", "--home", str(home), "--source", "standup")
    cli.ok("export", str(tmp_path / "out.json"), "--home", str(home))
    verify = cli("log", "--verify", "--home", str(home))
    assert verify.returncode == 0 and "no signature covers" not in verify.stdout + verify.stderr
    git = shutil.which("git") or "git"
    status = subprocess.run(
        [git, "-C", str(home), "status", "--porcelain"], capture_output=True, text=True, check=True
    )
    assert status.stdout == ""
    head = subprocess.run(
        [git, "-C", str(home), "log", "-1", "--format=%s"], capture_output=True, text=True, check=True
    )
    assert head.stdout.strip() == "agent-memory: export"
