"""The README's Python example runs as written, on both axes (issue 24 item 6)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from agent_memory.home import Home

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_python_example_runs_and_names_type_and_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path))
    Home.init(tmp_path / "memory", timezone="UTC", git=False)
    block = README.read_text(encoding="utf-8").split("```python\n", 1)[1].split("```", 1)[0]
    assert 'type="preference"' in block and 'kind="state"' in block
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block, "README.md", "exec"), {})  # noqa: S102 - the README's own example
    assert "Prefers tabs over spaces." in printed.getvalue()
    from agent_memory.memory import Memory

    with Memory.open(tmp_path / "memory") as memory:
        by_body = {r.body: r for r in memory.store.list()}
    assert by_body["Prefers tabs over spaces."].type.value == "fact"
    assert "preference" in by_body["Prefers tabs over spaces."].tags
    assert by_body["Staging runs on db-4."].subject == "host:staging"
