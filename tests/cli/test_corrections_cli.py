import json
import shlex
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from installed import T0, Cli, seed, snapshot

from agent_memory.home import Home
from agent_memory.records.note import dump_note, load_note
from agent_memory.records.record import Kind, MemoryRecord, Provenance
from signing_store import signing_store

# An editor: replaces OLD by NEW in the file it is given (argv: OLD NEW FILE).
EDITOR_SCRIPT = """\
import pathlib, sys
old, new, path = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
"""


def editor(cli: Cli, old: str, new: str) -> str:
    script = cli.root / "editor.py"
    script.write_text(EDITOR_SCRIPT, encoding="utf-8")
    return shlex.join([sys.executable, str(script), old, new])


@pytest.fixture
def home(cli: Cli) -> Path:
    """A Home (no git) with a superseded state record, its successor (db-4) and a tea preference."""
    path = cli.home()
    seed(signing_store(Home.open(path)))
    return path


def latest(home: Path) -> dict[str, MemoryRecord]:
    """The latest version of every record, by id."""
    found = [load_note(sorted(d.glob("*.md"))[-1].read_bytes()) for d in (home / "notes").iterdir()]
    return {record.id: record for record in found}


def by_body(home: Path, text: str) -> MemoryRecord:
    (record,) = [r for r in latest(home).values() if text in r.body]
    return record


def test_edit_saves_a_changed_text_as_a_correction_that_supersedes_the_record(cli: Cli, home: Path) -> None:
    new = by_body(home, "db-4")
    drafts = cli.root / "tmp"
    drafts.mkdir()
    result = cli(
        "edit",
        new.id,
        "--home",
        str(home),
        env={"EDITOR": editor(cli, "db-4", "db-5"), "TMPDIR": str(drafts)},
    )
    assert result.returncode == 0, result.stderr
    corrected = latest(home)[new.id]
    successor = latest(home)[result.stdout.strip()]
    assert corrected.state.value == "superseded" and corrected.superseded_by == successor.id
    assert successor.body == "Staging runs on db-5." and successor.supersedes == new.id
    assert (successor.kind, successor.subject, successor.effective_namespace) == (
        Kind.STATE,
        "host:staging",
        "default",
    )
    assert successor.provenance.kind == "correction" and successor.confidence == new.confidence
    assert corrected.state_reason == "corrected in an editor"
    assert not list(drafts.glob("agent-memory-edit-*"))  # the temporary file is gone


def test_edit_of_a_knowledge_record_keeps_its_tags_type_and_confidence(cli: Cli) -> None:
    path = cli.home()
    note = MemoryRecord.create(
        type="procedure",
        body="Deploys go out on Tuesdays.",
        provenance=Provenance(kind="conversation", ref="test"),
        created_at=T0,
        tags=("ops", "deploy"),
        confidence=0.7,
    )
    signing_store(Home.open(path)).put(note)
    env = {"EDITOR": editor(cli, "Tuesdays", "Thursdays")}
    result = cli("edit", note.id, "--home", str(path), "--json", "--reason", "wrong day", env=env)
    out = json.loads(result.stdout)
    assert out["changed"] is True and out["corrects"] == note.id and out["superseded"] == note.id
    successor = latest(path)[out["record_id"]]
    assert successor.body == "Deploys go out on Thursdays."
    assert (successor.type.value, successor.tags, successor.confidence) == (
        "procedure",
        ("ops", "deploy"),
        0.7,
    )
    assert successor.effective_kind is Kind.KNOWLEDGE
    assert latest(path)[note.id].state_reason == "wrong day"


def test_an_unchanged_text_writes_nothing_and_says_so(cli: Cli, home: Path) -> None:
    before = snapshot(home)
    result = cli("edit", by_body(home, "tea").id, "--home", str(home), env={"EDITOR": "true"})
    assert result.returncode == 0 and "unchanged: nothing written" in result.stderr
    assert snapshot(home) == before


def test_visual_is_preferred_to_editor(cli: Cli, home: Path) -> None:
    tea = by_body(home, "tea")
    env = {"VISUAL": editor(cli, "green", "white"), "EDITOR": "false"}
    new_id = cli("edit", tea.id, "--home", str(home), env=env).stdout.strip()
    assert latest(home)[new_id].body == "Likes white tea."


def test_without_an_editor_edit_fails_with_a_hint_and_changes_nothing(cli: Cli, home: Path) -> None:
    before = snapshot(home)
    env = {k: v for k, v in cli.env.items() if k not in ("EDITOR", "VISUAL")}
    result = Cli(cli.root, env)("edit", by_body(home, "tea").id, "--home", str(home))
    assert result.returncode == 3
    assert "no editor: neither $VISUAL nor $EDITOR is set" in result.stderr and "hint:" in result.stderr
    assert snapshot(home) == before


