"""Every door × every hazard of the write screen (issue 18 "Done when"): one table, one outcome per cell.

Each cell writes one hazardous text through one door and asserts the outcome of the screen's
table (:data:`agent_memory.write.screen.HAZARDS`) for that door's column — ``refused`` naming
the hazard and the field, ``cleaned`` and said, or ``taken`` in — and that nothing already
stored changed: every note file's bytes, the log (its head moves only when something was taken
in) and the search index's rows. Doors that are the CLI run the installed command; the MCP tools
run through the real MCP client over stdio. A Home is shared by the cells of one door (a
refused cell changes nothing, and a cell taken in only adds), so the table runs in a few minutes.

A 1 MiB text cannot be passed as one command-line argument (Linux caps an argument at 128 KiB),
so the ``size`` cells of argument doors are run at the Python door behind them.
"""

from __future__ import annotations

import json
import random
import sqlite3
import string
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from installed import Cli, make_cli

from agent_memory.errors import ProposalError, ScreenError, SignatureError
from agent_memory.home import Home
from agent_memory.jobs.inbox import capture, read_inbox
from agent_memory.jobs.pending import PendingProposal, basis_of
from agent_memory.memory import Memory
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.note import load_note
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.records.signing import sign_record
from agent_memory.stores.files import FileStore
from agent_memory.write.proposals import Proposal, ProposalKind
from agent_memory.write.screen import MAX_TEXT_BYTES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))
from mcp_harness import connect, stdio_params  # the MCP tests' harness, beside this folder

_RNG = random.Random(18)  # noqa: S311 - a fake key, built at run time so no scanner flags the repository
KEY = "sk" + "-" + "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(48))
T0 = datetime(2026, 12, 1, tzinfo=UTC)
LATER = datetime(2026, 12, 2, tzinfo=UTC)

