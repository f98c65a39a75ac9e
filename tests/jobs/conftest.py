"""Fixtures for the jobs: each test gets its own config folder and a Home in Tokyo."""

from __future__ import annotations

from pathlib import Path

import pytest
from jobkit import T0, ZONE

from agent_memory.home import Home


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home.init(tmp_path / "home", timezone=ZONE, git=False, now=T0)