def test_an_editor_that_fails_saves_nothing(cli: Cli, home: Path) -> None:
    before = snapshot(home)
    failing = cli("edit", by_body(home, "tea").id, "--home", str(home), env={"EDITOR": "false"})
    missing = cli("edit", by_body(home, "tea").id, "--home", str(home), env={"EDITOR": "no-such-editor-x"})
    assert failing.returncode == 3 and "exited with status 1; nothing was saved" in failing.stderr
    assert missing.returncode == 3 and "cannot start the editor 'no-such-editor-x'" in missing.stderr
    assert snapshot(home) == before


def test_a_superseded_record_is_refused_before_the_editor_opens(cli: Cli, home: Path) -> None:
    old = by_body(home, "db-3")
    marker = cli.root / "opened"
    before = snapshot(home)
    result = cli("edit", old.id, "--home", str(home), env={"EDITOR": f"touch {marker}"})
    assert result.returncode == 3 and "only an active record can be corrected" in result.stderr
    assert "correct its live successor instead" in result.stderr
    assert not marker.exists() and snapshot(home) == before


def test_a_namespace_that_is_not_the_records_is_refused(cli: Cli, home: Path) -> None:
    before = snapshot(home)
    env = {"EDITOR": editor(cli, "tea", "coffee")}
    result = cli("edit", by_body(home, "tea").id, "--namespace", "project:x", "--home", str(home), env=env)
    assert result.returncode == 3 and "is in namespace 'default', not 'project:x'" in result.stderr
    assert snapshot(home) == before


def test_an_emptied_text_is_refused_and_the_draft_is_kept(cli: Cli, home: Path) -> None:
    tea = by_body(home, "tea")
    before = snapshot(home)
    result = cli("edit", tea.id, "--home", str(home), env={"EDITOR": editor(cli, "Likes green tea.", " ")})
    assert result.returncode == 3 and "is empty" in result.stderr
    kept = Path(result.stderr.split("your edited text is kept in ")[1].strip())
    assert kept.read_text(encoding="utf-8").strip() == ""
    kept.unlink()
    kept.parent.rmdir()
    assert snapshot(home) == before


# ---------------------------------------------------------------------- sync, no git


def two_versions(home: Path) -> MemoryRecord:
    """Put an active record with two versions (a tag added in the second); return the latest."""
    store = signing_store(Home.open(home))
    first = MemoryRecord.create(
        type="fact",
        body="The printer is on floor 2.",
        provenance=Provenance(kind="test", ref="t"),
        created_at=T0,
    )
    second = first.evolve(tags=("office",), updated_at=T0 + timedelta(hours=1))
    store.put(first)
    store.put(second)
    return second


def note_file(home: Path, record_id: str, version: int) -> Path:
    return home / "notes" / record_id.removeprefix("mem:") / f"{version:06d}.md"


def test_sync_turns_a_hand_edit_into_a_correction_and_restores_the_file_from_its_siblings(
    cli: Cli, home: Path
) -> None:
    printer = two_versions(home)
    edited = note_file(home, printer.id, 2)
    original = edited.read_bytes()
    edited.write_bytes(original.replace(b"floor 2", b"floor 3"))

    report = json.loads(cli.ok("sync", "--home", str(home), "--json"))
    (item,) = report["items"]
    assert report["ok"] is True and report["git"] is False and report["counts"]["correct"] == 1
    assert item["action"] == "correct" and item["record_id"] == printer.id
    assert item["path"] == f"notes/{printer.id.removeprefix('mem:')}/000002.md"
    assert edited.read_bytes() == original  # restored byte for byte
    successor = latest(home)[item["new_record_id"]]
    assert successor.body == "The printer is on floor 3." and successor.tags == ("office",)
    assert successor.provenance.ref == item["path"]
    assert latest(home)[printer.id].superseded_by == successor.id
    checks = json.loads(cli("doctor", "--home", str(home), "--json").stdout)["checks"]
    assert all(c["ok"] for c in checks if c["name"] in ("notes", "signatures", "log", "intents", "state"))


def test_a_hand_edit_with_no_proven_copy_is_reported_and_left_as_it_is(cli: Cli, home: Path) -> None:
    tea = by_body(home, "tea")
    path = note_file(home, tea.id, 1)
    path.write_bytes(path.read_bytes().replace(b"green", b"black"))
    before = snapshot(home)
    result = cli("sync", "--home", str(home))
    assert result.returncode == 1
    assert f"problem        notes/{tea.id.removeprefix('mem:')}/000001.md  {tea.id}" in result.stdout
    assert "no proven copy to restore it from" in result.stdout and "hint:" in result.stdout
    assert snapshot(home) == before


