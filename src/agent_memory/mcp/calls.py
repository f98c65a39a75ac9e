"""How one MCP tool call is made: its caller's taint and client name, refusals, and errors as tool errors.

A call's taint is the union of two declarations (issue 8 item 3; DESIGN.md §2 "trust"):

- the server's, fixed at start (``agent-memory serve --taint LABEL``, :class:`Session.taint
  <agent_memory.mcp.server.Session>`): every call of every connection. Over stdio a
  connection is a server process, so this is how a stdio connection is tainted;
- the connection's, over streamable HTTP: the header :data:`TAINT_HEADER`
  (``X-Agent-Memory-Taint: external, web``; comma-separated labels, repeatable) that the
  client's harness sets on its HTTP client, so every request of that connection carries it.
  A handshake-era connection also has an ``Mcp-Session-Id``: labels it declared once stay on
  it for the rest of that session even if a later request omits the header. A 2026-07-28
  connection has no session id; there every request carries its own declaration.

Invariants:

- taint only grows: nothing a client sends removes the server's labels or a label its
  session declared before;
- a malformed header is an :class:`~agent_memory.errors.AgentMemoryError` naming the header,
  raised before the porcelain runs, so the call writes nothing;
- the header is the client's declaration of distrust, never an identity: it can only
  quarantine more, and the actor stays the server's ``agent:<name>``;
- arguments that break a tool's schema are refused in one line naming each argument and
  what is wrong with it (:func:`invalid_arguments`), like every other tool error.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import ValidationError

from agent_memory.errors import AgentMemoryError

__all__ = [
    "LABEL",
    "MAX_LABELS",
    "SESSION_HEADER",
    "TAINT_HEADER",
    "ConnectionTaint",
    "as_tool_error",
    "client_name",
    "hints",
    "invalid_arguments",
    "one_line",
    "parse_taint",
    "refuse_when_tainted",
]

TAINT_HEADER = "X-Agent-Memory-Taint"
SESSION_HEADER = "Mcp-Session-Id"
LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
"""An agent name or taint label: 1-64 letters, digits, ``.``, ``_`` or ``-``, starting alphanumeric."""
MAX_LABELS = 16
MAX_SESSIONS = 4096


def hints(*, read_only: bool, destructive: bool, idempotent: bool) -> ToolAnnotations:
    """Return a tool's annotations with all three hints set (and a closed world: only this Home)."""
    return ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


def one_line(error: AgentMemoryError) -> str:
    """Return the error's message and hint as one line (the text a model reads)."""
    text = str(error) + (f" (hint: {error.hint})" if error.hint else "")
    return " ".join(text.split())


def invalid_arguments(tool: str, error: ValidationError, names: Sequence[str]) -> str:
    """Return the one-line text of a tool call whose arguments break the tool's schema.

    ``Error executing tool <tool>: invalid arguments: <argument>: <problem>; …`` — each
    argument (``tags[1]`` for an item of a list) with what is wrong: ``required``, ``not an
    argument of <tool>`` (with a hint listing ``names``), or pydantic's message and the value
    given (its ``repr``, cut to 40 characters, so no control character reaches the line).
    The SDK's own text is several lines with a documentation URL (docs/mcp.md "Errors").

    Args:
        tool: The tool called.
        error: What validating its arguments raised.
        names: The tool's argument names, in schema order.
    """
    problems: list[str] = []
    unknown = False
    for item in error.errors(include_url=False):
        where = (
            "".join(
                f"[{part}]" if isinstance(part, int) else (str(part) if i == 0 else "")
                for i, part in enumerate(item["loc"])
            )
            or "arguments"
        )
        if item["type"] == "missing":
            what = "required"
        elif item["type"] == "extra_forbidden":
            what, unknown = f"not an argument of {tool}", True
        else:
            given = repr(item.get("input"))
            given = given if len(given) <= 40 else given[:37] + "..."
            what = f"{item['msg'][:1].lower()}{item['msg'][1:]} (got {given})"
        line = f"{where}: {what}"
        if line not in problems:
            problems.append(line)
    text = f"Error executing tool {tool}: invalid arguments: " + "; ".join(problems)
    if unknown:
        text += f" (hint: {tool} takes {', '.join(names) or 'no arguments'})"
    return " ".join(text.splitlines())  # reprs escape line breaks; spaces in a value stay as given


