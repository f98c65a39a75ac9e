import json
import shutil
import subprocess
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from installed import T0, Cli, snapshot

from agent_memory.home import Home
from agent_memory.records.lifecycle import archive, supersede
from agent_memory.records.note import load_note
from agent_memory.records.record import MemoryRecord, Provenance
from signing_store import signing_store

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")

SOURCE = Provenance(kind="test", ref="test:sync")


def git(home: Path, *args: str, check: bool = True) -> str:
    result = subprocess.run(
        [str(GIT), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=home,
        capture_output=True,
        text=True,
        check=False,
    )
    assert not check or result.returncode == 0, result.stderr
    return result.stdout


def record(body: str, hours: int = 0) -> MemoryRecord:
    return MemoryRecord.create(
        type="fact", body=body, provenance=SOURCE, created_at=T0 + timedelta(hours=hours)
    )


@pytest.fixture
def home(cli: Cli) -> Path:
    """A git Home holding one committed record (the tea preference), made in-process."""
    path = cli.root / "home"
    keys = cli.root / "config" / "agent-memory" / "keys" / "home.key"
    opened = Home.init(path, timezone="UTC", key_file=keys, git=True)
    signing_store(opened).put(record("Likes green tea."))
    opened.commit("seed")
    return path


def tea(home: Path) -> tuple[MemoryRecord, Path]:
    (folder,) = (home / "notes").iterdir()
    return load_note((folder / "000001.md").read_bytes()), folder


def test_a_committed_note_edited_by_hand_becomes_a_correction_and_the_file_matches_head(
    cli: Cli, home: Path
) -> None:
    old, folder = tea(home)
    path = folder / "000001.md"
    path.write_bytes(path.read_bytes().replace(b"green", b"black"))
    report = json.loads(cli.ok("sync", "--home", str(home), "--json"))
    (item,) = report["items"]
    assert report["git"] is True and item["action"] == "correct"
    assert git(home, "diff", "HEAD", "--", str(path)) == ""  # restored to the committed bytes
    history = json.loads(cli.ok("history", old.id, "--home", str(home), "--json"))
    assert [v["state"] for v in history] == ["active", "superseded"]
    assert history[1]["superseded_by"] == item["new_record_id"]
    new = json.loads(cli.ok("show", item["new_record_id"], "--home", str(home), "--json"))
    assert new["body"] == "Likes black tea." and new["provenance"]["ref"] == item["path"]


def test_a_reformatted_note_is_restored_and_no_record_is_written(cli: Cli, home: Path) -> None:
    _, folder = tea(home)
    path = folder / "000001.md"
    committed = path.read_bytes()
    path.write_bytes(committed.replace(b'type: "fact"', b"type: fact"))
    out = cli.ok("sync", "--home", str(home))
    assert out.startswith("restore ") and "its bytes changed but not its content" in out
    assert path.read_bytes() == committed and len(list((home / "notes").iterdir())) == 1


def test_a_hand_change_of_a_lifecycle_field_is_refused_and_left_as_it_is(cli: Cli, home: Path) -> None:
    _, folder = tea(home)
    path = folder / "000001.md"
    path.write_bytes(path.read_bytes().replace(b'state: "active"', b'state: "archived"'))
    before = snapshot(home / "notes")
    result = cli("sync", "--home", str(home), "--json")
    (item,) = json.loads(result.stdout)["items"]
    assert result.returncode == 1 and item["action"] == "problem"
    assert item["detail"].startswith("changed by hand: state; only the body and type, tags")
    assert snapshot(home / "notes") == before


def test_a_note_whose_frontmatter_no_longer_parses_is_reported_and_left_as_it_is(
    cli: Cli, home: Path
) -> None:
    _, folder = tea(home)
    path = folder / "000001.md"
    path.write_bytes(path.read_bytes().replace(b'type: "fact"', b'type: ["fact"'))
    before = snapshot(home / "notes")
    result = cli("sync", "--home", str(home), "--json")
    (item,) = json.loads(result.stdout)["items"]
    assert result.returncode == 1 and item["action"] == "problem" and "YAML error at line" in item["detail"]
    assert snapshot(home / "notes") == before


def test_a_hand_edit_that_was_committed_is_restored_from_the_last_sound_commit(cli: Cli, home: Path) -> None:
    _, folder = tea(home)
    path = folder / "000001.md"
    sound = path.read_bytes()
    path.write_bytes(sound.replace(b"green", b"jasmine"))
    git(home, "commit", "-qam", "edited the note by hand")
    (item,) = json.loads(cli.ok("sync", "--home", str(home), "--json"))["items"]
    assert item["action"] == "correct" and path.read_bytes() == sound


def test_a_deleted_version_file_is_reported_not_restored(cli: Cli, home: Path) -> None:
    _, folder = tea(home)
    (folder / "000001.md").unlink()
    result = cli("sync", "--home", str(home))
    assert result.returncode == 1 and "a version file was deleted by hand" in result.stdout
    assert "git checkout -- notes/" in result.stdout and not (folder / "000001.md").exists()


def test_an_erased_record_is_not_taken_for_a_hand_edit(cli: Cli, home: Path) -> None:
    old, _ = tea(home)
    Home.open(home).store().erase(old.id, "owner request")
    result = cli("sync", "--home", str(home))
    assert result.returncode == 0 and "nothing to sync" in result.stderr


# ---------------------------------------------------------------------- merge clashes


def merged(
    home: Path,
    ours: Callable[[MemoryRecord], list[MemoryRecord]],
    theirs: Callable[[MemoryRecord], list[MemoryRecord]],
) -> MemoryRecord:
    """Append versions on two branches (store only, no log), merge them; return the record's first version."""
    first, _ = tea(home)
    opened = Home.open(home)
    git(home, "checkout", "-q", "-b", "other")
    for version in theirs(first):
        signing_store(opened).put(version)
    opened.commit("theirs")
    git(home, "checkout", "-q", "main")
    for version in ours(first):
        signing_store(opened).put(version)
    opened.commit("ours")
    assert "CONFLICT" in git(home, "merge", "other", check=False)
    return first


def tagged(hours: int) -> Callable[[MemoryRecord], list[MemoryRecord]]:
    return lambda r: [r.evolve(tags=("drink",), updated_at=T0 + timedelta(hours=hours))]


def retired(hours: int) -> Callable[[MemoryRecord], list[MemoryRecord]]:
    return lambda r: [archive(r, "not true any more", now=T0 + timedelta(hours=hours))]


def test_a_version_number_clash_keeps_the_earlier_side_and_appends_the_other(cli: Cli, home: Path) -> None:
    first = merged(home, ours=retired(2), theirs=tagged(1))
    out = cli.ok("sync", "--home", str(home))
    assert out.startswith("resolve ") and "kept the theirs side (active) as version 2" in out
    history = json.loads(cli.ok("history", first.id, "--home", str(home), "--json"))
    assert [(v["state"], v["tags"]) for v in history] == [
        ("active", []),
        ("active", ["drink"]),
        ("archived", []),
    ]
    again = cli("sync", "--home", str(home))
    assert again.returncode == 0 and again.stdout == ""  # settled: `git add` concludes the merge


def test_a_clash_whose_time_order_is_illegal_is_settled_in_the_other_order(cli: Cli, home: Path) -> None:
    successor = record("Likes black tea.", hours=3)

    def replaced(r: MemoryRecord) -> list[MemoryRecord]:
        signing_store(Home.open(home)).put(successor.evolve(supersedes=r.id))
        return [supersede(r, successor.evolve(supersedes=r.id), "changed", now=T0 + timedelta(hours=3))]

    first = merged(home, ours=replaced, theirs=retired(1))
    out = cli.ok("sync", "--home", str(home))
    assert "kept the ours side (superseded) as version 2; appended the theirs side (archived)" in out
    states = [v["state"] for v in json.loads(cli.ok("history", first.id, "--home", str(home), "--json"))]
    assert states == ["active", "superseded", "archived"]


def test_two_successors_cannot_both_stand_and_the_file_is_left_for_a_person(cli: Cli, home: Path) -> None:
    def replaced_by(body: str) -> Callable[[MemoryRecord], list[MemoryRecord]]:
        def versions(r: MemoryRecord) -> list[MemoryRecord]:
            successor = record(body, hours=2).evolve(supersedes=r.id)
            signing_store(Home.open(home)).put(successor)
            return [supersede(r, successor, "changed", now=T0 + timedelta(hours=2))]

        return versions

    merged(home, ours=replaced_by("Likes black tea."), theirs=replaced_by("Likes white tea."))
    (home / "notes" / "later.md").write_text("Lunch is at noon.\n", encoding="utf-8")
    before = snapshot(home / "notes")
    result = cli("sync", "--home", str(home), "--json")
    items = {item["path"]: item for item in json.loads(result.stdout)["items"]}
    assert result.returncode == 1
    (clash,) = [i for p, i in items.items() if p.endswith("000002.md")]
    assert clash["action"] == "problem" and "cannot both stand: two successors" in clash["detail"]
    assert "git checkout --ours or --theirs" in clash["hint"]
    # Writing a record would commit the Home with the conflict markers in it: deferred.
    assert items["notes/later.md"]["action"] == "problem"
    assert "merge conflict(s) in notes/ are not settled" in items["notes/later.md"]["detail"]
    assert snapshot(home / "notes") == before


def test_a_merge_conflict_in_the_log_is_reported_and_stops_the_resolution(cli: Cli, home: Path) -> None:
    def logged(
        action: Callable[[MemoryRecord], list[MemoryRecord]], who: str
    ) -> Callable[[MemoryRecord], list[MemoryRecord]]:
        def versions(r: MemoryRecord) -> list[MemoryRecord]:
            Home.open(home).log().append(
                "review", actor=who, record_ids=(r.id,), details={"verdict": "stale"}
            )
            return action(r)

        return versions

    merged(home, ours=logged(retired(2), "owner"), theirs=logged(tagged(1), "reviewer"))
    before = snapshot(home / "notes")
    result = cli("sync", "--home", str(home), "--json")
    items = json.loads(result.stdout)["items"]
    assert result.returncode == 1 and {i["action"] for i in items} == {"problem"}
    assert any(i["path"].startswith("log/") and "unmerged in git" in i["detail"] for i in items)
    assert any(i["path"].startswith("notes/") and i["detail"].startswith("resolve failed") for i in items)
    assert snapshot(home / "notes") == before
