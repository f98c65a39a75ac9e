"""Plan and write one agent binding: the hot-entry block and the MCP registration (issue 8 item 4).

:func:`plan_binding` reads the agent's files under the project and returns the full new text
of each (:class:`FileChange`), writing nothing; :func:`apply_changes` writes those that
change, each atomically. Planning every file before writing any means a file that cannot be
merged (invalid JSON, stray block markers) stops the whole binding with nothing written.

Invariants: files are written only inside the project; an instruction file that is a
symbolic link (``CLAUDE.md -> AGENTS.md``) is updated through the link, never replaced by
a copy; an unchanged file is not rewritten.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_memory.bindings.agents import AGENTS, Agent, server_entry
from agent_memory.bindings.block import render_block, upsert_block
from agent_memory.bindings.mcp_config import SERVER_NAME, merge_json_server, merge_toml_server
from agent_memory.errors import ConfigError

__all__ = ["FileChange", "apply_changes", "default_server_command", "memory_root", "plan_binding"]


@dataclass(frozen=True, slots=True)
class FileChange:
    """The new text of one file of a binding.

    Attributes:
        path: The file (absolute; a symbolic link's target when the file is one).
        shown: The file as the user named it, relative to the project.
        role: ``instructions`` (the hot-entry block) or ``mcp`` (the server registration).
        action: ``create``, ``update`` or ``unchanged``.
        text: The file's full text after the binding.
    """

    path: Path
    shown: str
    role: str
    action: str
    text: str

    def to_json(self) -> dict[str, Any]:
        """Return ``{"path", "role", "action"}`` (the path as shown)."""
        return {"path": self.shown, "role": self.role, "action": self.action}


def default_server_command() -> list[str]:
    """Return the command line that starts this agent-memory, for an agent to run.

    The running program's absolute path when it is the ``agent-memory`` script (an agent
    started from another shell has no virtualenv on its ``PATH``); else this Python with
    ``-m agent_memory``.
    """
    running = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if running is not None and running.name == "agent-memory" and running.exists():
        return [str(running.absolute())]
    return [sys.executable, "-m", "agent_memory"]


def memory_root(home: Path, project: Path) -> str:
    """Return how the instruction file names the Home: relative to ``project`` when inside it."""
    home, project = home.resolve(), project.resolve()
    if home.is_relative_to(project):
        return home.relative_to(project).as_posix() or "."
    return str(home)


def plan_binding(agent_name: str, project: Path, home: Path, *, command: Sequence[str]) -> list[FileChange]:
    """Return the changes that bind ``agent_name`` in ``project`` to the Home at ``home``.

    Args:
        agent_name: A key of :data:`~agent_memory.bindings.agents.AGENTS`.
        project: The project folder (the agent's working folder).
        home: The Home (registered by its absolute path in the MCP configuration).
        command: The command line that runs agent-memory (``serve --home … --agent …`` is added).

    Raises:
        ConfigError: Unknown agent; a file is not UTF-8, is a folder, holds stray block
            markers, or is configuration that cannot be merged (the file named).
    """
    agent = AGENTS.get(agent_name)
    if agent is None:
        raise ConfigError(f"unknown agent {agent_name!r} (one of: {', '.join(AGENTS)})", field="agent")
    changes = [_instructions(agent, project, home)]
    if agent.mcp is not None:
        serve = [*command, "serve", "--home", str(home.resolve()), "--agent", agent.name]
        changes.append(_mcp(agent, project, serve))
    return changes


def apply_changes(changes: Sequence[FileChange]) -> None:
    """Write every change that is not ``unchanged``, creating parent folders; each file atomically.

    Raises:
        ConfigError: The file system refused (the file named); files written before stay written.
    """
    for change in changes:
        if change.action == "unchanged":
            continue
        try:
            change.path.parent.mkdir(parents=True, exist_ok=True)
            mode = change.path.stat().st_mode & 0o7777 if change.path.exists() else 0o644
            temp = change.path.parent / f".{change.path.name}.{uuid.uuid4().hex}.tmp"
            try:
                temp.write_text(change.text, encoding="utf-8")
                os.chmod(temp, mode)
                os.replace(temp, change.path)
            finally:
                temp.unlink(missing_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot write: {exc.strerror or exc}", path=change.shown) from None


def _instructions(agent: Agent, project: Path, home: Path) -> FileChange:
    path, existing = _read(project, agent.instructions)
    block = render_block(memory_root(home, project), mcp=agent.mcp is not None)
    text = upsert_block(existing, block, path=agent.instructions)
    if existing is None and agent.frontmatter:
        text = agent.frontmatter + text
    return FileChange(path, agent.instructions, "instructions", _action(existing, text), text)


def _mcp(agent: Agent, project: Path, command: list[str]) -> FileChange:
    target = agent.mcp
    assert target is not None  # noqa: S101 - checked by the caller
    path, existing = _read(project, target.path)
    if target.format == "toml":
        text = merge_toml_server(existing, server_entry(target.shape, command), path=target.path)
    else:
        container, shape = target.container, target.shape
        if shape == "opencode" and _opencode_v2(existing):
            container, shape = ("mcp", "servers"), "opencode-v2"
        text = merge_json_server(
            existing, container, server_entry(shape, command), path=target.path, new_file=target.new_file
        )
        if existing is not None and _same_json(existing, text):
            text = existing
    return FileChange(path, target.path, "mcp", _action(existing, text), text)


def _opencode_v2(existing: str | None) -> bool:
    """Whether an opencode.json already uses OpenCode 2's ``mcp.servers`` layout."""
    try:
        document = json.loads(existing or "{}")
    except json.JSONDecodeError:
        return False  # merge_json_server reports the file
    mcp = document.get("mcp") if isinstance(document, dict) else None
    if not isinstance(mcp, dict):
        return False
    servers = mcp.get("servers")
    return isinstance(servers, dict) and "type" not in servers and SERVER_NAME not in mcp


def _same_json(existing: str, text: str) -> bool:
    try:
        return bool(json.loads(existing) == json.loads(text))
    except json.JSONDecodeError:
        return False


def _read(project: Path, relative: str) -> tuple[Path, str | None]:
    """Return the file to write (through a symbolic link) and its text, or ``None`` if absent."""
    path = project / relative
    target = path.resolve() if path.is_symlink() else path
    if target.is_dir():
        raise ConfigError("is a folder, not a file", path=relative)
    try:
        return target, target.read_text(encoding="utf-8")
    except FileNotFoundError:
        return target, None
    except UnicodeDecodeError:
        raise ConfigError("is not UTF-8 text; nothing written", path=relative) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", path=relative) from None


def _action(existing: str | None, text: str) -> str:
    if existing is None:
        return "create"
    return "unchanged" if existing == text else "update"
