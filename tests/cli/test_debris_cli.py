"""Issue 20 case 4 as a user sees it: ``doctor`` names a killed write's debris, ``--fix`` removes it."""

from __future__ import annotations

from installed import Cli


def test_doctor_names_and_doctor_fix_removes_temp_files_and_empty_record_folders(cli: Cli) -> None:
    home = cli.home()
    record_id = cli.ok("remember", "Tea is served at four.", "--source", "test", "--home", str(home)).strip()
    folder = home / "notes" / record_id.removeprefix("mem:")
    temp = folder / ".tmp-0123456789abcdef0123456789abcdef"
    temp.write_bytes(b"---\nhalf")
    empty = home / "notes" / ("e" * 32)
    empty.mkdir()
    report = cli("doctor", "--home", str(home))
    assert "warn debris" in report.stdout, report.stdout
    assert f"notes/{folder.name}/{temp.name}" in report.stdout and f"notes/{empty.name}/" in report.stdout
    fixed = cli("doctor", "--fix", "--home", str(home))
    assert "debris: removed 1 temp file(s) and 1 empty record folder(s)" in fixed.stdout + fixed.stderr
    assert not temp.exists() and not empty.exists()
    assert [p.name for p in folder.iterdir()] == ["000001.md"]
