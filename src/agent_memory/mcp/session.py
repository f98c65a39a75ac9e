"""Who an MCP server acts as: :class:`Session`, fixed for the whole server (DESIGN.md §8 ``serve``).

Its own module so that the server (which builds the tools) and the tools (which read the
session) both import it and neither imports the other. A value: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from pathlib import Path

from agent_memory.errors import AgentMemoryError
from agent_memory.mcp.calls import LABEL

__all__ = ["Session"]


@dataclass(frozen=True, slots=True)
class Session:
    """Who an MCP server acts as, and what its writes inherit.

    Attributes:
        home: The Home folder served.
        agent: Agent name; the actor is ``agent:<name>`` (letters, digits, ``.``, ``_``, ``-``; ≤ 64).
        taint: Labels every write of every connection inherits (e.g. ``external``); a tainted
            record is quarantined.
        zone: Time zone of the Home's local day (names the default source).

    Raises:
        AgentMemoryError: An empty or malformed agent name or taint label (field named).
    """

    home: Path
    agent: str = "mcp"
    taint: tuple[str, ...] = ()
    zone: tzinfo = UTC

    def __post_init__(self) -> None:
        if not LABEL.match(self.agent):
            raise AgentMemoryError(
                f"agent name {self.agent!r} must be 1-64 letters, digits, '.', '_' or '-'", field="agent"
            )
        for label in self.taint:
            if not LABEL.match(label):
                raise AgentMemoryError(
                    f"taint label {label!r} must be 1-64 letters, digits, '.', '_' or '-'", field="taint"
                )

    @property
    def actor(self) -> str:
        """The actor every event of this session names: ``agent:<name>``."""
        return f"agent:{self.agent}"

    def default_source(self, client: str | None, now: datetime) -> str:
        """Return ``mcp:<agent>@<local day>``, plus ``#<client>`` when the client named itself otherwise."""
        base = f"mcp:{self.agent}@{now.astimezone(self.zone).date().isoformat()}"
        return f"{base}#{client}" if client and client != self.agent else base
