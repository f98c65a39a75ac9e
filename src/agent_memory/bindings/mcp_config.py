"""Register the ``agent-memory`` MCP server in an agent's JSON or TOML configuration, merging.

JSON (``.mcp.json``, ``.gemini/settings.json``, ``.kiro/settings/mcp.json``,
``.vscode/mcp.json``, ``opencode.json``): the file is parsed, the server entry set under its
container key (``mcpServers``, ``servers``, ``mcp``…), and written back with two-space
indents; every other key and server is kept with its value and order.

TOML (Codex's ``.codex/config.toml``): Python reads TOML but has no writer, so the
``[mcp_servers.agent-memory]`` table is replaced as text — from its header to the next
table header — or appended; the result is parsed again and must equal the old document with
only that table changed.

Invariant: a file that is not valid JSON/TOML, or whose container is not a table, raises
:class:`~agent_memory.errors.ConfigError` naming the file, and nothing is written.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

from agent_memory.errors import ConfigError

__all__ = ["SERVER_NAME", "merge_json_server", "merge_toml_server"]

SERVER_NAME = "agent-memory"
"""The name the MCP server is registered under in every configuration."""

# A table header ``[a.b]`` or an array-of-tables header ``[[a.b]]`` on a line of its own.
_HEADER = re.compile(r"^[ \t]*\[\[?([^\]\n]*)\]\]?[ \t]*(?:#.*)?$", re.MULTILINE)


def merge_json_server(
    existing: str | None,
    container: Sequence[str],
    entry: Mapping[str, Any],
    *,
    path: str,
    new_file: Mapping[str, Any] | None = None,
) -> str:
    """Return the JSON text with ``entry`` registered as :data:`SERVER_NAME` under ``container``.

    Args:
        existing: The file's text, or ``None`` when it does not exist.
        container: Keys leading to the object of servers, e.g. ``("mcpServers",)``.
        entry: The server's configuration object.
        path: The file, named in errors.
        new_file: Top-level keys to start a new file with (e.g. a ``$schema``).

    Raises:
        ConfigError: ``existing`` is not valid JSON, its top level is not an object, or a
            container along the way is not an object.
    """
    document: dict[str, Any] = dict(new_file or {})
    if existing is not None and existing.strip():
        try:
            loaded = json.loads(existing)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); nothing written",
                path=path,
                hint="fix the file (comments and trailing commas are not JSON), then bind again",
            ) from None
        if not isinstance(loaded, dict):
            raise ConfigError("the top level must be a JSON object; nothing written", path=path)
        document = loaded
    table = document
    for depth, key in enumerate(container):
        value = table.setdefault(key, {})
        if not isinstance(value, dict):
            where = ".".join(container[: depth + 1])
            raise ConfigError(
                f"must be an object, not {type(value).__name__}; nothing written", path=path, field=where
            )
        table = value
    table[SERVER_NAME] = dict(entry)
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def merge_toml_server(existing: str | None, entry: Mapping[str, Any], *, path: str) -> str:
    """Return the TOML text with ``[mcp_servers.agent-memory]`` set to ``entry`` (strings and string lists).

    Raises:
        ConfigError: ``existing`` is not valid TOML, ``mcp_servers`` is not a table, or the
            server is defined in a form this cannot replace as text (inline table, dotted
            keys); nothing written.
    """
    text = existing or ""
    before = _parse_toml(text, path)
    servers = before.get("mcp_servers", {})
    if not isinstance(servers, dict):
        raise ConfigError("must be a table; nothing written", path=path, field="mcp_servers")
    table = _render_table(entry)
    span = _table_span(text)
    if span is None and SERVER_NAME in servers:
        raise ConfigError(
            f"defines mcp_servers.{SERVER_NAME} without its own [mcp_servers.{SERVER_NAME}] header; "
            "nothing written",
            path=path,
            hint=f"rewrite it as a [mcp_servers.{SERVER_NAME}] table, or remove it, then bind again",
        )
    if span is None:
        separator = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
        updated = text + separator + table
    else:
        start, stop = span
        updated = text[:start] + table + ("\n" if stop < len(text) else "") + text[stop:]
    expected = dict(before)
    expected["mcp_servers"] = {**servers, SERVER_NAME: dict(entry)}
    try:
        after: dict[str, Any] | None = tomllib.loads(updated)
    except tomllib.TOMLDecodeError:
        after = None
    if after != expected:
        raise ConfigError(
            f"updating [mcp_servers.{SERVER_NAME}] in place would change other settings; nothing written",
            path=path,
            hint=f"move [mcp_servers.{SERVER_NAME}] and its sub-tables to the end, then bind again",
        )
    return updated


def _parse_toml(text: str, path: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML ({exc}); nothing written", path=path) from None


def _table_span(text: str) -> tuple[int, int] | None:
    """Return where ``[mcp_servers.agent-memory]`` and its sub-tables start and end in ``text``."""
    start = stop = None
    for match in _HEADER.finditer(text):
        name = ".".join(part.strip().strip("\"'") for part in match.group(1).split("."))
        ours = name == f"mcp_servers.{SERVER_NAME}" or name.startswith(f"mcp_servers.{SERVER_NAME}.")
        if start is None and ours:
            start = match.start()
        elif start is not None and not ours:
            stop = match.start()
            break
    if start is None:
        return None
    return start, stop if stop is not None else len(text)


def _render_table(entry: Mapping[str, Any]) -> str:
    lines = [f"[mcp_servers.{SERVER_NAME}]"]
    for key, value in entry.items():
        if isinstance(value, str):
            lines.append(f"{key} = {json.dumps(value, ensure_ascii=False)}")
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            lines.append(f"{key} = [{', '.join(json.dumps(v, ensure_ascii=False) for v in value)}]")
        else:
            raise TypeError(f"only strings and lists of strings are written to TOML, not {key}={value!r}")
    return "\n".join(lines) + "\n"
