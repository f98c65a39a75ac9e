import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fg_agent_id import KeyPair

from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.records.signing import sign_record

T0 = datetime(2026, 1, 1, tzinfo=UTC)
COMMAND = shutil.which("agent-memory", path=str(Path(sys.executable).parent))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    assert COMMAND, "the agent-memory command is not installed next to this Python"
    return subprocess.run([COMMAND, *args], capture_output=True, text=True, check=False, timeout=60)


@pytest.fixture
def signed_file(tmp_path: Path, seed_keys: KeyPair) -> Path:
    source = Provenance(kind="conversation", ref="s-1")
    fact = MemoryRecord.create(type="fact", body="Uses Python 3.11.", provenance=source, created_at=T0)
    path = tmp_path / "export.json"
    path.write_bytes(
        MemoryFile(created_at=T0, records=(sign_record(fact, seed_keys),)).sign(seed_keys).dumps()
    )
    return path


def test_verify_prints_one_line_per_record_and_exits_zero(signed_file: Path) -> None:
    result = run("verify", str(signed_file))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("ok   memory-file") and "signed by amp:key:" in lines[0]
    assert lines[1].startswith("ok   mem:")


def test_verify_fails_with_exit_one_when_a_record_was_tampered(signed_file: Path) -> None:
    wire = json.loads(signed_file.read_text(encoding="utf-8"))
    wire["records"][0]["tags"] = ["tampered"]
    signed_file.write_text(json.dumps(wire), encoding="utf-8")
    result = run("verify", "--json", str(signed_file))
    assert result.returncode == 1
    findings = json.loads(result.stdout)
    assert [f["ok"] for f in findings] == [False, False]
    assert findings[1]["record_id"].startswith("mem:") and findings[1]["field"] == "signature"


def test_verify_reports_an_unreadable_file_and_keeps_going(signed_file: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_bytes(b"\xff\xfe not json")
    result = run("verify", str(broken), str(tmp_path / "missing.json"), str(signed_file))
    assert result.returncode == 1
    assert "broken.json: not UTF-8" in result.stdout
    assert "missing.json: cannot read" in result.stdout
    assert result.stdout.count("ok   ") == 2
    assert broken.read_bytes() == b"\xff\xfe not json"


def test_an_unknown_command_is_a_usage_error_with_exit_two() -> None:
    result = run("no-such-command")
    assert result.returncode == 2
    assert "No such command" in result.stderr
