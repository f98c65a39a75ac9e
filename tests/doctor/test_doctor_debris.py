"""Issue 20 case 4: a writer killed during ``remember`` leaves temp files and empty record folders.

``doctor`` names each leftover (a warning: no acknowledged write is concerned) and
``doctor --fix`` removes exactly those, never a version file.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_memory.doctor.debris import find_debris
from agent_memory.doctor.diagnose import doctor
from agent_memory.home import Home
from agent_memory.memory import Memory

T0 = datetime(2026, 11, 29, 9, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.fixture
def home(tmp_path: Path) -> tuple[Home, str]:
    made = Home.init(tmp_path / "home", git=False, timezone="UTC", now=T0)
    with Memory.open(made.root) as memory:
        kept = memory.remember("Tea is served at four.", source="test", now=T0).record_id
    return made, kept


def _debris_check(home: Home) -> tuple[bool, bool, tuple[str, ...]]:
    (found,) = [c for c in doctor(home).checks if c.name == "debris"]
    return found.ok, found.warning, found.details


def test_doctor_names_stray_temp_files_and_empty_record_folders(home: tuple[Home, str]) -> None:
    made, kept = home
    notes = made.root / "notes"
    folder = notes / kept.removeprefix("mem:")
    (folder / ".tmp-0123456789abcdef0123456789abcdef").write_bytes(b"---\nhalf a version")
    (notes / ("a" * 32)).mkdir()
    lonely = notes / ("b" * 32)
    lonely.mkdir()
    (lonely / ".tmp-ffffffffffffffffffffffffffffffff").write_bytes(b"")
    ok, warning, details = _debris_check(made)
    assert ok and warning
    text = "\n".join(details)
    assert f"notes/{folder.name}/.tmp-0123456789abcdef0123456789abcdef" in text
    assert f"notes/{'a' * 32}/" in text and f"notes/{'b' * 32}/" in text
    assert f"notes/{folder.name}/:" not in text  # the folder of a real record is not empty


def test_doctor_fix_removes_the_debris_and_never_a_version_file(home: tuple[Home, str]) -> None:
    made, kept = home
    notes = made.root / "notes"
    folder = notes / kept.removeprefix("mem:")
    version = (folder / "000001.md").read_bytes()
    (folder / ".tmp-0123456789abcdef0123456789abcdef").write_bytes(version)  # even a whole copy
    (notes / ("a" * 32)).mkdir()
    stranger = notes / ("c" * 32)
    stranger.mkdir()
    (stranger / "README.txt").write_text("someone's file", encoding="utf-8")
    report = doctor(made, fix=True)
    assert any(line.startswith("debris: removed 1 temp file(s) and 1 empty") for line in report.fixed)
    assert sorted(p.name for p in folder.iterdir()) == ["000001.md"]
    assert (folder / "000001.md").read_bytes() == version
    assert not (notes / ("a" * 32)).exists()
    assert (stranger / "README.txt").exists()  # not ours to judge: never removed
    assert not find_debris(made)
    ok, warning, _ = _debris_check(made)
    assert ok and not warning