@contextmanager
def as_tool_error() -> Iterator[None]:
    """Turn an :class:`AgentMemoryError` raised inside into the SDK's ``ToolError`` (:func:`one_line`)."""
    try:
        yield
    except AgentMemoryError as exc:
        raise ToolError(one_line(exc)) from exc


def refuse_when_tainted(
    operation: str,
    taint: tuple[str, ...],
    *,
    why: str = "unreviewed input must not change how trusted records are weighed or replace them",
    record_id: str | None = None,
    hint: str = "use remember: a state record with the same subject opens a dispute for a person",
) -> None:
    """Raise unless ``taint`` is empty: ``operation`` is not for a tainted caller.

    Raises:
        AgentMemoryError: ``taint`` holds a label (the message names the operation and labels).
    """
    if taint:
        raise AgentMemoryError(
            f"{operation} is not available to a tainted session ({', '.join(taint)}): {why}",
            record_id=record_id,
            hint=hint,
        )


def parse_taint(values: Iterable[str]) -> tuple[str, ...]:
    """Return the sorted labels of :data:`TAINT_HEADER` values (comma-separated; blanks ignored).

    Raises:
        AgentMemoryError: A label that is not 1-64 letters, digits, ``.``, ``_`` or ``-``, or
            more than :data:`MAX_LABELS` labels (``field`` is the header's name).
    """
    labels: set[str] = set()
    for value in values:
        for part in value.split(","):
            label = part.strip()
            if label and not LABEL.match(label):
                raise AgentMemoryError(
                    f"taint label {label[:80]!r} must be 1-64 letters, digits, '.', '_' or '-'",
                    field=TAINT_HEADER,
                    hint="send labels such as external, comma-separated",
                )
            if label:
                labels.add(label)
    if len(labels) > MAX_LABELS:
        raise AgentMemoryError(f"at most {MAX_LABELS} taint labels, got {len(labels)}", field=TAINT_HEADER)
    return tuple(sorted(labels))


def _headers(ctx: Context[Any, Any] | None) -> Mapping[str, str] | None:
    if ctx is None:
        return None
    try:
        return ctx.headers
    except (AttributeError, ValueError):  # no request in flight (a direct call)
        return None


def _values(headers: Mapping[str, str], name: str) -> list[str]:
    getlist = getattr(headers, "getlist", None)  # Starlette keeps repeated headers apart
    if callable(getlist):
        return [str(value) for value in getlist(name)]
    value = headers.get(name) or headers.get(name.lower())
    return [] if value is None else [str(value)]


class ConnectionTaint:
    """The taint of each call: the server's labels, the connection's header, and its session's past.

    Args:
        base: The server's labels (``serve --taint``), applied to every call.
        max_sessions: Handshake-era sessions whose declared labels are remembered (least
            recently used forgotten first); only sessions that declared a label count.
    """

    def __init__(self, base: tuple[str, ...], *, max_sessions: int = MAX_SESSIONS) -> None:
        self.base = tuple(sorted(set(base)))
        self._max = max_sessions
        self._sessions: OrderedDict[str, frozenset[str]] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, ctx: Context[Any, Any] | None) -> tuple[str, ...]:
        """Return the sorted labels every write of this call inherits.

        Raises:
            AgentMemoryError: A malformed :data:`TAINT_HEADER` (as :func:`parse_taint`).
        """
        headers = _headers(ctx)
        if headers is None:  # stdio, or a direct call: the server's labels alone
            return self.base
        declared = frozenset(parse_taint(_values(headers, TAINT_HEADER)))
        session = (_values(headers, SESSION_HEADER) or [""])[0]
        if session:
            with self._lock:
                declared |= self._sessions.pop(session, frozenset())
                if declared:
                    self._sessions[session] = declared
                    while len(self._sessions) > self._max:
                        self._sessions.popitem(last=False)
        return tuple(sorted({*self.base, *declared}))


def client_name(ctx: Context[Any, Any] | None) -> str | None:
    """Return the client's self-declared name reduced to a safe token (≤ 64 characters), or ``None``."""
    if ctx is None:
        return None
    try:
        info = getattr(getattr(ctx.session, "client_params", None), "client_info", None)
    except (AttributeError, ValueError):  # no request in flight (a direct call)
        return None
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", str(getattr(info, "name", "") or "")).strip("-")[:64]
    return name or None
