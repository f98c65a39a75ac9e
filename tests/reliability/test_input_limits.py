"""Input limits: oversize, deep, tricky, tampered and hand-edited input (issue 11 item 5).

Each case ends in a clear ``AgentMemoryError`` naming what is wrong, or a ``doctor`` finding;
never another exception, never a silent change: what was stored stays byte-identical, and a
file outside the Home is neither read into memory nor written, whatever link points at it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from reliability_kit import T0, make_home, snapshot

from agent_memory.doctor.diagnose import diagnose, repair
from agent_memory.errors import (
    AgentMemoryError,
    ConfigError,
    RecordError,
    ScreenError,
    SignatureError,
    StoreError,
)
from agent_memory.home import Home
from agent_memory.jobs.archive import archive_inbox, check_archive, find_anchor
from agent_memory.jobs.inbox import capture
from agent_memory.memory import Memory
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.note import dump_note, load_note
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.settings import Settings
from agent_memory.transfer.exchange import export_memory_file, import_memory_file

TEXT = "The staging host is db-2."


def home_with_a_record(root: Path) -> tuple[Path, str]:
    make_home(root)
    with Memory.open(root) as memory:
        record_id = memory.remember(TEXT, source="ada", now=T0).record_id
    return root, record_id


def note_path(root: Path, record_id: str, version: int = 1) -> Path:
    return root / "notes" / record_id[4:] / f"{version:06d}.md"


def failed_checks(root: Path) -> dict[str, tuple[str, ...]]:
    return {c.name: c.details for c in diagnose(Home.open(root)) if not c.ok}


def refused_cleanly(action: Callable[[], Any], *kinds: type[AgentMemoryError]) -> AgentMemoryError:
    """Run ``action``; it must raise one of ``kinds`` (``AgentMemoryError`` by default)."""
    with pytest.raises(kinds or (AgentMemoryError,)) as info:
        action()
    return info.value


# ---------------------------------------------------------------------- oversize and deep input


def test_a_body_over_the_screen_limit_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    root, _ = home_with_a_record(tmp_path / "home")
    body = ("zebra quartz lighthouse " * 200_000).strip()  # 4.8 MB, over the gate's 1 MiB
    before = snapshot(root, ("notes", "log"))
    with Memory.open(root) as memory, pytest.raises(ScreenError, match="over the limit"):
        memory.remember(body, source="big", now=T0)
    assert snapshot(root, ("notes", "log")) == before
    assert failed_checks(root) == {}


def test_a_large_body_is_stored_whole_and_recalled_whole_or_left_out(tmp_path: Path) -> None:
    root, _ = home_with_a_record(tmp_path / "home")
    body = ("zebra quartz lighthouse " * 40_000).strip()  # 0.96 MB, 240,000 tokens: under the limit
    with Memory.open(root) as memory:
        record_id = memory.remember(body, source="big", now=T0).record_id
        assert memory.get(record_id).body == body
        small = memory.recall("zebra quartz", budget_tokens=2000, now=T0)
        whole = memory.recall("zebra quartz", budget_tokens=2_000_000, now=T0)
    assert record_id not in small.ids  # never cut to fit: left out of a budget it exceeds
    assert [r.record.body for r in whole.records if r.record.id == record_id] == [body]
    assert failed_checks(root) == {}


def test_a_note_nested_thousands_deep_is_a_doctor_finding_and_the_rest_stays_readable(tmp_path: Path) -> None:
    root, record_id = home_with_a_record(tmp_path / "home")
    fake = "0123456789abcdef0123456789abcdef"
    deep = b"---\nid: mem:" + fake.encode() + b"\nslots: " + b"[" * 5000 + b"]" * 5000 + b"\n---\nbody\n"
    (root / "notes" / fake).mkdir()
    (root / "notes" / fake / "000001.md").write_bytes(deep)
    before = snapshot(root)
    error = refused_cleanly(lambda: load_note(deep, path="deep.md"), RecordError)
    assert "deep.md" in str(error)
    assert "notes" in failed_checks(root)
    with Memory.open(root) as memory:
        assert memory.recall("staging host", now=T0).ids == (record_id,)
    assert snapshot(root, ("notes",)) == {k: v for k, v in before.items() if k.startswith("notes/")}


def test_a_yaml_bomb_of_aliases_is_refused_without_expanding_it() -> None:
    lines = ["---", 'a: &a ["x","x","x","x","x","x","x","x","x"]']
    lines += [
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]" for i in range(20)
    ]
    error = refused_cleanly(
        lambda: load_note(("\n".join([*lines, "---", "body", ""])).encode(), path="bomb.md")
    )
    assert "aliases" in str(error)


def test_a_memory_file_nested_thousands_deep_is_refused_with_a_record_error_naming_the_file(
    tmp_path: Path,
) -> None:
    # Regression: the JSON parser's RecursionError escaped as a crash (found by the MemoryFile fuzzer).
    data = (
        b'{"created_at":"2026-01-01T00:00:00.000Z","records":[{"slots":'
        + b"[" * 100_000
        + b"]" * 100_000
        + b"}]}"
    )
    error = refused_cleanly(lambda: MemoryFile.loads(data, path="deep.json"), RecordError)
    assert error.path == "deep.json" and "nested deeper" in str(error)


def test_a_memory_toml_with_an_integer_python_cannot_hold_is_a_config_error(tmp_path: Path) -> None:
    # Regression: tomllib raised ValueError for a 5,000-digit integer (found by the memory.toml fuzzer).
    root = make_home(tmp_path / "home")
    toml = root / "memory.toml"
    toml.write_text(toml.read_text("utf-8") + "\n[x]\ny = " + "9" * 5000 + "\n", "utf-8")
    error = refused_cleanly(lambda: Settings.load(toml), ConfigError)
    assert error.path == str(toml)


def test_a_key_file_name_too_long_for_the_file_system_is_a_config_error(tmp_path: Path) -> None:
    # Regression: Path.exists raised OSError (ENAMETOOLONG) out of Home.identity (memory.toml fuzzer).
    root = make_home(tmp_path / "home")
    toml = root / "memory.toml"
    lines = toml.read_text("utf-8").split("\n")
    toml.write_text(
        "\n".join(f'key_file = "{"k" * 300}"' if ln.startswith("key_file") else ln for ln in lines)
    )
    refused_cleanly(lambda: Home.open(root).identity(), ConfigError)
    refused_cleanly(lambda: Memory.open(root), ConfigError)


# ---------------------------------------------------------------------- path tricks and links


@pytest.mark.parametrize(
    "record_id",
    [
        "mem:../../etc/passwd",
        "../notes",
        "/etc/passwd",
        "mem:" + "0" * 31 + "/",
        "mem:" + "A" * 32,
        "mem:\x00" * 8,
    ],
)
def test_an_id_with_path_tricks_is_refused_before_any_path_is_built(tmp_path: Path, record_id: str) -> None:
    root, _ = home_with_a_record(tmp_path / "home")
    before = snapshot(root)
    with Memory.open(root) as memory:
        refused_cleanly(lambda: memory.get(record_id), StoreError)
        refused_cleanly(lambda: memory.archive(record_id, "tidy", now=T0))
        refused_cleanly(lambda: memory.erase([record_id], reason="r", authority="a", now=T0))
        refused_cleanly(lambda: memory.supersede(record_id, "x", source="s", reason="r", now=T0))
    refused_cleanly(
        lambda: find_anchor(Home.open(root), "archive/../../etc/passwd#mem-2026-11-29-001"), RecordError
    )
    assert snapshot(root) == before


def _outside_record(base: Path) -> tuple[Path, str]:
    source = make_home(base / "elsewhere")
    with Memory.open(source) as memory:
        record_id = memory.remember("Outside-only zebraquartz text.", source="elsewhere", now=T0).record_id
    return source / "notes" / record_id[4:], record_id


def test_a_record_folder_linked_out_of_the_home_is_never_read(tmp_path: Path) -> None:
    root, record_id = home_with_a_record(tmp_path / "home")
    folder, outside_id = _outside_record(tmp_path)
    (root / "notes" / outside_id[4:]).symlink_to(folder, target_is_directory=True)
    refused_cleanly(lambda: Home.open(root).store().get(outside_id), StoreError)
    assert [r.id for r in Home.open(root).store().list()] == [record_id]
    assert "notes" in failed_checks(root)
    with Memory.open(root) as memory:
        assert memory.recall("zebraquartz", now=T0).ids == ()


@pytest.mark.parametrize(
    "name", ["notes", "log", "archive", ".cache", "inbox.md", "MEMORY.md", "conventions.md", "memory.toml"]
)
def test_a_home_part_linked_out_of_the_home_is_refused_at_open(tmp_path: Path, name: str) -> None:
    root, _ = home_with_a_record(tmp_path / "home")
    outside = tmp_path / "outside" / name
    outside.parent.mkdir()
    (root / name).rename(outside)
    (root / name).symlink_to(outside, target_is_directory=outside.is_dir())
    before = snapshot(tmp_path / "outside", (name,)) if outside.is_dir() else {name: outside.read_bytes()}
    error = refused_cleanly(lambda: Memory.open(root), ConfigError)
    assert name in str(error) and "link" in str(error)
    refused_cleanly(lambda: Home.open(root), ConfigError)
    after = snapshot(tmp_path / "outside", (name,)) if outside.is_dir() else {name: outside.read_bytes()}
    assert after == before


def test_a_log_file_linked_out_of_the_home_is_never_appended_to(tmp_path: Path) -> None:
    root, _ = home_with_a_record(tmp_path / "home")
    month = sorted((root / "log").glob("*.jsonl"))[-1]
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(month.read_bytes())
    month.unlink()
    month.symlink_to(outside)
    before = outside.read_bytes()

    def write() -> None:
        with Memory.open(root) as memory:
            memory.remember("Another fact.", source="s", now=T0)

    refused_cleanly(write)
    assert outside.read_bytes() == before
    assert "log" in failed_checks(root)


def test_an_inbox_or_archive_file_linked_out_of_the_home_is_never_written(tmp_path: Path) -> None:
    root, _ = home_with_a_record(tmp_path / "home")
    home = Home.open(root)  # opened before the links appear, as a long-running server would be
    outside = tmp_path / "outside.md"
    outside.write_text("# Inbox 2026-11-01\n\n", "utf-8")
    (root / "inbox.md").unlink()
    (root / "inbox.md").symlink_to(outside)
    refused_cleanly(lambda: capture(home, "A captured line.", source="s", at=T0))
    assert outside.read_text("utf-8") == "# Inbox 2026-11-01\n\n"
    (root / "inbox.md").unlink()
    (root / "inbox.md").write_text("# Inbox 2026-11-01\n\n", "utf-8")
    capture(home, "A captured line.", source="s", at=T0)
    day = root / "archive" / "2026-11-01.md"
    day.parent.mkdir(exist_ok=True)
    day.symlink_to(outside)
    refused_cleanly(lambda: archive_inbox(home, now=T0))
    assert outside.read_text("utf-8") == "# Inbox 2026-11-01\n\n"
    assert check_archive(home)


# ---------------------------------------------------------------------- tampering and hand edits


def tamper_signature(root: Path, record_id: str) -> bytes:
    """Change one character of a note's signature (its id still matches: the signature is not in it)."""
    path = note_path(root, record_id)
    data = path.read_bytes()
    start = data.index(b'signature: "') + len(b'signature: "')
    flipped = b"A" if data[start : start + 1] != b"A" else b"B"
    path.write_bytes(data[:start] + flipped + data[start + 1 :])
    return path.read_bytes()


