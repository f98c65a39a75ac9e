"""consolidate, redact, withdraw, reinstate, forget and review verdicts over stdio, through the real client.

One Home and three servers for the whole module (starting a server costs seconds): ``trusted``
(agent:mcp, which memory.toml grants approve, erase and withdraw), ``tainted`` (the same
agent started with ``--taint external``: its refusals are about taint, not grants) and
``stranger`` (agent:stranger, no grant). Each test uses texts of its own and asserts only
about its own records; no text here negates or shares a copular subject with another, so a
consolidation run cannot join records of two tests.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp_harness import Connected, connect, grant, new_home, stdio_params, stored

from agent_memory.governance.forget import SURFACES
from agent_memory.memory import Memory

UNKNOWN = "mem:" + "e" * 32


@dataclass
class Servers:
    home: Path
    trusted: Connected
    tainted: Connected
    stranger: Connected


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    root = tmp_path_factory.mktemp("governance")
    with pytest.MonkeyPatch.context() as patch, ExitStack() as stack:
        patch.setenv("XDG_CONFIG_HOME", str(root / "config"))
        home = new_home(root / "home")
        grant(home, "agent:mcp", "approve", "erase", "withdraw")
        yield Servers(
            home,
            stack.enter_context(connect(stdio_params(home))),
            stack.enter_context(connect(stdio_params(home, "--taint", "external"))),
            stack.enter_context(connect(stdio_params(home, "--agent", "stranger"))),
        )


def _exposed(home: Path, *record_ids: str) -> list[bool]:
    with Memory.open(home) as memory:
        view = memory.gate.view()
        return [view.is_exposed(memory.get(record_id)) for record_id in record_ids]


def test_consolidate_proposes_the_dispute_and_the_merge_and_accepting_opens_the_dispute(
    servers: Servers,
) -> None:
    home, client = servers.home, servers.trusted
    near = [
        client.ok("remember", text="The nightly backup job copies the ledger database to the offsite bucket"),
        client.ok(
            "remember", text="The nightly backup job copies the ledger database to the offsite bucket daily"
        ),
    ]
    clash = [
        client.ok("remember", text="The billing queue host is Q-17"),
        client.ok("remember", text="The billing queue host is Q-42"),
    ]
    near_ids = sorted(r["record_id"] for r in near)
    clash_ids = sorted(r["record_id"] for r in clash)
    before = stored(home)
    preview = client.ok("consolidate", dry_run=True)
    assert stored(home) == before, "a dry run writes, files and logs nothing"
    report = client.ok("consolidate")

    assert preview["dry_run"] is True and preview["filed_in"] is None
    assert report["dry_run"] is False and report["filed_in"] == "proposals/pending-consolidation"
    assert isinstance(report["rejections"], int) and report["rejections"] == len(report["rejected"])
    for key in ("actions", "proposals"):
        assert {json.dumps(i, sort_keys=True) for i in preview[key]} == {
            json.dumps(i, sort_keys=True) for i in report[key]
        }, f"the dry run previews exactly the {key} of the run"
    assert not report["actions"], "a maintenance job applies nothing (DESIGN.md §9)"
    [dispute] = [p for p in report["proposals"] if sorted(p["records"]) == clash_ids]
    assert (dispute["pass"], dispute["action"]) == ("contradiction", "transition")
    assert "disagrees" in dispute["reason"]
    [merge] = [p for p in report["proposals"] if set(near_ids) <= set(p["records"])]
    assert (merge["pass"], merge["action"]) == ("dedup.near", "merge")
    filed = json.loads((home / "proposals/pending-consolidation" / f"{merge['id']}.json").read_text("utf-8"))
    assert (filed["id"], filed["pass_name"]) == (merge["id"], "dedup.near")
    with Memory.open(home) as memory:
        assert [memory.get(i).state.value for i in near_ids] == ["active", "active"], "pending stays pending"
        assert [memory.get(i).state.value for i in clash_ids] == ["active", "active"], "proposed, not applied"
        outcome = memory.proposals.accept([dispute["id"]])
        assert outcome.done == [dispute["id"]]
        assert [memory.get(i).state.value for i in clash_ids] == ["transitional", "transitional"]


def test_consolidate_refuses_bad_input_naming_the_argument_and_changes_nothing(servers: Servers) -> None:
    before = stored(servers.home)
    not_a_flag = servers.trusted.error("consolidate", dry_run="maybe")
    unknown = servers.trusted.error("consolidate", passes=["dedup.exact"])
    assert "dry_run" in not_a_flag and "passes" in unknown
    assert stored(servers.home) == before


def test_a_tainted_session_may_preview_consolidation_but_not_run_it(servers: Servers) -> None:
    before = stored(servers.home)
    refused = servers.tainted.error("consolidate")
    preview = servers.tainted.ok("consolidate", dry_run=True)
    assert "consolidate is not available to a tainted session (external)" in refused
    assert "dry_run=true" in refused
    assert preview["dry_run"] is True
    assert stored(servers.home) == before


def test_redact_erases_the_record_from_every_holder_and_returns_the_receipt(servers: Servers) -> None:
    home, client = servers.home, servers.trusted
    record = client.ok("remember", text="The locker code for room 4B is zebra-7731")["record_id"]
    assert client.ok("recall", query="locker code room")["records"]
    result = client.ok("redact", record_id=record, reason="the user asked", authority="ticket-88")
    after = client.ok("recall", query="locker code room zebra")

    assert (result["record_id"], result["redacted"], result["reason"]) == (record, True, "the user asked")
    receipt = result["receipt"]
    assert receipt["record_type"] == "erasure-tombstone-v1" and receipt["scope_refs"] == [record]
    assert (receipt["authority_ref"], receipt["decided_by"]) == ("ticket-88", "agent:mcp")
    assert receipt["erasure_id"].startswith("memerase-") and receipt["holders"]
    assert result["complete"] is all(h["result"] == "completed" for h in receipt["holders"])
    assert "zebra" not in json.dumps(result)
    assert not [r for r in after["records"] if r["id"] == record]
    holding = [p for p in home.rglob("*") if p.is_file() and b"zebra-7731" in p.read_bytes()]
    assert holding == []
    with Memory.open(home) as memory:
        assert memory.get(record).redacted
    again = client.error("redact", record_id=record, reason="again", authority="ticket-88")
    assert "already erased" in again


def test_redact_refuses_bad_input_naming_the_argument_and_changes_nothing(servers: Servers) -> None:
    home, client = servers.home, servers.trusted
    record = client.ok("remember", text="The conference room projector uses an HDMI-2 cable")["record_id"]
    before = stored(home)
    cases = {
        "authority": client.error("redact", record_id=record, reason="user request"),
        "reason": client.error("redact", record_id=record, authority="ticket-1"),
        "authority ": client.error("redact", record_id=record, reason="r", authority="   "),
        "record_id": client.error("redact", record_id="mem:xyz", reason="r", authority="a"),
        UNKNOWN: client.error("redact", record_id=UNKNOWN, reason="r", authority="a"),
        "cascade": client.error("redact", record_id=record, reason="r", authority="a", cascade=[UNKNOWN]),
        "confirm": client.error("redact", record_id=record, reason="r", authority="a", confirm=True),
    }
    for named, text in cases.items():
        assert named.strip() in text, (named, text)
    assert stored(home) == before
    assert _exposed(home, record) == [True]


def test_redact_needs_the_erase_grant_and_an_untainted_session(servers: Servers) -> None:
    home = servers.home
    record = servers.trusted.ok("remember", text="The wiki export runs on the 3rd of each month")["record_id"]
    before = stored(home)
    stranger = servers.stranger.error("redact", record_id=record, reason="r", authority="me")
    tainted = servers.tainted.error("redact", record_id=record, reason="r", authority="me")
    assert "agent:stranger may not erase records: it holds no 'erase' grant" in stranger
    assert "redact is not available to a tainted session (external)" in tainted
    assert stored(home) == before


def test_withdraw_hides_a_record_from_recall_until_reinstate_lifts_it(servers: Servers) -> None:
    client = servers.trusted
    record = client.ok("remember", text="The mobile release train leaves on Thursdays")["record_id"]
    control = client.ok("withdraw", memory_item_ids=[record], reason="wrong project")
    hidden = client.ok("recall", query="mobile release train Thursdays")
    lifted = client.ok("reinstate", withdrawal_id=control["withdrawal_id"], reason="right project after all")
    shown = client.ok("recall", query="mobile release train Thursdays")

    assert control["action"] == "withdraw" and control["effect"] == "exclude-from-influence"
    assert control["scope"] == {
        "memory_item_ids": [record],
        "archive_refs": [],
        "source_or_run_refs": [],
        "namespaces": [],
    }
    assert control["decided_by"] == "agent:mcp" and control["supersedes"] is None
    assert record not in [r["id"] for r in hidden["records"]]
    assert lifted["supersedes"] == control["withdrawal_id"] and lifted["action"] == "reinstate"
    assert lifted["scope"] == control["scope"] and lifted["still_withdrawn_by"] == []
    assert record in [r["id"] for r in shown["records"]]


def test_withdraw_reinstate_and_forget_refuse_bad_input_naming_the_argument(servers: Servers) -> None:
    home, client = servers.home, servers.trusted
    record = client.ok("remember", text="The design review happens in room Orion")["record_id"]
    before = stored(home)
    cases = [
        ("scope", client.error("withdraw", reason="r")),
        ("scope.archive_refs[0]", client.error("withdraw", archive_refs=["notes/x.md"], reason="r")),
        ("reason", client.error("withdraw", memory_item_ids=[record], reason=" ")),
        ("reason", client.error("withdraw", memory_item_ids=[record])),
        (UNKNOWN, client.error("withdraw", memory_item_ids=[UNKNOWN], reason="r")),
        ("memory_item_ids", client.error("withdraw", memory_item_ids=record, reason="r")),
        ("withdrawal_id", client.error("reinstate", withdrawal_id="wd-1", reason="r")),
        ("memwd-2026-01-01-999", client.error("reinstate", withdrawal_id="memwd-2026-01-01-999", reason="r")),
        ("scope", client.error("forget")),
        ("namespaces", client.error("forget", namespaces=["two words"])),
        ("records", client.error("forget", records=[record])),
    ]
    for named, text in cases:
        assert named in text, (named, text)
    assert stored(home) == before
    assert _exposed(home, record) == [True]


def test_a_tainted_session_may_withdraw_but_never_reinstate(servers: Servers) -> None:
    home = servers.home
    record = servers.trusted.ok("remember", text="The intern onboarding checklist lives in HR-12")[
        "record_id"
    ]
    control = servers.tainted.ok("withdraw", memory_item_ids=[record], reason="a web page said it is stale")
    before = stored(home)
    refused = servers.tainted.error("reinstate", withdrawal_id=control["withdrawal_id"], reason="undo")
    assert stored(home) == before and _exposed(home, record) == [False]
    servers.trusted.ok("reinstate", withdrawal_id=control["withdrawal_id"], reason="checked with HR")
    assert control["decided_by"] == "agent:mcp"
    assert "reinstate is not available to a tainted session (external)" in refused
    assert _exposed(home, record) == [True]


def test_withdraw_forget_and_stale_marks_need_their_grants(servers: Servers) -> None:
    home = servers.home
    record = servers.trusted.ok("remember", text="The legal hold covers mailbox archive M-9")["record_id"]
    before = stored(home)
    withdraw = servers.stranger.error("withdraw", memory_item_ids=[record], reason="r")
    forget = servers.stranger.error("forget", memory_item_ids=[record])
    stale = servers.stranger.error("review", record_id=record, verdict="stale")
    assert "agent:stranger may not withdraw a scope: it holds no 'withdraw' grant" in withdraw
    assert "agent:stranger may not forget a scope: it holds no 'withdraw' grant" in forget
    assert f"agent:stranger may not mark {record} stale: it holds no 'mark' grant" in stale
    assert stored(home) == before


def test_forget_returns_the_surface_receipt_and_touches_only_its_namespace(servers: Servers) -> None:
    home, client = servers.home, servers.trusted
    with Memory.open(home) as memory:
        mine = memory.remember(
            "Ada prefers morning standups", source="chat-u1", namespace="user:u1"
        ).record_id
        theirs = memory.remember("Bo prefers async standups", source="chat-u2", namespace="user:u2").record_id
    result = client.ok("forget", namespaces=["user:u1"], reason="user u1 asked")
    before = stored(home)
    again = client.error("forget", namespaces=["user:u1"])

    assert [s["surface"] for s in result["surfaces"]] == list(SURFACES)
    lines = result["receipt"].splitlines()
    assert lines == [f"{s['surface']}: {s['text']}" for s in result["surfaces"]] and len(lines) == 5
    assert result["erased"] is False and result["covered"] == [mine]
    assert result["withdrawal_id"] and result["withdrawal_id"] in lines[4]
    assert "withdrawn (reversible), not erased" in lines[4]
    assert lines[0].startswith("Context / Workspace: not erased")
    assert _exposed(home, mine, theirs) == [False, True]
    assert f"this exact scope is already withdrawn by {result['withdrawal_id']}" in again
    assert stored(home) == before
    never = client.ok("forget", source_or_run_refs=["chat-never-captured"])
    assert never["withdrawal_id"] is None and never["covered"] == [] and never["erased"] is False
    assert never["receipt"].splitlines()[4].startswith("Memory: no capture")
    assert stored(home) == before, "nothing entered memory, so nothing is written"


def test_approve_and_reject_stay_refused_even_when_memory_toml_grants_the_agent_approve(
    servers: Servers,
) -> None:
    home = servers.home
    quarantined = servers.tainted.ok("remember", text="The guest network SSID is Visitor-5G")["record_id"]
    before = stored(home)
    refused = [
        servers.trusted.error("review", record_id=quarantined, verdict=v) for v in ("approve", "reject")
    ]
    recalled = servers.trusted.ok("recall", query="guest network SSID")
    for verdict, text in zip(("approve", "reject"), refused, strict=True):
        assert f"verdict: {verdict} is a person's decision and is not served over MCP" in text
        assert f"agent-memory {verdict} {quarantined}" in text
    assert stored(home) == before
    assert [r["review"] for r in recalled["records"] if r["id"] == quarantined] == ["quarantined"]
