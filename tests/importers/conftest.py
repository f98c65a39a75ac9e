"""Fixtures for importers and the demo: a private config folder, a Home in Berlin, a small git repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from importkit import README, ZONE, git

from agent_memory.home import Home


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    Home.init(tmp_path / "home", timezone=ZONE, git=False)
    return tmp_path / "home"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A small git repository: a README, a docs page and two commits by two authors."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text(README, encoding="utf-8")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "Start the tiles library\n\nThe first layout engine.")
    (path / "docs").mkdir()
    (path / "docs" / "grout.md").write_text(
        "# Grout\n\nUse sanded grout for joints wider than 3 mm.\n", "utf-8"
    )
    git(path, "add", "docs")
    git(
        path,
        "commit",
        "-q",
        "-m",
        "Document grout widths",
        author="Grace Hopper",
        date="2024-04-02T09:30:00Z",
    )
    return path