def test_a_tampered_signature_is_a_doctor_finding_and_is_never_repaired(tmp_path: Path) -> None:
    root, record_id = home_with_a_record(tmp_path / "home")
    tampered = tamper_signature(root, record_id)
    found = failed_checks(root)
    assert "signatures" in found and record_id in " ".join(found["signatures"])
    repair(Home.open(root), diagnose(Home.open(root)))
    assert note_path(root, record_id).read_bytes() == tampered  # reported, never "fixed"


def test_a_record_whose_signature_fails_is_not_recalled(tmp_path: Path) -> None:
    root, record_id = home_with_a_record(tmp_path / "home")
    tamper_signature(root, record_id)
    with Memory.open(root) as memory:
        assert record_id not in memory.recall("staging host", now=T0).ids
        assert any(record_id in str(problem) for problem in memory.catalog.problems())


def test_a_memory_file_with_a_tampered_signature_imports_nothing(tmp_path: Path) -> None:
    root, _ = home_with_a_record(tmp_path / "home")
    with Memory.open(root) as memory:
        exported = export_memory_file(memory.store, keys=memory.identity, now=T0)
    target, _ = home_with_a_record(tmp_path / "target")
    wire = exported.to_wire()
    wire["signature"] = ("A" if wire["signature"][0] != "A" else "B") + wire["signature"][1:]
    home = Home.open(target)
    before = snapshot(target)
    refused_cleanly(
        lambda: import_memory_file(home.store(), MemoryFile.from_wire(wire), path="x.json", log=home.log()),
        SignatureError,
    )
    assert snapshot(target) == before