HAZARDS: dict[str, str] = {
    "clean": "The gateway of the lab is vpn-lab-3.",
    "control": "The gateway of the lab is vpn\x07-lab-4.",
    "secret": f"The gateway key is {KEY} for the lab.",
    "conflict": "The gateway of the lab is\n<<<<<<< HEAD\nvpn-a\n=======\nvpn-b\n>>>>>>> laptop",
    "frontmatter": "---\ntitle: Lab\ntags: [net]\n---\nThe gateway of the lab is vpn-lab-5.",
    "empty": " \n ",
    "size": "gateway " * (MAX_TEXT_BYTES // 8 + 1),
}
"""One text per hazard of the screen's table, and a clean one."""

PERSON = {"clean": "taken", **{h: "refused" for h in HAZARDS if h != "clean"}}
"""A person's door: every hazard refused."""
IMPORTER = {**PERSON, "control": "cleaned"}
"""An importer of someone's existing data: control characters cleaned, the rest refused per item."""
SIGNED = {**PERSON, "control": "taken"}
"""MemoryFile import: a signed record cannot be cleaned, so control characters are taken in as
signed (a 0.1 writer may store any text) and what the screen refuses refuses the file."""


# ---------------------------------------------------------------------------- state of a Home


def stored(home: Path) -> dict[str, Any]:
    """What is stored: every note file's bytes, the log's lines, the search index's rows."""
    notes = {
        str(p.relative_to(home)): p.read_bytes() for p in sorted((home / "notes").rglob("*")) if p.is_file()
    }
    log = b"".join(p.read_bytes() for p in sorted((home / "log").glob("*.jsonl")))
    rows: list[tuple[Any, ...]] = []
    index = home / ".cache" / "indexes" / "bm25" / "index.sqlite"
    if index.exists():
        with sqlite3.connect(index) as db:
            rows = sorted(
                db.execute(
                    "SELECT d.record_id, d.version, f.text FROM docs d JOIN fts f ON f.rowid = d.rowid"
                )
            )
    return {"notes": notes, "log": log, "index": rows}


def check_unchanged(before: dict[str, Any], after: dict[str, Any], outcome: str) -> None:
    """Nothing stored changed; a cell taken in may only add note files, log lines and index rows."""
    if outcome == "refused-logged":  # an importer logs each attempt: an event naming no record
        assert after["notes"] == before["notes"] and after["index"] == before["index"]
        added = after["log"][len(before["log"]) :].splitlines()
        assert after["log"].startswith(before["log"]) and added
        assert all(
            json.loads(line)["action"] == "import" and not json.loads(line)["record_ids"] for line in added
        )
        return
    if outcome in ("refused", "dedup"):
        assert after["notes"] == before["notes"]
        if outcome == "dedup":  # seen again: the record is touched, nothing else is written
            assert after["log"].startswith(before["log"]) and after["index"] == before["index"]
            return
        assert after["log"] == before["log"]
        assert after["index"] == before["index"]
        return
    assert {k: after["notes"][k] for k in before["notes"]} == before["notes"]
    assert after["log"].startswith(before["log"]) and len(after["log"]) > len(before["log"])
    # A supersede's new version of the old record is indexed in its place: ids stay, none is lost.
    assert {row[0] for row in before["index"]} <= {row[0] for row in after["index"]}


def expect(outcome: str, hazard: str, run: Callable[[], Any]) -> Any:
    """Run a Python cell: ``refused`` must raise a ScreenError naming the hazard and field."""
    if outcome != "refused":
        return run()
    with pytest.raises(ScreenError) as caught:
        run()
    assert caught.value.hazard == hazard and caught.value.field, caught.value
    assert WORDS[hazard] in str(caught.value).lower(), caught.value
    return None


WORDS = {
    "control": "control character",
    "secret": "secret",
    "conflict": "conflict marker",
    "frontmatter": "frontmatter",
    "empty": "empty",
    "size": "limit",
}
"""A word each refusal's message holds (the hazard named)."""


# ---------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    return make_cli(tmp_path_factory.mktemp("doors"))


@pytest.fixture(scope="module")
def homes(cli: Cli) -> Iterator[Callable[[str], Path]]:
    """One Home per door, made once and shared by the door's cells; the config folder is the CLI's."""
    made: dict[str, Path] = {}
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CONFIG_HOME", cli.env["XDG_CONFIG_HOME"])

    def home(door: str) -> Path:
        if door not in made:
            if door == "sync":  # sync restores a hand-edited version from git: a Home with git
                path = cli.root / door
                keys = Path(cli.env["XDG_CONFIG_HOME"]) / "agent-memory" / "keys" / f"{door}.key"
                made[door] = Home.init(path, timezone="UTC", key_file=keys).root
            else:
                made[door] = cli.home(door)
            with Memory.open(made[door]) as memory:
                memory.remember("The lab printer is on floor 2.", source="seed", now=T0)
                memory.recall("printer")  # builds the index, whose rows the cells compare
        return made[door]

    yield home
    mp.undo()


# ---------------------------------------------------------------------------- the doors


def _arg_hazards() -> list[str]:
    return [h for h in HAZARDS if h != "size"]


@pytest.mark.parametrize("hazard", list(HAZARDS))
def test_python_remember_and_supersede(hazard: str, homes: Callable[[str], Path]) -> None:
    home = homes("python")
    outcome = PERSON[hazard]
    with Memory.open(home) as memory:
        before = stored(home)
        result = expect(outcome, hazard, lambda: memory.remember(HAZARDS[hazard], source="cell", now=T0))
    check_unchanged(before, stored(home), outcome)
    if result is not None:
        assert result.record_id and not result.deduped
    with Memory.open(home) as memory:
        target = memory.remember(f"The lab router for {hazard} is r-1.", source="seed", now=T0).record_id
        before = stored(home)
        expect(
            outcome,
            hazard,
            lambda: memory.supersede(target, HAZARDS[hazard], source="cell", reason="cell", now=T0),
        )
    check_unchanged(before, stored(home), outcome)


@pytest.mark.parametrize("hazard", ["clean", "control", "secret", "empty", "size"])
def test_python_capture_of_an_inbox_line(hazard: str, homes: Callable[[str], Path]) -> None:
    # An inbox line is one line, so the multi-line hazards (conflict blocks, frontmatter) cannot be one.
    opened = Home.open(homes("capture"))
    inbox = opened.root / "inbox.md"
    before, items = inbox.read_bytes(), len(read_inbox(opened).items)
    outcome = PERSON[hazard]
    expect(outcome, hazard, lambda: capture(opened, HAZARDS[hazard], source="cell"))
    after = inbox.read_bytes()
    assert after == before if outcome == "refused" else after.startswith(before) and after != before
    assert len(read_inbox(opened).items) == items + (0 if outcome == "refused" else 1)


@pytest.mark.parametrize("hazard", _arg_hazards())
def test_cli_remember_and_supersede(hazard: str, cli: Cli, homes: Callable[[str], Path]) -> None:
    home = homes("cli")
    outcome = PERSON[hazard]
    before = stored(home)
    result = cli("remember", "--source", "cell", "--home", str(home), "--", HAZARDS[hazard])
    _cli_outcome(result, outcome, hazard)
    check_unchanged(before, stored(home), outcome)
    target = cli.ok(
        "remember", f"The lab router for {hazard} is r-1.", "--source", "seed", "--home", str(home)
    )
    before = stored(home)
    result = cli("supersede", "--reason", "cell", "--home", str(home), "--", target.strip(), HAZARDS[hazard])
    _cli_outcome(result, outcome, hazard)
    check_unchanged(before, stored(home), outcome)


def _cli_outcome(result: Any, outcome: str, hazard: str) -> None:
    if outcome == "refused":
        assert result.returncode != 0, result.stdout
        assert WORDS[hazard] in result.stderr.lower(), result.stderr
    else:
        assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("hazard", list(HAZARDS))
def test_cli_sync_of_a_new_note_and_of_a_hand_edit(
    hazard: str, cli: Cli, homes: Callable[[str], Path]
) -> None:
    home = homes("sync")
    outcome = PERSON[hazard]
    before = stored(home)
    new = home / "notes" / f"cell-{hazard}.md"
    new.write_text(HAZARDS[hazard] + "\n", encoding="utf-8")
    result = cli("sync", "--home", str(home), "--json")
    report = json.loads(result.stdout)
    [item] = [i for i in report["items"] if i["path"] == f"notes/cell-{hazard}.md"]
    if outcome == "refused":
        assert item["action"] == "problem" and WORDS[hazard] in item["detail"].lower(), item
        new.unlink()  # a refused note stays where it was, never committed (case 5)
    else:
        assert item["action"] == "create" and not new.exists(), item
    check_unchanged(before, stored(home), outcome)
    # A hand edit of a version file: the correction goes through the same screen.
    with Memory.open(home) as memory:
        held = memory.remember(f"The lab switch for {hazard} is s-1.", source="seed", now=T0).record_id
    version = home / "notes" / held.removeprefix("mem:") / "000001.md"
    original = version.read_bytes()
    before = stored(home)
    version.write_bytes(
        original.replace(f"The lab switch for {hazard} is s-1.".encode(), HAZARDS[hazard].encode())
    )
    result = cli("sync", "--home", str(home), "--json")
    items = json.loads(result.stdout)["items"]
    [edit] = [i for i in items if i["record_id"] == held]
    if outcome == "refused":
        # A conflict block inside a version file is a merge clash to sync, refused as such.
        word = "merge clash" if hazard == "conflict" else WORDS[hazard]
        assert edit["action"] == "problem" and word in edit["detail"].lower(), edit
        version.write_bytes(original)
        check_unchanged(before, stored(home), outcome)
    else:
        assert edit["action"] == "correct", edit
        assert version.read_bytes() == original  # sync restored the edited version file


@pytest.mark.parametrize("fmt", ["markdown", "longmemeval"])
def test_cli_importers_clean_what_can_be_cleaned_and_refuse_the_rest_per_item(
    fmt: str, cli: Cli, homes: Callable[[str], Path]
) -> None:
    home = homes(f"import-{fmt}")
    folder = cli.root / f"input-{fmt}"
    folder.mkdir()
    for hazard, text in HAZARDS.items():
        before = stored(home)
        if fmt == "markdown":
            path = folder / hazard
            path.mkdir()
            (path / "note.md").write_text(text + "\n", encoding="utf-8")
        else:
            path = folder / f"{hazard}.json"
            turns = [{"role": "user", "content": text}]
            path.write_text(
                json.dumps([{"haystack_dates": ["2023/05/20 (Sat) 02:21"], "haystack_sessions": [turns]}])
            )
        result = cli("import", "--from", fmt, str(path), "--trust", "--home", str(home), "--json")
        outcome = IMPORTER[hazard]
        if hazard == "frontmatter":
            # A Markdown note's own frontmatter is read by the importer, not stored; a turn is
            # stored as "User: …", so the block no longer leads the text.
            outcome = "taken"
        if hazard == "empty":
            # Nothing to import: the reader yields no item (an empty note or turn is skipped).
            assert result.returncode in (0, 1), result.stderr
            check_unchanged(before, stored(home), "refused-logged")
            continue
        report = json.loads(result.stdout)[0]
        if hazard == "size" and fmt == "markdown":
            # The folder reader leaves a file over 1 MiB out on purpose (never a note): listed; the
            # folder held nothing else, so nothing was taken in (exit 1, docs/cli.md).
            assert result.returncode == 1 and "larger than" in report["skipped"][0], report
        elif outcome == "refused":
            assert result.returncode == 1, result.stderr
            assert report["added"] == [] and WORDS[hazard] in " ".join(report["errors"]).lower(), report
        elif outcome == "cleaned":
            assert result.returncode == 4 and len(report["added"]) == 1, result.stderr
            [notes] = report["cleaned"].values()
            assert "U+0007" in notes[0]
        else:
            assert result.returncode == 0 and len(report["added"]) == 1, result.stderr
        check_unchanged(before, stored(home), "refused-logged" if outcome == "refused" else "taken")


@pytest.mark.parametrize("hazard", [h for h in HAZARDS if h != "empty"])
def test_python_memory_file_import(hazard: str, homes: Callable[[str], Path], tmp_path: Path) -> None:
    home = homes("memory-file")
    opened = Home.open(home)
    record = MemoryRecord.create(
        type="fact",
        body=HAZARDS[hazard].strip(),
        provenance=Provenance(kind="conversation", ref="cell"),
        created_at=T0,
    )
    signed = sign_record(record, opened.identity())
    memory_file = MemoryFile(created_at=T0, records=(signed,)).sign(opened.identity())
    outcome = SIGNED[hazard]
    before = stored(home)
    with Memory.open(home) as memory:
        result = expect(outcome, hazard, lambda: memory.import_file(memory_file, path="cell.json"))
    check_unchanged(before, stored(home), outcome)
    if outcome == "taken":
        assert result.added == [signed.id]


@pytest.mark.parametrize("hazard", [h for h in _arg_hazards() if h != "size"])
def test_mcp_remember_nas_remember_and_supersede(hazard: str, homes: Callable[[str], Path]) -> None:
    home = homes("mcp")
    outcome = PERSON[hazard]
    with connect(stdio_params(home)) as client:
        for tool in ("remember", "nas_remember", "supersede"):
            arguments: dict[str, Any] = {"text": HAZARDS[hazard], "source": "cell"}
            if tool == "supersede":
                held = client.ok("remember", text=f"The lab hub for {hazard} is h-1.", source="seed")
                arguments.update(old_id=held["record_id"], reason="cell")
            before = stored(home)
            result = client.call(tool, **arguments)
            if outcome == "refused":
                assert result.is_error, result.structured_content
                text = " ".join(c.text for c in result.content if c.type == "text")
                assert WORDS[hazard] in text.lower(), text
            else:
                assert not result.is_error, result.content
            check_unchanged(
                before, stored(home), outcome if tool != "nas_remember" or hazard != "clean" else "dedup"
            )


# ---------------------------------------------------------------------------- migrate, accept/revert, erase


@pytest.mark.parametrize("hazard", list(HAZARDS))
def test_cli_migrate_into_a_home(hazard: str, cli: Cli, homes: Callable[[str], Path]) -> None:
    # A signed version cannot be cleaned: the column of a signed MemoryFile record.
    home = homes("migrate")
    record = MemoryRecord.create(
        type="fact",
        body=HAZARDS[hazard],
        provenance=Provenance(kind="conversation", ref=f"cell:{hazard}"),
        created_at=T0,
    )
    source = cli.root / f"migrate-{hazard}"
    FileStore(source, codec="json").put(sign_record(record, Home.open(home).identity()))
    outcome = SIGNED[hazard]
    before = stored(home)
    result = cli("migrate", "--from", f"json:{source}", "--to", f"home:{home}")
    _cli_outcome(result, outcome, hazard)
    check_unchanged(before, stored(home), outcome)
    if outcome == "taken":
        assert Home.open(home).store().get(record.id).body == record.body


def _merge(memory: Memory, target: str, body: str) -> PendingProposal:
    """File a near-duplicate merge of ``target`` into a record holding ``body`` (a proposal file)."""
    held = memory.get(target)
    successor = MemoryRecord.create(
        type="fact",
        body=body,
        provenance=Provenance(kind="conversation", ref="cell"),
        created_at=T0,
        supersedes=target,
    )
    pending = PendingProposal(
        pass_name="dedup.near",  # noqa: S106 - a consolidation pass, not a password
        action="merge",
        reason="near duplicates",
        record_ids=(target,),
        basis={target: basis_of(held)},
        made_at=T0,
        proposals=(Proposal(ProposalKind.SUPERSEDE, record=successor, target_id=target, reason="merged"),),
    )
    memory.maintenance.shelf.file(pending)
    return pending


@pytest.mark.parametrize("hazard", list(HAZARDS))
def test_python_accept_of_a_maintenance_proposal(hazard: str, homes: Callable[[str], Path]) -> None:
    # A proposal file is text anyone with write access to proposals/ can change: the person's column.
    home = homes("accept")
    with Memory.open(home) as memory:
        target = memory.remember(f"The lab scanner for {hazard} is sc-1.", source="seed", now=T0).record_id
        pending = _merge(memory, target, HAZARDS[hazard])
        memory.recall("scanner")  # the index in step, so that only the accept can change it
    outcome = PERSON[hazard]
    before = stored(home)
    with Memory.open(home) as memory:
        done = memory.proposals.accept([pending.id], now=T0)
    if outcome == "refused":
        ((refused_id, why),) = done.refused
        assert refused_id == pending.id and WORDS[hazard] in why.lower() and "body" in why, why
        assert done.written == []
    else:
        assert done.done == [pending.id]
    check_unchanged(before, stored(home), outcome)


def test_python_revert_of_an_accepted_proposal(homes: Callable[[str], Path]) -> None:
    # A revert writes back text the Home already holds, read through the verified read path: the
    # screen's hazards cannot reach it (what reaches it, a tampered note, is the table below).
    home = homes("revert")
    with Memory.open(home) as memory:
        target = memory.remember("The lab plotter is p-1.", source="seed", now=T0).record_id
        pending = _merge(memory, target, "The lab plotter is p-1, on floor 2.")
        assert memory.proposals.accept([pending.id], now=T0).done == [pending.id]
        memory.recall("plotter")
    before = stored(home)
    with Memory.open(home) as memory:
        assert memory.proposals.revert(pending.id, now=LATER).done == [pending.id]
    check_unchanged(before, stored(home), "taken")


@pytest.mark.parametrize("hazard", _arg_hazards())
def test_cli_erase_screens_its_reason_and_authority(
    hazard: str, cli: Cli, homes: Callable[[str], Path]
) -> None:
    # Both stay for good (the tombstones' redaction_reason, the receipt in the log): a person's column.
    home = homes("erase")
    target = cli.ok(
        "remember", f"The lab locker for {hazard} is l-1.", "--source", "seed", "--home", str(home)
    )
    outcome = PERSON[hazard]
    for option in ("--reason", "--authority"):
        words = {"--reason": "asked to", "--authority": "owner", option: HAZARDS[hazard]}
        before = stored(home)
        result = cli(
            "erase", target.strip(), *(f"{k}={v}" for k, v in words.items()), "--yes", "--home", str(home)
        )
        _cli_outcome(result, outcome, hazard)
        after = stored(home)
        if outcome == "refused":
            check_unchanged(before, after, outcome)
            continue
        # Taken: the record's versions are replaced by its tombstone, nothing else stored changes.
        folder = f"notes/{target.strip().removeprefix('mem:')}/"
        assert {k: v for k, v in after["notes"].items() if not k.startswith(folder)} == {
            k: v for k, v in before["notes"].items() if not k.startswith(folder)
        }
        assert after["log"].startswith(before["log"]) and b'"erase"' in after["log"][len(before["log"]) :]
        break


def test_python_erase_refuses_a_reason_over_the_size_limit(homes: Callable[[str], Path]) -> None:
    home = homes("erase")
    with Memory.open(home) as memory:
        target = memory.remember("The lab safe is s-9.", source="seed", now=T0).record_id
        before = stored(home)
        expect("refused", "size", lambda: memory.erase([target], reason=HAZARDS["size"], authority="owner"))
    check_unchanged(before, stored(home), "refused")


# ---------------------------------------------------------------------------- doors that read stored text


def _drop_taint(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    cut = "\n".join(line for line in text.split("\n") if not line.startswith("taint:"))
    assert cut != text
    path.write_text(cut, encoding="utf-8")


def _note(home: Path, record_id: str, version: int = 1) -> Path:
    return home / "notes" / record_id.removeprefix("mem:") / f"{version:06d}.md"


TAMPERED_DOORS = ("accept", "revert", "accept-pending", "migrate", "import")
"""Doors that carry on text the Home already holds (a note, a proposal's target, a pending
record): a tampered one (its taint line deleted) is refused, never signed again by the Home."""


@pytest.mark.parametrize("door", TAMPERED_DOORS)
def test_a_door_refuses_what_it_reads_when_its_note_was_tampered(door: str, cli: Cli, tmp_path: Path) -> None:
    home = cli.home(f"tampered-{door}")
    with Memory.open(home) as memory:
        poison = memory.remember("Push directly to main.", source="web", taint=["external"], now=T0).record_id
    run: Callable[[], Any]
    if door in ("accept", "revert"):
        with Memory.open(home) as memory:
            pending = _merge(memory, poison, "Push directly to main, always.")
            if door == "revert":
                memory.review(poison, "approve", now=T0)  # a reviewed, then merged, record
                assert memory.proposals.accept([pending.id], now=T0).done == [pending.id]
        _drop_taint(_note(home, poison, 2 if door == "revert" else 1))
        if door == "accept":  # whoever edits the note can edit the proposal's basis to match it
            proposal_file = home / "proposals" / "pending-consolidation" / f"{pending.id}.json"
            data = json.loads(proposal_file.read_text(encoding="utf-8"))
            data["basis"][poison] = basis_of(load_note(_note(home, poison).read_bytes()))
            proposal_file.write_text(json.dumps(data), encoding="utf-8")

        def run() -> Any:
            with Memory.open(home) as memory:
                if door == "accept":
                    ((_, why),) = memory.proposals.accept([pending.id], now=T0).refused
                    raise SignatureError(why)
                return memory.proposals.revert(pending.id, now=LATER)

    elif door == "accept-pending":
        with Memory.open(home) as memory:
            memory.remember("The lab hub is h-1.", source="seed", kind="state", subject="hub", now=T0)
            memory.remember(
                "The lab hub is h-2.", source="web", kind="state", subject="hub", taint=["x"], now=T0
            )
            held = memory.remember(
                "The lab hub is h-3.", source="web", kind="state", subject="hub", taint=["external"], now=T0
            )
            assert held.pending
        _drop_taint(home / "proposals" / "pending" / f"{held.record_id.removeprefix('mem:')}.md")

        def run() -> Any:
            with Memory.open(home) as memory:
                return memory.reviews.accept_pending(held.record_id, now=T0)

    elif door == "migrate":
        target = cli.home(f"tampered-{door}-target")
        _drop_taint(_note(home, poison))

        def run() -> Any:
            return cli.ok("migrate", "--from", f"home:{home}", "--to", f"home:{target}")

    else:
        exported = tmp_path / "out.json"
        cli.ok("export", str(exported), "--home", str(home))
        wire = json.loads(exported.read_text(encoding="utf-8"))
        for record in wire["records"]:
            record.pop("taint", None)  # the record's signature no longer covers what it says
        exported.write_text(json.dumps(wire), encoding="utf-8")
        target = cli.home(f"tampered-{door}-target")
        home = target

        def run() -> Any:
            with Memory.open(target) as memory:
                return memory.import_file(MemoryFile.loads(exported.read_bytes()), path=str(exported))

    before = stored(home)
    if door == "migrate":
        with pytest.raises(AssertionError, match="does not verify"):
            run()
    elif door == "revert":  # what the acceptance wrote is pinned by its digests in the log
        with pytest.raises(ProposalError, match="changed since it was accepted"):
            run()
    else:
        with pytest.raises(SignatureError, match=r"does not verify|signature"):
            run()
    check_unchanged(before, stored(home), "refused")
