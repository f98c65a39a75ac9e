"""decide_pending over stdio, through the real client: the CLI's ``accept ID``/``decline ID`` for agents.

A pending record is a state value ``remember`` held back because its subject was disputed.
One Home and three servers for the module, as in test_mcp_governance: ``trusted`` (agent:mcp,
granted approve), ``tainted`` (the same agent with ``--taint external``) and ``stranger``
(agent:stranger, no grant). Each test uses a subject of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp_harness import Connected, connect, grant, new_home, stdio_params, stored

from agent_memory.memory import Memory

UNKNOWN = "mem:" + "d" * 32


@dataclass
class Servers:
    home: Path
    trusted: Connected
    tainted: Connected
    stranger: Connected


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    root = tmp_path_factory.mktemp("pending")
    with pytest.MonkeyPatch.context() as patch, ExitStack() as stack:
        patch.setenv("XDG_CONFIG_HOME", str(root / "config"))
        home = new_home(root / "home")
        grant(home, "agent:mcp", "approve")
        yield Servers(
            home,
            stack.enter_context(connect(stdio_params(home))),
            stack.enter_context(connect(stdio_params(home, "--taint", "external"))),
            stack.enter_context(connect(stdio_params(home, "--agent", "stranger"))),
        )


def held_back(servers: Servers, subject: str) -> tuple[str, str, str]:
    """Return ``(trusted, tainted, pending)`` values of ``subject``: a dispute, then a held value."""
    client = servers.trusted
    live = client.ok("remember", text=f"The {subject} is in room A-1", kind="state", subject=subject)
    rival = servers.tainted.ok(
        "remember", text=f"The {subject} is in room B-2", kind="state", subject=subject
    )
    assert rival["disputed_with"] == live["record_id"]
    held = client.ok("remember", text=f"The {subject} is in room C-3", kind="state", subject=subject)
    assert held["pending"] is True
    return live["record_id"], rival["record_id"], held["record_id"]


def review_events(home: Path, record_id: str) -> list[dict[str, object]]:
    with Memory.open(home) as memory:
        return [
            {"actor": e.actor, **e.details}
            for e in memory.log.entries()
            if e.action == "review"
            and record_id in e.record_ids
            and "pending-" in str(e.details.get("verdict"))
        ]


def test_accept_waits_for_the_dispute_then_writes_the_value_as_remember_would(servers: Servers) -> None:
    home, client = servers.home, servers.trusted
    live, rival, held = held_back(servers, "badge printer")
    before = stored(home)
    early = client.error("decide_pending", record_id=held, verdict="accept")
    assert "\n" not in early and f"{held}: subject: badge printer is still disputed between" in early, early
    assert "resolve the dispute before accepting" in early
    assert "(hint: call resolve with winner_id and loser_id" in early, "an agent is pointed at its own tool"
    assert "agent-memory" not in early, "not at a CLI command it cannot run"
    assert stored(home) == before

    client.ok("resolve", winner_id=live, loser_id=rival, reason="checked the room")
    accepted = client.ok("decide_pending", record_id=held, verdict="accept", reason="moved last week")

    assert accepted == {
        "record_id": held,
        "verdict": "accept",
        "kept_as": held,
        "superseded": live,
        "disputed_with": None,
        "quarantined": False,
        "actor": "agent:mcp",
        "decided_at": accepted["decided_at"],
    }
    with Memory.open(home) as memory:
        assert memory.get(held).state.value == "active"
        assert memory.get(live).state.value == "superseded"
        assert memory.pending.find(held) is None
    [event] = review_events(home, held)
    assert (event["actor"], event["verdict"], event["reason"]) == (
        "agent:mcp",
        "pending-accepted",
        "moved last week",
    )
    again = client.error("decide_pending", record_id=held, verdict="accept")
    assert f"{held}: is a stored record, not a pending one (already accepted" in again, again
    assert "(hint: recall shows it; supersede replaces it, and review with verdict stale" in again, again
    assert "agent-memory" not in again


def test_decline_drops_the_held_value_and_logs_why(servers: Servers) -> None:
    home, client = servers.home, servers.trusted
    live, _, held = held_back(servers, "label maker")
    notes_before = {k: v for k, v in stored(home).items() if k.startswith("notes/")}
    declined = client.ok("decide_pending", record_id=held, verdict="decline", reason="a typo")
    assert (declined["verdict"], declined["kept_as"], declined["superseded"]) == ("decline", None, None)
    assert {k: v for k, v in stored(home).items() if k.startswith("notes/")} == notes_before
    with Memory.open(home) as memory:
        assert memory.pending.find(held) is None and not memory.store.contains(held)
        assert memory.get(live).state.value == "transitional"  # the dispute is the person's to settle
    [event] = review_events(home, held)
    assert (event["actor"], event["verdict"], event["reason"]) == ("agent:mcp", "pending-declined", "a typo")


def test_a_tainted_session_an_agent_without_the_grant_and_bad_ids_are_refused(servers: Servers) -> None:
    home = servers.home
    live, _, held = held_back(servers, "laminator")
    before = stored(home)
    refused = {
        "decide_pending is not available to a tainted session (external)": servers.tainted.error(
            "decide_pending", record_id=held, verdict="decline"
        ),
        "agent:stranger may not": servers.stranger.error("decide_pending", record_id=held, verdict="accept"),
        f"{UNKNOWN}: no pending record has this id": servers.trusted.error(
            "decide_pending", record_id=UNKNOWN, verdict="decline"
        ),
        f"{live}: is a stored record, not a pending one": servers.trusted.error(
            "decide_pending", record_id=live, verdict="decline"
        ),
        "verdict: input should be 'accept' or 'decline'": servers.trusted.error(
            "decide_pending", record_id=held, verdict="approve"
        ),
        "record_id: string should match pattern": servers.trusted.error(
            "decide_pending", record_id="../pending", verdict="accept"
        ),
    }
    for problem, text in refused.items():
        assert "\n" not in text and problem in text, (problem, text)
    assert "'approve' grant" in refused["agent:stranger may not"]
    assert (
        "(hint: give the record_id a remember call returned with pending: true)"
        in refused[f"{UNKNOWN}: no pending record has this id"]
    )
    assert stored(home) == before
    with Memory.open(home) as memory:
        assert memory.pending.find(held) is not None
    assert review_events(home, held) == []