def test_a_tampered_log_line_is_a_doctor_finding_and_never_repaired(tmp_path: Path) -> None:
    root, _ = home_with_a_record(tmp_path / "home")
    month = sorted((root / "log").glob("*.jsonl"))[-1]
    month.write_bytes(month.read_bytes().replace(b'"actor":"owner"', b'"actor":"mallo"', 1))
    tampered = month.read_bytes()
    found = failed_checks(root)
    assert "log" in found and month.name in " ".join(found["log"])
    repair(Home.open(root), diagnose(Home.open(root)))
    assert month.read_bytes() == tampered
    try:
        with Memory.open(root) as memory:
            memory.recall("staging", now=T0)
    except AgentMemoryError:
        pass  # failing closed on a broken chain is a clear error too


def test_a_hand_edited_note_is_a_doctor_finding_and_stays_as_edited(tmp_path: Path) -> None:
    root, record_id = home_with_a_record(tmp_path / "home")
    path = note_path(root, record_id)
    path.write_bytes(path.read_bytes().replace(b"db-2", b"db-9"))
    edited = path.read_bytes()
    found = failed_checks(root)
    assert "notes" in found and record_id in " ".join(found["notes"])
    with Memory.open(root) as memory:
        refused_cleanly(lambda: memory.get(record_id), StoreError)
        assert memory.recall("staging host", now=T0).ids == ()
    repair(Home.open(root), diagnose(Home.open(root)))
    assert path.read_bytes() == edited


