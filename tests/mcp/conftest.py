"""Fixtures for the MCP server tests: a Home per test, and connections over stdio and HTTP."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest
from mcp_harness import COMMAND, Connect, Connected, connect, free_port, stdio_params, wait_until_listening

from agent_memory.home import Home
from agent_memory.search.recipes import SearchSettings, splice_search


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
def home(default_home: Path) -> Path:
    """A fresh Home whose recall reads BM25 alone: these tests match words, and start faster."""
    toml = default_home / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
    return default_home


@pytest.fixture
def stdio() -> Connect:
    """Return ``connect(home, *serve_options)``: spawn ``agent-memory serve`` and connect over stdio."""

    def spawn(home: Path, *options: str) -> AbstractContextManager[Connected]:
        return connect(stdio_params(home, *options))

    return spawn


@pytest.fixture
def http(tmp_path: Path) -> Iterator[Connect]:
    """Return ``connect(home, *serve_options)``: start ``serve --http`` on a free port and connect to it.

    Every server started is terminated (SIGTERM) at the end of the test and must exit cleanly.
    """
    started: list[tuple[subprocess.Popen[bytes], Path]] = []

    @contextmanager
    def start(home: Path, *options: str) -> Iterator[Connected]:
        assert COMMAND is not None
        port = free_port()
        log = tmp_path / f"serve-{port}.log"
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [COMMAND, "serve", "--http", "--port", str(port), "--home", str(home), *options],
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        started.append((process, log))
        wait_until_listening(process, port, log)
        with connect(f"http://127.0.0.1:{port}/mcp") as connected:
            yield connected

    yield start
    for process, log in started:
        process.terminate()
        code = process.wait(timeout=15)
        assert code == 0, log.read_text(encoding="utf-8")
