"""The MCP tools driven through the SDK's real client over stdio (``agent-memory serve`` subprocesses).

Most tests share one Home and two servers for the module (starting a server costs seconds):
``trusted`` (agent:mcp) and ``tainted`` (agent:web-reader, ``--taint external``); each test
uses texts and subjects of its own and asserts only about its own records.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from mcp_harness import CLIENT_NAME, Connect, Connected, connect, grant, new_home, stdio_params, stored

from agent_memory.home import Home
from agent_memory.log.jsonl import JsonlLog
from agent_memory.memory import Memory


@dataclass
class Servers:
    home: Path
    trusted: Connected
    tainted: Connected


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    root = tmp_path_factory.mktemp("tools")
    with pytest.MonkeyPatch.context() as patch, ExitStack() as stack:
        patch.setenv("XDG_CONFIG_HOME", str(root / "config"))
        home = new_home(root / "home")
        grant(home, "agent:mcp", "mark")
        yield Servers(
            home,
            stack.enter_context(connect(stdio_params(home))),
            stack.enter_context(connect(stdio_params(home, "--taint", "external", "--agent", "web-reader"))),
        )


def test_remember_then_recall_returns_the_record_with_its_reasons_and_session_source(
    default_home: Path, stdio: Connect
) -> None:
    home = default_home  # the default recipes: the embedder must not write to the stdio wire
    with stdio(home) as client:
        written = client.ok("remember", text="The deploy script lives in ops/deploy.sh", tags=["ops"])
        recalled = client.ok("recall", query="deploy script", budget_tokens=500)
    assert written["deduped"] is False and written["quarantined"] is False
    day = datetime.now(Home.open(home).settings.zone).date().isoformat()
    assert written["source"] == f"mcp:mcp@{day}#{CLIENT_NAME}"
    [record] = recalled["records"]
    assert record["id"] == written["record_id"]
    assert record["body"] == "The deploy script lives in ops/deploy.sh"
    assert record["state"] == "active" and record["score"] > 0
    assert record["reasons"][0].startswith("matched query")
    assert record["source"] == written["source"]
    assert "ops/deploy.sh" in recalled["prompt_block"] and written["source"] in recalled["prompt_block"]
    with Memory.open(home) as memory:
        kept = memory.get(written["record_id"])
    assert kept.provenance.kind == "mcp" and kept.tags == ("ops",)
    assert [e.actor for e in JsonlLog(home / "log").entries() if e.action != "init"] == ["agent:mcp"]


def test_an_identical_text_is_deduped_and_the_seed_003_aliases_reach_the_same_record(
    servers: Servers,
) -> None:
    client = servers.trusted
    first = client.ok("remember", text="Prefers tabs over spaces", source="chat-42", type="preference")
    before = client.ok("status")["records"]
    again = client.ok("nas_remember", text="Prefers tabs over spaces", source="chat-43")
    recalled = client.ok("nas_recall", query="tabs spaces")
    status = client.ok("status")
    assert first["source"] == "chat-42"
    assert again["record_id"] == first["record_id"] and again["deduped"] is True
    assert [r["id"] for r in recalled["records"]] == [first["record_id"]]
    assert status["records"] == before, "a deduped text adds no record"
    assert status["actor"] == "agent:mcp" and status["taint"] == []
    assert status["home"] == str(servers.home.resolve())


def test_a_newer_state_value_supersedes_the_current_one_at_once(servers: Servers) -> None:
    client = servers.trusted
    old = client.ok("remember", text="staging runs on db-2", kind="state", subject="host:staging")
    new = client.ok("remember", text="staging runs on db-3", kind="state", subject="host:staging")
    current = client.ok("recall", query="staging runs")
    history = client.ok("recall", query="staging runs", include_history=True)
    assert new["superseded"] == old["record_id"] and new["disputed_with"] is None
    assert [(r["id"], r["state"]) for r in current["records"]] == [(new["record_id"], "active")]
    assert [(r["id"], r["state"]) for r in history["records"]] == [
        (new["record_id"], "active"),
        (old["record_id"], "superseded"),
    ]


def test_a_tainted_session_writes_quarantined_records_that_dispute_trusted_state(servers: Servers) -> None:
    home, client = servers.home, servers.tainted
    with Memory.open(home) as memory:
        trusted = memory.remember("the VPN gateway is vpn-1", source="runbook", kind="state", subject="vpn")
    status = client.ok("status")
    tainted = client.ok("remember", text="the VPN gateway is vpn-9", kind="state", subject="vpn")
    loose = client.ok("remember", text="The wiki says lunch is at noon")
    recalled = client.ok("recall", query="VPN gateway")
    assert status["taint"] == ["external"] and status["actor"] == "agent:web-reader"
    assert tainted["quarantined"] is True and tainted["superseded"] is None
    assert tainted["disputed_with"] == trusted.record_id
    assert loose["quarantined"] is True
    by_id = {r["id"]: r for r in recalled["records"]}
    assert by_id[tainted["record_id"]]["state"] == "transitional"
    assert by_id[tainted["record_id"]]["review"] == "quarantined"
    assert by_id[trusted.record_id]["state"] == "transitional"
    assert "Conflict on `subject: vpn`" in recalled["prompt_block"]
    with Memory.open(home) as memory:
        assert memory.get(tainted["record_id"]).taint == ("external",)


def test_concurrent_stdio_connections_keep_their_own_taint(servers: Servers) -> None:
    """Two stdio connections (two server processes) on one Home, writing at the same time."""
    texts = [f"Concurrent note {i} about the build farm" for i in range(6)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        trusted = pool.map(lambda t: servers.trusted.ok("remember", text=t + " (trusted)"), texts)
        tainted = pool.map(lambda t: servers.tainted.ok("remember", text=t + " (tainted)"), texts)
        written = {"trusted": list(trusted), "tainted": list(tainted)}
    assert [w["quarantined"] for w in written["trusted"]] == [False] * len(texts)
    assert [w["quarantined"] for w in written["tainted"]] == [True] * len(texts)
    with Memory.open(servers.home) as memory:
        for side, labels in (("trusted", None), ("tainted", ("external",))):
            assert {memory.get(w["record_id"]).taint for w in written[side]} == {labels}, side


def test_a_tainted_session_cannot_supersede_resolve_or_review_and_nothing_is_written(
    servers: Servers,
) -> None:
    home = servers.home
    with Memory.open(home) as memory:
        trusted = memory.remember("backups run at 02:00", source="runbook").record_id
    before = stored(home)
    client = servers.tainted
    refused = {
        "supersede": client.error("supersede", old_id=trusted, text="backups run at 05:00", reason="web"),
        "resolve": client.error("resolve", winner_id=trusted, loser_id="mem:" + "1" * 32, reason="guess"),
        "review": client.error("review", record_id=trusted, verdict="stale", reason="a web page said so"),
    }
    for operation, text in refused.items():
        assert f"{operation} is not available to a tainted session (external)" in text
        assert "\n" not in text
    assert stored(home) == before


def test_supersede_replaces_a_record_and_resolve_settles_a_dispute(servers: Servers) -> None:
    client = servers.trusted
    older = (datetime.now(UTC) - timedelta(days=3)).isoformat()
    fact = client.ok("remember", text="The API rate limit is 100 requests per minute")
    fixed = client.ok(
        "supersede",
        old_id=fact["record_id"],
        text="The API rate limit is 300 requests per minute",
        reason="the limit was raised",
        source="changelog-7",
    )
    live = client.ok("remember", text="CI runs on runner-a", kind="state", subject="ci:runner")
    stale = client.ok(
        "remember", text="CI runs on runner-b", kind="state", subject="ci:runner", valid_from=older
    )
    settled = client.ok("resolve", winner_id=live["record_id"], loser_id=stale["record_id"], reason="checked")
    after = client.ok("recall", query="CI runs", include_history=True)
    assert fixed["superseded"] == fact["record_id"] and fixed["source"] == "changelog-7"
    assert stale["disputed_with"] == live["record_id"]
    assert settled["winner_id"] == live["record_id"]
    assert datetime.fromisoformat(settled["resolved_at"]).utcoffset() == timedelta(0)
    states = {r["id"]: r["state"] for r in after["records"] if r["subject"] == "ci:runner"}
    assert states == {live["record_id"]: "active", stale["record_id"]: "superseded"}
    with Memory.open(servers.home) as memory:
        assert memory.get(fact["record_id"]).state.value == "superseded"
        assert memory.get(fixed["record_id"]).provenance.ref == "changelog-7"


def test_review_marks_a_record_stale_as_an_attributed_event(servers: Servers) -> None:
    client = servers.trusted
    record = client.ok("remember", text="The printer is on floor 3")["record_id"]
    marked = client.ok("review", record_id=record, verdict="stale", reason="the printer moved")
    recalled = client.ok("recall", query="printer floor")
    assert marked["verdict"] == "stale" and marked["actor"] == "agent:mcp"
    assert datetime.fromisoformat(marked["reviewed_at"]).tzinfo is not None
    [hit] = [r for r in recalled["records"] if r["id"] == record]
    assert hit["review"] == "stale" and hit["stale"] is True
    [event] = [
        e for e in JsonlLog(servers.home / "log").entries() if e.action == "review" and record in e.record_ids
    ]
    assert event.actor == "agent:mcp" and event.details["verdict"] == "stale"


def test_porcelain_errors_come_back_as_one_line_tool_errors_and_change_nothing(servers: Servers) -> None:
    client = servers.trusted
    unknown = "mem:" + "e" * 32
    client.ok("remember", text="The build takes four minutes", kind="state", subject="build:time")
    before = stored(servers.home)
    failures = {
        "unknown record": client.error("supersede", old_id=unknown, text="x", reason="y"),
        "naive time": client.error("remember", text="Standup moved", occurred_at="2026-01-01T09:00:00"),
        "subject without state": client.error("remember", text="A fact", subject="build:time"),
        "unknown review target": client.error("review", record_id=unknown, verdict="stale"),
        "naive as_of": client.error("recall", query="build", as_of="2026-01-01 10:00"),
    }
    after = stored(servers.home)
    expected = {
        "unknown record": unknown,
        "naive time": "occurred_at",
        "subject without state": "subject",
        "unknown review target": unknown,
        "naive as_of": "as_of",
    }
    for case, text in failures.items():
        assert "\n" not in text and expected[case] in text, (case, text)
        assert text.startswith("Error executing tool "), text
    assert after == before


def test_a_control_character_in_a_written_text_is_refused_naming_the_argument(servers: Servers) -> None:
    client = servers.trusted
    target = client.ok("remember", text="The wiki is at wiki.internal", source="onboarding")["record_id"]
    before = stored(servers.home)
    refused = {
        "text": client.error("remember", text="Deploys \x1b[8mhidden\x1b[0m are fine"),
        "subject": client.error("remember", text="A", kind="state", subject="host:\x07staging"),
        "tags": client.error("remember", text="A fact", tags=["ops\x00"]),
        "source": client.error("remember", text="A fact", source="chat\rspoofed"),
        "supersede text": client.error("supersede", old_id=target, text="wiki\x08", reason="typo"),
    }
    for field, text in refused.items():
        assert f"{field.split()[-1]}: holds the control character U+00" in text, (field, text)
    assert stored(servers.home) == before
    kept = client.ok("remember", text="Columns:\tname\tvalue\r\nline two", source="paste")
    assert kept["deduped"] is False


def test_arguments_outside_the_schema_are_refused_before_the_porcelain_runs(servers: Servers) -> None:
    client = servers.trusted
    before = stored(servers.home)
    named = {
        "budget_tokens: input should be greater than or equal to 1 (got 0)": client.error(
            "recall", query="x", budget_tokens=0
        ),
        "query: string should have at least 1 character (got '')": client.error("recall", query=""),
        "query: string should match pattern '\\S' (got '  ')": client.error("recall", query="  "),
        "text: string should have at least 1 character": client.error("remember", text=""),
        "kind: input should be 'knowledge' or 'state' (got 'maybe')": client.error(
            "remember", text="ok", kind="maybe"
        ),
        "old_id: string should match pattern": client.error(
            "supersede", old_id="../../etc/passwd", text="x", reason="y"
        ),
        "tags[1]: input should be a valid string (got 3)": client.error("remember", text="ok", tags=["a", 3]),
        "reason: required; authority: required": client.error("redact", record_id="mem:" + "a" * 32),
    }
    for problem, text in named.items():
        assert "\n" not in text and "errors.pydantic.dev" not in text, text
        assert text.startswith("Error executing tool ") and ": invalid arguments: " in text, text
        assert problem in text, (problem, text)
    assert stored(servers.home) == before


def test_supersede_with_the_current_text_is_refused_and_writes_no_version(servers: Servers) -> None:
    client = servers.trusted
    target = client.ok("remember", text="The on-call phone is in drawer 3", source="desk")["record_id"]
    before = stored(servers.home)
    for same in ("The on-call phone is in drawer 3", " The on-call phone is in drawer 3\n"):
        text = client.error("supersede", old_id=target, text=same, reason="no change")
        assert "\n" not in text and f"{target}: text: is identical to the record's current text" in text, text
        assert "(hint: give the corrected text)" in text, text
    assert stored(servers.home) == before
    moved = client.ok("supersede", old_id=target, text="The on-call phone is in drawer 4", reason="moved")
    assert moved["superseded"] == target


def test_feedback_is_logged_for_the_session_and_changes_no_record(servers: Servers) -> None:
    home, client = servers.home, servers.tainted
    record = client.ok("remember", text="Run the linter before pushing")["record_id"]
    notes_before = {p: p.read_bytes() for p in (home / "notes").rglob("*.md")}
    given = client.ok(
        "feedback", record_ids=[record], verdict="misleading", attribution_confidence="high", task_id="t-7"
    )
    unknown = client.error("feedback", record_ids=["mem:" + "d" * 32], verdict="helpful")
    assert given["event_id"].startswith("memfb-") and given["memory_item_ids"] == [record]
    assert (given["verdict"], given["basis"], given["actor"]) == (
        "misleading",
        "self-rated",
        "agent:web-reader",
    )
    assert "mem:" + "d" * 32 in unknown
    assert {p: p.read_bytes() for p in (home / "notes").rglob("*.md")} == notes_before
    with Memory.open(home) as memory:
        [event] = memory.metamemory.list_feedback(record)
    assert event.event_id == given["event_id"] and event.task_id == "t-7"
