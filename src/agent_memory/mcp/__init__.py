"""agent-memory's MCP server (issue 8 item 3): the porcelain over stdio or streamable HTTP.

Needs the ``mcp`` extra (the official SDK, 2.x). Importing this package without it raises an
``ImportError`` that says how to install it (origin-notes §1.18), so ``agent-memory serve``
can print one line and a hint instead of a traceback.
"""

from __future__ import annotations

try:
    from mcp.server.mcpserver import MCPServer as _SDKServer  # noqa: F401 - presence check only
except ImportError as exc:  # absent, or a 1.x SDK without mcpserver
    raise ImportError(
        "the agent-memory MCP server needs the MCP SDK 2.x (mcp==2.3.0); install it with: "
        "pip install 'agent-memory[mcp]'",
        name="mcp",
    ) from exc

from agent_memory.mcp.calls import TAINT_HEADER, one_line
from agent_memory.mcp.server import RESOURCES, Session, build_server, serve

__all__ = ["RESOURCES", "TAINT_HEADER", "Session", "build_server", "one_line", "serve"]
