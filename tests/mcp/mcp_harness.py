"""The SDK's real MCP client, driven synchronously, against ``agent-memory serve`` subprocesses.

The server always runs as a user runs it: the installed command in a subprocess, over stdio
or streamable HTTP. The async client runs in an anyio blocking portal so tests stay plain
functions.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, Implementation, TextResourceContents, Tool

from agent_memory.home import Home
from agent_memory.search.recipes import SearchSettings, splice_search

COMMAND = shutil.which("agent-memory", path=str(Path(sys.executable).parent))
CLIENT_NAME = "pytest-agent"
TOOLS = {
    *("remember", "recall", "status", "supersede", "resolve", "review", "decide_pending", "feedback"),
    *("consolidate", "withdraw", "reinstate", "forget", "redact"),
    *("nas_remember", "nas_recall"),
}
START_SECONDS = 30.0


class Connected:
    """A connected MCP client, called synchronously.

    Attributes:
        http: The HTTP client of a streamable HTTP connection made with headers (its
            ``headers`` may be changed between calls), else ``None``.
    """

    def __init__(
        self, portal: BlockingPortal, client: Client, http: httpx2.AsyncClient | None = None
    ) -> None:
        self._portal = portal
        self._client = client
        self.http = http

    def call(self, name: str, **arguments: Any) -> CallToolResult:
        return self._portal.call(self._client.call_tool, name, arguments)

    def ok(self, name: str, **arguments: Any) -> dict[str, Any]:
        """Call a tool that must succeed and return its structured content."""
        result = self.call(name, **arguments)
        assert not result.is_error, result.content
        assert result.structured_content is not None
        return result.structured_content

    def error(self, name: str, **arguments: Any) -> str:
        """Call a tool that must fail and return its error text (one text block)."""
        result = self.call(name, **arguments)
        assert result.is_error, result.structured_content
        [text] = [c.text for c in result.content if c.type == "text"]
        return text

    def tools(self) -> list[Tool]:
        return self._portal.call(self._client.list_tools).tools

    def resources(self) -> list[str]:
        return [str(r.uri) for r in self._portal.call(self._client.list_resources).resources]

    def read(self, uri: str) -> str:
        contents = self._portal.call(self._client.read_resource, uri).contents
        assert len(contents) == 1 and isinstance(contents[0], TextResourceContents)
        return contents[0].text


Connect = Callable[..., AbstractContextManager[Connected]]


def stdio_params(home: Path, *options: str) -> StdioServerParameters:
    """Launch parameters for ``agent-memory serve --home HOME OPTIONS…`` over stdio."""
    assert COMMAND is not None
    return StdioServerParameters(
        command=COMMAND, args=["serve", "--home", str(home), *options], env=dict(os.environ)
    )


@contextmanager
def connect(
    target: StdioServerParameters | str, *, headers: dict[str, str] | None = None, mode: str = "auto"
) -> Iterator[Connected]:
    """Connect the SDK's client to a stdio command or an HTTP URL (optionally with headers and a
    protocol mode: ``auto`` negotiates 2026-07-28, ``legacy`` the handshake with a session id)."""
    info = Implementation(name=CLIENT_NAME, version="1.0")
    with start_blocking_portal() as portal:
        if headers is None:
            client = Client(target, client_info=info, mode=mode)
            with portal.wrap_async_context_manager(client) as entered:
                yield Connected(portal, entered)
            return
        assert isinstance(target, str), "headers are for HTTP connections"
        http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
        with portal.wrap_async_context_manager(http):
            client = Client(streamable_http_client(target, http_client=http), client_info=info, mode=mode)
            with portal.wrap_async_context_manager(client) as entered:
                yield Connected(portal, entered, http)


@contextmanager
def http_server(home: Path, log_dir: Path, *options: str) -> Iterator[str]:
    """Run ``agent-memory serve --http`` on a free port; yield its URL; stop it (SIGTERM), which
    must exit cleanly."""
    assert COMMAND is not None
    port = free_port()
    log = log_dir / f"serve-{port}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [COMMAND, "serve", "--http", "--port", str(port), "--home", str(home), *options],
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_listening(process, port, log)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        code = process.wait(timeout=15)
    assert code == 0, log.read_text(encoding="utf-8")


def grant(home: Path, actor: str, *grants: str) -> None:
    """Give ``actor`` the ``grants`` in the Home's ``memory.toml`` (``[actors.grants]``)."""
    toml = home / "memory.toml"
    text = toml.read_text(encoding="utf-8")
    listed = ", ".join(f'"{g}"' for g in grants)
    assert "\n[trust]" in text
    toml.write_text(text.replace("\n[trust]", f'\n"{actor}" = [{listed}]\n\n[trust]', 1), encoding="utf-8")


def new_home(path: Path) -> Path:
    """Make a Home (no git) whose recall reads BM25 alone: tests match words, and start faster."""
    if COMMAND is None:
        pytest.fail("the agent-memory command is not installed in this environment")
    root = Home.init(path, git=False).root
    toml = root / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
    return root


def stored(home: Path) -> dict[str, bytes]:
    """Every stored byte of the Home's truth: note versions, the operation log and proposals."""
    return {
        str(p.relative_to(home)): p.read_bytes()
        for folder in ("notes", "log", "proposals")
        for p in sorted((home / folder).rglob("*"))
        if p.is_file()
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until_listening(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    for _ in range(int(START_SECONDS / 0.05)):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.05):
                return
        except OSError:
            pass
        try:
            process.wait(timeout=0.05)  # doubles as the pause between attempts
        except subprocess.TimeoutExpired:
            continue
        pytest.fail(f"serve --http exited with {process.returncode}: {log.read_text(encoding='utf-8')}")
    pytest.fail(f"serve --http did not listen on {port} within {START_SECONDS} s")
