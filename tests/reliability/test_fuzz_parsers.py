"""Fuzzing the parsers of outside input: notes, MemoryFiles, inbox lines, ``memory.toml`` (issue 11 item 1).

Every generated input must either parse or be refused with an ``AgentMemoryError``; any other
exception is a bug. Where a parser sits on a write path (import, capture, archive-inbox), a
refused input must leave the Home's truth byte-identical, and an accepted one must leave it
consistent (every record readable, the log chain intact, the archive matching its log).
"""

from __future__ import annotations

import contextlib
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from random import Random

import pytest
from fuzz_inputs import inbox_text, memory_file, note_file, toml_text
from fuzz_inputs import text as fuzz_text
from reliability_kit import T0, fuzz_folder, fuzz_inputs, make_home, record_figures, snapshot

from agent_memory.errors import AgentMemoryError, RecordError
from agent_memory.home import Home
from agent_memory.jobs.archive import archive_inbox, check_archive
from agent_memory.jobs.inbox import capture, parse_inbox, read_inbox
from agent_memory.log.jsonl import JsonlLog
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.note import dump_note, load_note
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.records.signing import address_of
from agent_memory.settings import Settings
from agent_memory.stores.files import FileStore
from agent_memory.transfer.exchange import import_memory_file
from strategies import KEYS

NOTE_ID = "mem:0123456789abcdef0123456789abcdef"
HEADER = re.compile(r"\A# Inbox \d{4}-\d{2}-\d{2}\Z")


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    """One folder per module (hypothesis runs many inputs per test), with its own config folder."""
    folder = fuzz_folder("agent-memory-fuzz-")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(folder / "config"))
        yield folder
    shutil.rmtree(folder, ignore_errors=True)


def restore(root: Path, saved: dict[str, bytes], folders: tuple[str, ...]) -> None:
    """Put ``folders`` of ``root`` back to the bytes of ``saved`` (a :func:`snapshot`)."""
    for folder in folders:
        shutil.rmtree(root / folder, ignore_errors=True)
        (root / folder).mkdir()
    for name, data in saved.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


# ---------------------------------------------------------------------- note files


def test_any_note_file_parses_or_is_refused_and_reading_it_changes_nothing(scratch: Path) -> None:
    outcomes: Counter[str] = Counter()
    store = FileStore(scratch / "notes")
    target = scratch / "notes" / NOTE_ID[4:] / "000001.md"
    target.parent.mkdir(parents=True, exist_ok=True)

    @fuzz_inputs()
    def run(rng: Random) -> None:
        data = note_file(rng)
        try:
            record = load_note(data, path="fuzz.md")
        except RecordError:
            record = None
        if record is not None:
            # The codec's promise: what was read is written back to bytes that read the same.
            again = load_note(dump_note(record), path="again.md")
            assert again.canonical_bytes() == record.canonical_bytes()
        outcomes["parsed" if record is not None else "refused"] += 1
        target.write_bytes(data)
        before = snapshot(scratch, ("notes",))
        with contextlib.suppress(AgentMemoryError):
            store.get(NOTE_ID)
        problems = store.check()
        assert all(isinstance(p, AgentMemoryError) for p in problems)
        assert (problems == []) == (record is not None and record.id == NOTE_ID)
        assert snapshot(scratch, ("notes",)) == before

    run()
    record_figures("fuzz-notes", **outcomes)


# ---------------------------------------------------------------------- MemoryFiles


@pytest.fixture(scope="module")
def import_template(scratch: Path) -> Path:
    """A store and log holding one record: what every fuzzed import starts from."""
    root = scratch / "import-template"
    store, log = FileStore(root / "notes"), JsonlLog(root / "log")
    held = MemoryRecord.create(
        type="fact",
        body="The staging host is db-2.",
        provenance=Provenance("conversation", "s-1"),
        created_at=T0,
    )
    store.put(held)
    log.append("put", actor="owner", record_ids=(held.id,), now=T0)
    return root


def test_any_memory_file_imports_whole_or_not_at_all(scratch: Path, import_template: Path) -> None:
    outcomes: Counter[str] = Counter()
    root = scratch / "import"
    shutil.copytree(import_template, root)
    before = snapshot(root, ("notes", "log"))
    store, log = FileStore(root / "notes"), JsonlLog(root / "log")

    @fuzz_inputs()
    def run(rng: Random) -> None:
        data, verify = memory_file(rng), rng.random() < 0.5
        trusted = [address_of(KEYS)] if rng.random() < 0.5 else []
        try:
            loaded = MemoryFile.loads(data, path="fuzz.json")
            report = import_memory_file(
                store, loaded, verify=verify, trusted_signers=trusted, path="fuzz.json", log=log
            )
        except AgentMemoryError:
            assert snapshot(root, ("notes", "log")) == before, "a refused import changed the store or log"
            outcomes["refused"] += 1
            return
        assert store.check() == []
        log.verify()
        for record_id in report.added:
            stored = store.get(record_id)
            if record_id in report.tainted or not verify:
                assert "external" in (stored.taint or ())
        outcomes["imported"] += 1
        # Back to the template for the next input: an import may add, erase or supersede.
        if snapshot(root, ("notes", "log")) != before:
            shutil.rmtree(root)
            shutil.copytree(import_template, root)

    run()
    record_figures("fuzz-memory-files", **outcomes)


