"""Fixtures for the MCP server tests: a Home per test, and connections over stdio.

Starting a server costs seconds (the SDK's import alone is most of it), so modules that
can share one Home start their servers once per module (see :func:`mcp_harness.new_home`);
these per-test fixtures are for tests that need a Home of their own.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from mcp_harness import COMMAND, Connect, Connected, connect, new_home, stdio_params

from agent_memory.home import Home


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Key files go to the user's config folder; the server subprocess inherits this one.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.fixture
def default_home(tmp_path: Path) -> Path:
    """A fresh Home (no git) with the default search recipes, as ``agent-memory init`` makes it."""
    if COMMAND is None:
        pytest.fail("the agent-memory command is not installed in this environment")
    return Home.init(tmp_path / "home", git=False).root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fresh Home whose recall reads BM25 alone: these tests match words, and start faster."""
    return new_home(tmp_path / "home")


@pytest.fixture
def stdio() -> Connect:
    """Return ``connect(home, *serve_options)``: spawn ``agent-memory serve`` and connect over stdio."""

    def spawn(home: Path, *options: str) -> AbstractContextManager[Connected]:
        return connect(stdio_params(home, *options))

    return spawn
