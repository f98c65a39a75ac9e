"""A call's taint: the server's labels, the connection's header, and a session's past declarations.

The end-to-end behaviour is tested over HTTP in test_mcp_transports.py; these tests pin the
rules with a fake request context (an object with the ``headers`` a transport would give).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

import pytest
from mcp.server.mcpserver import Context

from agent_memory.errors import AgentMemoryError
from agent_memory.mcp.calls import (
    MAX_LABELS,
    SESSION_HEADER,
    TAINT_HEADER,
    ConnectionTaint,
    parse_taint,
    refuse_when_tainted,
)


class FakeHeaders(Mapping[str, str]):
    """HTTP headers as the transport hands them over: case-insensitive, repeatable (``getlist``)."""

    def __init__(self, pairs: tuple[tuple[str, str], ...]) -> None:
        self._pairs = [(name.lower(), value) for name, value in pairs]

    def getlist(self, name: str) -> list[str]:
        return [value for key, value in self._pairs if key == name.lower()]

    def __getitem__(self, name: str) -> str:
        found = self.getlist(name)
        if not found:
            raise KeyError(name)
        return found[0]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(key for key, _ in self._pairs))

    def __len__(self) -> int:
        return len(set(key for key, _ in self._pairs))


@dataclass
class FakeContext:
    """What :class:`ConnectionTaint` reads of a request context: its HTTP headers (none on stdio)."""

    headers: FakeHeaders | None


def _ctx(*pairs: tuple[str, str], stdio: bool = False) -> Context[Any, Any]:
    return cast("Context[Any, Any]", FakeContext(None if stdio else FakeHeaders(pairs)))


def test_a_stdio_call_carries_exactly_the_servers_labels() -> None:
    taints = ConnectionTaint(("external",))
    assert taints.of(_ctx(stdio=True)) == ("external",)
    assert taints.of(None) == ("external",)
    assert ConnectionTaint(()).of(_ctx(stdio=True)) == ()


def test_a_header_adds_labels_to_the_servers_and_never_removes_one() -> None:
    taints = ConnectionTaint(("external",))
    assert taints.of(_ctx((TAINT_HEADER, "web, pasted"))) == ("external", "pasted", "web")
    assert taints.of(_ctx((TAINT_HEADER, ""))) == ("external",)
    assert taints.of(_ctx()) == ("external",)


def test_repeated_headers_and_blank_items_are_read_as_one_list() -> None:
    taints = ConnectionTaint(())
    context = _ctx((TAINT_HEADER, "web,, "), (TAINT_HEADER, "email"))
    assert taints.of(context) == ("email", "web")


def test_a_session_that_declared_a_label_keeps_it_and_other_sessions_do_not_get_it() -> None:
    taints = ConnectionTaint(())
    assert taints.of(_ctx((SESSION_HEADER, "s1"), (TAINT_HEADER, "external"))) == ("external",)
    assert taints.of(_ctx((SESSION_HEADER, "s1"))) == ("external",)
    assert taints.of(_ctx((SESSION_HEADER, "s1"), (TAINT_HEADER, "web"))) == ("external", "web")
    assert taints.of(_ctx((SESSION_HEADER, "s2"))) == ()
    assert taints.of(_ctx()) == (), "a request without a session stands alone"


def test_only_the_most_recently_used_tainted_sessions_are_remembered() -> None:
    taints = ConnectionTaint((), max_sessions=2)
    for session in ("a", "b"):
        taints.of(_ctx((SESSION_HEADER, session), (TAINT_HEADER, "external")))
    taints.of(_ctx((SESSION_HEADER, "a")))  # a is used again: b is now the oldest
    taints.of(_ctx((SESSION_HEADER, "c"), (TAINT_HEADER, "external")))
    assert taints.of(_ctx((SESSION_HEADER, "a"))) == ("external",)
    assert taints.of(_ctx((SESSION_HEADER, "c"))) == ("external",)
    assert taints.of(_ctx((SESSION_HEADER, "b"))) == ()
    assert taints.of(_ctx((SESSION_HEADER, "untainted"))) == ()
    assert taints.of(_ctx((SESSION_HEADER, "a"))) == ("external",), "untainted sessions take no room"


@pytest.mark.parametrize("value", ["web page", "-web", "a/b", "x" * 65, "é"])
def test_a_malformed_label_is_an_error_naming_the_header(value: str) -> None:
    with pytest.raises(AgentMemoryError, match="must be 1-64 letters") as caught:
        ConnectionTaint(()).of(_ctx((TAINT_HEADER, f"external,{value}")))
    assert caught.value.field == TAINT_HEADER
    assert str(caught.value).startswith(f"{TAINT_HEADER}: taint label")


def test_more_labels_than_the_limit_are_refused() -> None:
    labels = [f"l{i}" for i in range(MAX_LABELS + 1)]
    assert len(parse_taint([",".join(labels[:-1])])) == MAX_LABELS
    with pytest.raises(AgentMemoryError, match=f"at most {MAX_LABELS} taint labels"):
        parse_taint([",".join(labels)])


def test_a_refusal_names_the_operation_and_labels_and_an_untainted_caller_passes() -> None:
    refuse_when_tainted("reinstate", ())
    with pytest.raises(AgentMemoryError) as caught:
        refuse_when_tainted(
            "reinstate", ("external", "web"), why="it lifts a withdrawal", record_id="mem:" + "a" * 32
        )
    assert "reinstate is not available to a tainted session (external, web): it lifts a withdrawal" in str(
        caught.value
    )
    assert caught.value.record_id == "mem:" + "a" * 32
