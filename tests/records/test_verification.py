"""verify on a Home folder checks its notes only."""

from pathlib import Path

import pytest

from agent_memory.home import Home
from agent_memory.memory import Memory
from agent_memory.records.verify import verify_paths


def test_verifying_a_home_folder_checks_only_its_notes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    Home.init(tmp_path / "h", git=False)
    with Memory.open(tmp_path / "h") as memory:
        memory.remember("Staging runs on db-3.", source="t")
        memory.recall("staging")
    findings = list(verify_paths([tmp_path / "h"]))
    assert [f.ok for f in findings] == [True]
    assert findings[0].path.startswith(str(tmp_path / "h" / "notes"))
