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

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, Implementation, TextResourceContents, Tool

COMMAND = shutil.which("agent-memory", path=str(Path(sys.executable).parent))
CLIENT_NAME = "pytest-agent"
TOOLS = {
    *("remember", "recall", "status", "supersede", "resolve", "review", "feedback"),
    *("nas_remember", "nas_recall"),
}
START_SECONDS = 30.0


class Connected:
    """A connected MCP client, called synchronously."""

    def __init__(self, portal: BlockingPortal, client: Client) -> None:
        self._portal = portal
        self._client = client

    def call(self, name: str, **arguments: Any) -> CallToolResult:
        return self._portal.call(self._client.call_tool, name, arguments)

    def ok(self, name: str, **arguments: Any) -> dict[str, Any]:
        """Call a tool that must succeed and return its structured content."""
        result = self.call(name, **arguments)
        assert not result.is_error, result.content
        assert result.structured_content is not None
        return result.structured_content

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
def connect(target: StdioServerParameters | str) -> Iterator[Connected]:
    with start_blocking_portal() as portal:
        client = Client(target, client_info=Implementation(name=CLIENT_NAME, version="1.0"))
        with portal.wrap_async_context_manager(client) as entered:
            yield Connected(portal, entered)


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