def test_sync_remembers_a_new_markdown_file_with_its_frontmatter_and_removes_it(cli: Cli, home: Path) -> None:
    (home / "notes" / "deploys.md").write_text(
        '---\nkind: state\nsubject: "deploy:day"\ntags: [ops]\n---\nDeploys go out on Tuesdays.\n',
        encoding="utf-8",
    )
    (home / "notes" / "plain.md").write_text("The office closes at six.\n", encoding="utf-8")
    report = json.loads(cli.ok("sync", "--home", str(home), "--json", "--namespace", "project:office"))
    assert report["counts"] == {"correct": 0, "restore": 0, "resolve": 0, "create": 2, "problem": 0}
    made = {item["path"]: latest(home)[item["new_record_id"]] for item in report["items"]}
    deploys, plain = made["notes/deploys.md"], made["notes/plain.md"]
    assert (deploys.body, deploys.kind, deploys.subject, deploys.tags) == (
        "Deploys go out on Tuesdays.",
        Kind.STATE,
        "deploy:day",
        ("ops",),
    )
    assert deploys.provenance.ref == "notes/deploys.md" and plain.body == "The office closes at six."
    assert deploys.namespace == plain.namespace == "project:office"
    assert not (home / "notes" / "deploys.md").exists() and not (home / "notes" / "plain.md").exists()


def test_new_files_that_cannot_be_records_are_reported_and_kept(cli: Cli, home: Path) -> None:
    tea = by_body(home, "tea")
    notes = home / "notes"
    (notes / "copy.md").write_bytes(dump_note(tea))  # a merge tool's backup of a note
    (notes / "odd.md").write_text("---\ncolour: blue\n---\nSky.\n", encoding="utf-8")
    (notes / "empty.md").write_text("   \n", encoding="utf-8")
    (cli.root / "secret.md").write_text("Not in the Home.\n", encoding="utf-8")
    (notes / "link.md").symlink_to(cli.root / "secret.md")
    before = snapshot(home)
    result = cli("sync", "--home", str(home), "--json")
    items = {item["path"]: item for item in json.loads(result.stdout)["items"]}
    assert result.returncode == 1 and {i["action"] for i in items.values()} == {"problem"}
    assert "holds an id: a copy of a note version" in items["notes/copy.md"]["detail"]
    assert "unknown frontmatter keys ['colour']" in items["notes/odd.md"]["detail"]
    assert "is empty" in items["notes/empty.md"]["detail"]
    assert items["notes/link.md"]["detail"].startswith("cannot be read")  # a symlink is never followed
    assert snapshot(home) == before


def test_a_dry_run_reports_every_action_and_writes_nothing(cli: Cli, home: Path) -> None:
    printer = two_versions(home)
    path = note_file(home, printer.id, 2)
    path.write_bytes(path.read_bytes().replace(b"floor 2", b"floor 9"))
    (home / "notes" / "new.md").write_text("Lunch is at noon.\n", encoding="utf-8")
    before = snapshot(home)
    out = cli.ok("sync", "--dry-run", "--home", str(home))
    assert f"would correct  notes/{printer.id.removeprefix('mem:')}/000002.md  {printer.id}" in out
    assert "would create   notes/new.md" in out
    assert snapshot(home) == before


def test_sync_of_a_sound_home_has_nothing_to_do(cli: Cli, home: Path) -> None:
    result = cli("sync", "--home", "home")  # relative to the working folder
    assert result.returncode == 0 and result.stdout == ""
    assert "nothing to sync" in result.stderr


def test_archive_retires_a_record_says_so_in_json_and_refuses_twice(cli: Cli) -> None:
    home = cli.home()
    record_id = cli.ok(
        "remember", "The old wiki lives at wiki.example.", "--source", "t", "--home", str(home)
    )
    record_id = record_id.strip()
    out = cli.ok("archive", record_id, "--reason", "moved to the handbook", "--home", str(home), "--json")
    assert json.loads(out) == {"records": [{"record_id": record_id, "state": "archived"}]}
    assert latest(home)[record_id].state_reason == "moved to the handbook"
    before = snapshot(home / "notes")
    again = cli("archive", record_id, "--reason", "twice", "--home", str(home))
    assert again.returncode == 3 and record_id in again.stderr
    assert snapshot(home / "notes") == before
