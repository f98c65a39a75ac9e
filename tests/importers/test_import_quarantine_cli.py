"""What an untrusted import says about quarantine, and approving many records at once (session 3 trial)."""

from __future__ import annotations

import json
from pathlib import Path

from folderkit import NOTES, write_tree
from importkit import run
from test_import_folders_cli import make_home

HOW = "review them with `agent-memory review`, approve with `agent-memory approve ID…`"


def _log(tmp_path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((tmp_path / "h" / "log").rglob("*")) if p.is_file())


def _quarantined(tmp_path: Path) -> int:
    status = run(tmp_path, "status", "--home", "h", "--json")
    assert status.returncode == 0, status.stderr
    return int(json.loads(status.stdout)["quarantined"])


def test_an_untrusted_import_counts_its_quarantined_records_and_says_how_to_approve_them(
    tmp_path: Path,
) -> None:
    write_tree(tmp_path / "notes", NOTES)
    make_home(tmp_path)
    first = run(tmp_path, "import", "--home", "h", "--from", "markdown", "notes", "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)[0]
    added = report["added"]
    assert len(added) == 2 and report["quarantined"] == 2 == _quarantined(tmp_path)
    assert report["quarantined_already_present"] == 0

    trusted = run(tmp_path, "import", "--home", "h", "--from", "markdown", "notes", "--trust")
    assert trusted.returncode == 0, trusted.stderr
    assert trusted.stdout == (
        "notes: read 2, added 0, 2 already present, 0 refused, 2 quarantined (2 already present stay "
        f"quarantined: --trust vouches only for the records it adds; {HOW})\n"
    )
    assert _quarantined(tmp_path) == 2, "--trust does not lift an existing quarantine"

    approved = run(tmp_path, "approve", *added, added[0], "--home", "h", "--reason", "my notes")
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout == "".join(f"approved {rid} (by owner)\n" for rid in added)
    assert _quarantined(tmp_path) == 0
    events = [json.loads(line) for line in run(tmp_path, "log", "--home", "h", "--json").stdout.splitlines()]
    reviews = [(e["record_ids"], e["details"]["verdict"]) for e in events if e["action"] == "review"]
    assert reviews == [([rid], "approve") for rid in added], "an id given twice is approved once"

    again = run(tmp_path, "import", "--home", "h", "--from", "markdown", "notes")
    assert again.stdout == "notes: read 2, added 0, 2 already present, 0 refused\n"


def test_a_new_untrusted_import_names_the_quarantine_and_the_trust_flag(tmp_path: Path) -> None:
    write_tree(tmp_path / "notes", NOTES)
    make_home(tmp_path)
    done = run(tmp_path, "import", "--home", "h", "--from", "markdown", "notes")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"notes: read 2, added 2, 0 already present, 0 refused, 2 quarantined ({HOW}; "
        "import with --trust to vouch for a source you trust)\n"
    )


def test_approving_several_records_approves_none_when_any_id_is_bad(tmp_path: Path) -> None:
    write_tree(tmp_path / "notes", NOTES)
    make_home(tmp_path)
    imported = run(tmp_path, "import", "--home", "h", "--from", "markdown", "notes", "--json")
    added = json.loads(imported.stdout)[0]["added"]
    mine = run(tmp_path, "remember", "Deploys need two approvals.", "--source", "s1", "--home", "h", "--json")
    assert mine.returncode == 0, mine.stderr
    untainted = json.loads(mine.stdout)["record_id"]
    unknown = "mem:" + "0" * 32
    before = _log(tmp_path)
    cases = (
        (unknown, unknown),
        (
            untainted,
            "nothing to approve: it is not tainted, so it was never quarantined and needs no approval",
        ),
    )
    for bad, message in cases:
        refused = run(tmp_path, "approve", added[0], bad, added[1], "--home", "h")
        assert refused.returncode == 3, refused
        assert message in refused.stderr and refused.stdout == ""
        assert _log(tmp_path) == before, "a refused approval logs nothing"
    assert _quarantined(tmp_path) == 2
    none_given = run(tmp_path, "approve", "--home", "h")
    assert none_given.returncode == 2 and "RECORD_ID" in none_given.stderr
    both = run(tmp_path, "approve", *added, "--home", "h", "--json")
    assert both.returncode == 0, both.stderr
    assert [(d["record_id"], d["verdict"]) for d in json.loads(both.stdout)] == [
        (r, "approve") for r in added
    ]
    assert _quarantined(tmp_path) == 0


def test_a_memory_file_import_says_its_tainted_records_are_quarantined(tmp_path: Path) -> None:
    make_home(tmp_path)
    (tmp_path / "peer").mkdir()
    make_home(tmp_path / "peer")
    peer = str(tmp_path / "peer" / "h")
    assert run(tmp_path, "remember", "Tiles are 20 cm wide.", "--source", "s", "--home", peer).returncode == 0
    assert run(tmp_path, "export", "peer.json", "--home", peer).returncode == 0
    done = run(tmp_path, "import", "peer.json", "--no-verify", "--home", "h")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "peer.json: added 1, skipped 0 already present, 1 tainted external (quarantined: review them "
        "with `agent-memory review`, approve with `agent-memory approve ID…`; memory.toml [trust] "
        "vouches for a signer)\n"
    )
    assert _quarantined(tmp_path) == 1