# ---------------------------------------------------------------------- inbox lines


def test_parsing_an_inbox_accounts_for_every_line_and_never_raises() -> None:
    outcomes: Counter[str] = Counter()

    @fuzz_inputs()
    def run(rng: Random) -> None:
        text = inbox_text(rng)
        parsed = parse_inbox(text)
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        substantive = {
            number
            for number, line in enumerate(lines, start=1)
            if line.rstrip() and not HEADER.match(line.rstrip())
        }
        numbers = [item.line for item in parsed.items] + [problem.line for problem in parsed.problems]
        assert sorted(numbers) == sorted(substantive), "a line was dropped or counted twice"
        outcomes["items"] += len(parsed.items)
        outcomes["problems"] += len(parsed.problems)
        outcomes["inputs"] += 1

    run()
    record_figures("fuzz-inbox-parse", **outcomes)


@pytest.fixture(scope="module")
def inbox_home(scratch: Path) -> Path:
    """A Home for the capture and archive fuzz tests (restored between inputs)."""
    return make_home(scratch / "inbox-home")


def test_a_capture_appends_a_line_that_reads_back_exactly_or_writes_nothing(inbox_home: Path) -> None:
    outcomes: Counter[str] = Counter()
    home = Home.open(inbox_home)

    @fuzz_inputs()
    def run(rng: Random) -> None:
        text, source = fuzz_text(rng), fuzz_text(rng)
        subject = fuzz_text(rng) if rng.random() < 0.6 else None
        kind = rng.choice(["state", "knowledge", "fact", ""])
        taint = [fuzz_text(rng) for _ in range(rng.randrange(3))]
        before = snapshot(inbox_home, ("log", "archive"), files=("inbox.md",))
        try:
            item = capture(home, text, kind=kind, source=source, subject=subject, taint=taint, at=T0)
        except AgentMemoryError:
            assert snapshot(inbox_home, ("log", "archive"), files=("inbox.md",)) == before
            outcomes["refused"] += 1
            return
        read = read_inbox(home)
        assert read.problems == ()
        [found] = [i for i in read.items if i.id == item.id]
        assert (found.text, found.source, found.subject, found.taint) == (
            item.text,
            item.source,
            item.subject,
            item.taint,
        )
        (inbox_home / "inbox.md").write_bytes(before["inbox.md"])
        outcomes["captured"] += 1

    run()
    record_figures("fuzz-inbox-capture", **outcomes)


def test_archiving_any_inbox_either_archives_every_item_or_writes_nothing(inbox_home: Path) -> None:
    outcomes: Counter[str] = Counter()
    home = Home.open(inbox_home)

    @fuzz_inputs()
    def run(rng: Random) -> None:
        text = inbox_text(rng)
        (inbox_home / "inbox.md").write_text(text, encoding="utf-8", newline="")
        before = snapshot(inbox_home, ("log", "archive"), files=("inbox.md",))
        try:
            result = archive_inbox(home, now=T0)
        except AgentMemoryError:
            assert snapshot(inbox_home, ("log", "archive"), files=("inbox.md",)) == before
            outcomes["refused"] += 1
            return
        assert check_archive(home) == []
        assert len(result.item_ids) == len(parse_inbox(text).items)
        for item_id in result.item_ids:
            day = item_id[4:14]
            assert f"[{item_id}]" in (inbox_home / "archive" / f"{day}.md").read_text("utf-8")
        home.log().verify()
        restore(inbox_home, {k: v for k, v in before.items() if k != "inbox.md"}, ("log", "archive"))
        outcomes["archived" if result.item_ids else "skipped"] += 1

    run()
    record_figures("fuzz-archive-inbox", **outcomes)


# ---------------------------------------------------------------------- memory.toml


def test_any_memory_toml_loads_or_is_refused_with_a_config_error(scratch: Path) -> None:
    outcomes: Counter[str] = Counter()
    root = make_home(scratch / "toml-home")
    path = root / "memory.toml"
    template = path.read_text("utf-8")

    @fuzz_inputs()
    def run(rng: Random) -> None:
        text = toml_text(rng, template)
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            settings = Settings.load(path)
        except AgentMemoryError:
            outcomes["refused"] += 1
            return
        finally:
            path.write_text(template, encoding="utf-8")
        # What loads is what init would write back: the template reads as the same settings.
        path.write_text(settings.to_toml(), encoding="utf-8")
        try:
            assert Settings.load(path) == settings
            with contextlib.suppress(AgentMemoryError):
                Home.open(root).identity()
        finally:
            path.write_text(template, encoding="utf-8")
        outcomes["loaded"] += 1

    run()
    record_figures("fuzz-memory-toml", **outcomes)