@pytest.mark.parametrize(
    "query",
    ['"', "NEAR(staging host)", "staging AND NOT host", "host:staging", "*", "^db", "(db", "db-2)", "'; --"],
)
def test_query_syntax_is_searched_as_words(tmp_path: Path, query: str) -> None:
    root, record_id = home_with_a_record(tmp_path / "home")
    with Memory.open(root) as memory:
        literal = memory.remember(f"Literal text: {query} stays as written.", source="s", now=T0).record_id
        result = memory.recall(query, now=T0)
    words = [w for w in "".join(c if c.isalnum() else " " for c in query).split() if len(w) > 1]
    if words:
        assert literal in result.ids or record_id in result.ids
    assert os.fspath(root)  # the Home is untouched by queries: see the recall fuzzer for the byte check


def test_a_supersede_the_gate_refuses_leaves_the_log_as_it_was(tmp_path: Path) -> None:
    # Regression: the write intent was logged before the gate refused, leaving an open intent
    # (found by the MCP argument fuzzer: supersede of an already superseded record).
    root, record_id = home_with_a_record(tmp_path / "home")
    with Memory.open(root) as memory:
        memory.supersede(record_id, "The staging host is db-3.", source="ada", reason="moved", now=T0)
        before = snapshot(root)
        refused_cleanly(
            lambda: memory.supersede(
                record_id, "The staging host is db-4.", source="ada", reason="again", now=T0
            )
        )
    assert snapshot(root) == before
    assert "intents" not in failed_checks(root)


def test_a_note_whose_field_name_is_not_in_nfc_is_refused_when_read() -> None:
    # Regression: such a note parsed, but its record had no canonical bytes (note fuzzer, soak).
    record = MemoryRecord.create(
        type="fact", body=TEXT, provenance=Provenance("conversation", "s"), created_at=T0
    )
    note = dump_note(record).replace(b"\n---\n", b'\n"e\\u0301x": 1\n---\n', 1)
    error = refused_cleanly(lambda: load_note(note, path="odd.md"), RecordError)
    assert error.path == "odd.md" and "NFC" in str(error)


def test_settings_with_control_characters_write_a_memory_toml_that_reads_back(tmp_path: Path) -> None:
    # Regression: to_toml wrote a raw NUL from a key file path, which no TOML reader accepts
    # (memory.toml fuzzer, soak).
    root = make_home(tmp_path / "home")
    toml = root / "memory.toml"
    lines = toml.read_text("utf-8").split("\n")
    toml.write_text(
        "\n".join('key_file = "a\\u0000b\\u007f"' if ln.startswith("key_file") else ln for ln in lines)
    )
    settings = Settings.load(toml)
    toml.write_text(settings.to_toml(), "utf-8")
    assert Settings.load(toml) == settings
