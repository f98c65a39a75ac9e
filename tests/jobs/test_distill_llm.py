"""The LLM distill operator against a small OpenAI-compatible server on 127.0.0.1 (canned replies)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from jobkit import T0, at, snapshot

from agent_memory.errors import ConfigError
from agent_memory.home import Home
from agent_memory.jobs.archive import archive_inbox
from agent_memory.jobs.distill import read_ledger
from agent_memory.jobs.distill_llm import LLMOperator, LLMSettings, OperatorError, parse_reply
from agent_memory.jobs.inbox import InboxItem, capture
from agent_memory.memory import Memory
from agent_memory.records.record import EpistemicStatus, Kind
from agent_memory.search.recipes import SearchSettings, splice_search
from fake_llm import FakeLLM, echo_reply, fake_llm, items_reply, llm_table

KEY_ENV = "AGENT_MEMORY_TEST_LLM_KEY"
RUN = at(hours=2)
TEA = "Ada prefers green tea in the morning."
HOST = "Staging runs on db-4."


@pytest.fixture
def server() -> Iterator[FakeLLM]:
    with fake_llm() as running:
        yield running


@pytest.fixture
def lines(home: Home, server: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> list[InboxItem]:
    """Two archived lines in a Home whose ``[llm]`` points at the fake server."""
    monkeypatch.setenv(KEY_ENV, "sk-test-123")
    with (home.root / "memory.toml").open("a", encoding="utf-8") as toml:
        toml.write(llm_table(server.url))
    items = [
        capture(home, TEA, source="chat:1", at=T0),
        capture(home, HOST, kind="state", subject="host:staging", source="chat:2", at=T0),
    ]
    archive_inbox(home, now=at(hours=1))
    return items


def bm25(home: Home) -> Memory:
    toml = home.root / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
    return Memory.open(home.root)


def distill(home: Home) -> tuple[Memory, Any]:
    memory = bm25(home)
    return memory, memory.maintenance.distill(operator="llm", now=RUN)


def unchanged(home: Home, before: dict[str, bytes]) -> bool:
    return {k: v for k, v in snapshot(home.root).items() if not k.startswith(".cache")} == {
        k: v for k, v in before.items() if not k.startswith(".cache")
    }


def test_a_good_reply_becomes_generated_proposals_through_the_same_gate(
    home: Home, server: FakeLLM, lines: list[InboxItem]
) -> None:
    server.replies.append(
        items_reply(
            {"anchor": lines[0].anchor, "text": "Ada prefers green tea in the morning", "type": "preference"},
            {
                "anchor": lines[1].anchor,
                "text": "Staging runs on db-4",
                "kind": "state",
                "subject": "host:staging",
            },
        )
    )
    memory, report = distill(home)
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions" and request["authorization"] == "Bearer sk-test-123"
    assert request["body"]["model"] == "fake-distiller"
    assert request["body"]["response_format"] == {"type": "json_object"}
    assert [line["anchor"] for line in server.lines_sent()] == [i.anchor for i in lines]
    assert (report.operator, report.model) == ("llm", "fake-distiller")
    records = [p.proposals[0].record for p in report.proposals]
    assert all(r is not None and r.provenance.kind == "generated" for r in records)
    assert all(r is not None and r.epistemic_status is EpistemicStatus.INFERRED for r in records)
    assert sorted((r.body, r.kind) for r in records if r is not None) == [
        ("Ada prefers green tea in the morning", Kind.KNOWLEDGE),
        ("Staging runs on db-4", Kind.STATE),
    ]
    (event,) = [e for e in memory.log.entries() if e.action == "distill"]
    assert event.details["operator"] == "llm" and event.details["model"] == "fake-distiller"
    outcome = memory.proposals.accept([p.id for p in report.proposals], now=at(hours=3))
    assert len(outcome.done) == 2 and memory.store.list(subject="host:staging")[0].confidence == 0.5


def test_a_reply_that_is_not_json_is_rejected_nothing_is_written_and_the_lines_stay_eligible(
    home: Home, server: FakeLLM, lines: list[InboxItem]
) -> None:
    before = snapshot(home.root)
    server.replies.append("Sure! Here are the items: ada likes tea")
    memory = Memory.open(home.root)
    report = memory.maintenance.distill(operator="llm", now=RUN, dry_run=True)
    (rejection,) = report.rejections
    assert rejection.detail.startswith("bad reply: not JSON") and set(rejection.record_ids) == {
        i.anchor for i in lines
    }
    assert report.proposals == [] and unchanged(home, before)
    server.replies.append("not json either")
    memory.maintenance.distill(operator="llm", now=RUN)
    assert read_ledger(memory.log) == {}  # refused lines are read again next run
    server.replies.append(echo_reply)
    assert len(memory.maintenance.distill(operator="llm", now=at(hours=3)).proposals) == 2


def test_an_illegal_move_is_rejected_with_its_reason_and_nothing_is_filed(
    home: Home, server: FakeLLM, lines: list[InboxItem]
) -> None:
    server.replies.append(
        items_reply(
            {"anchor": lines[0].anchor, "text": TEA, "action": "delete"},
            {"anchor": lines[1].anchor, "text": HOST, "supersedes": "mem:" + "0" * 32},
        )
    )
    _, report = distill(home)
    assert report.proposals == []
    details = [r.detail for r in report.rejections]
    assert details == [
        "item 0: illegal move (action 'delete'): distill only extracts; supersede follows the exact subject",
        "item 1: illegal move (supersedes): distill only extracts; supersede follows the exact subject",
    ]
    assert not (home.root / "proposals" / "pending-consolidation").exists()


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        (
            {"anchor": "archive/2026-11-29.md#mem-2026-11-29-099", "text": TEA},
            "is not one of the archive lines",
        ),
        ({"anchor": "../../conventions.md", "text": TEA}, "is not one of the archive lines"),
        ({"text": TEA}, "is not one of the archive lines"),
        ({"anchor": "A0", "text": "Bo flies kites on Mars every winter."}, "not grounded in its line"),
        ({"anchor": "A0", "text": TEA, "type": "rule"}, "type 'rule' is not one of"),
        ({"anchor": "A0", "text": TEA, "kind": "state"}, "differs from the line's knowledge"),
        ({"anchor": "A0", "text": TEA, "colour": "red"}, "unknown fields ['colour']"),
        ({"anchor": "A0", "text": "  "}, "text must be a non-empty string"),
        ({"anchor": "A0", "text": TEA, "tags": ["Not A Label"]}, "tags must be a list"),
    ],
)
def test_a_bad_item_is_rejected_alone_with_its_reason(
    lines: list[InboxItem], item: dict[str, Any], problem: str
) -> None:
    given = {k: (lines[0].anchor if v == "A0" else v) for k, v in item.items()}
    found = parse_reply(items_reply(given, {"anchor": lines[1].anchor, "text": HOST}), lines)
    assert [c.anchor for c in found.candidates] == [lines[1].anchor]
    ((_, reason),) = found.rejected
    assert problem in reason


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "bad reply: no message content"),
        ("[1, 2]", "bad reply: wrong shape"),
        ('{"records": []}', "bad reply: wrong shape"),
        ('{"items": "none"}', "bad reply: wrong shape"),
        ('{"items": [', "bad reply: not JSON"),
    ],
)
def test_a_bad_reply_refuses_every_line_it_was_asked_about(
    lines: list[InboxItem], content: str | None, problem: str
) -> None:
    found = parse_reply(content, lines)
    assert found.candidates == [] and found.skipped == {}
    ((anchors, reason),) = found.rejected
    assert reason.startswith(problem) and anchors == tuple(i.anchor for i in lines)


def test_a_fenced_reply_is_read_and_a_line_with_no_item_is_skipped(lines: list[InboxItem]) -> None:
    fenced = "```json\n" + items_reply({"anchor": lines[0].anchor, "text": TEA}) + "\n```"
    found = parse_reply(fenced, lines)
    assert [c.anchor for c in found.candidates] == [lines[0].anchor]
    assert found.skipped == {lines[1].anchor: "the model kept nothing from this line"}


def test_a_state_line_gives_at_most_one_value(lines: list[InboxItem]) -> None:
    state = lines[1]
    found = parse_reply(
        items_reply(
            {"anchor": state.anchor, "text": HOST}, {"anchor": state.anchor, "text": "Staging uses db-4"}
        ),
        lines,
    )
    assert len(found.candidates) == 1 and "at most one value" in found.rejected[0][1]


def test_an_endpoint_error_raises_and_writes_nothing(
    home: Home, server: FakeLLM, lines: list[InboxItem]
) -> None:
    memory = bm25(home)
    before = snapshot(home.root)
    server.replies.append(500)
    with pytest.raises(OperatorError, match="HTTP 500"):
        memory.maintenance.distill(operator="llm", now=RUN)
    assert unchanged(home, before)


def test_batches_hold_at_most_batch_lines_lines(home: Home, server: FakeLLM, lines: list[InboxItem]) -> None:
    toml = home.root / "memory.toml"
    toml.write_text(toml.read_text("utf-8") + "batch_lines = 1\njson_mode = false\n", "utf-8")
    server.replies += [echo_reply, echo_reply]
    _, report = distill(home)
    assert [len(server.lines_sent(i)) for i in (0, 1)] == [1, 1] and len(report.proposals) == 2
    assert all("response_format" not in r["body"] for r in server.requests)


def test_the_api_key_comes_from_the_named_variable_or_the_operator_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", api_key_env=KEY_ENV)
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(ConfigError, match=f"{KEY_ENV} .* is not set"):
        LLMOperator(settings)
    assert LLMOperator(LLMSettings(base_url="http://h/v1", model="m", api_key_env="")).model == "m"


@pytest.mark.parametrize(
    ("table", "field"),
    [
        ({"model": "m"}, "llm.base_url"),
        ({"base_url": "ftp://h", "model": "m"}, "llm.base_url"),
        ({"base_url": "http://h/v1"}, "llm.model"),
        ({"base_url": "http://h/v1", "model": "m", "batch_lines": 0}, "llm.batch_lines"),
        ({"base_url": "http://h/v1", "model": "m", "timeout_seconds": "60"}, "llm.timeout_seconds"),
        ({"base_url": "http://h/v1", "model": "m", "json_mode": 1}, "llm.json_mode"),
        ({"base_url": "http://h/v1", "model": "m", "api_key": "sk-x"}, "llm.api_key"),
    ],
)
def test_a_bad_llm_table_is_refused_naming_the_key(table: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as raised:
        LLMSettings.from_toml(table, "memory.toml")
    assert raised.value.field == field


def test_the_llm_table_round_trips_through_memory_toml(home: Home, server: FakeLLM) -> None:
    with (home.root / "memory.toml").open("a", encoding="utf-8") as toml:
        toml.write(llm_table(server.url, batch_lines=5))
    settings = Home.open(home.root).settings
    assert settings.llm == LLMSettings(
        base_url=server.url, model="fake-distiller", api_key_env=KEY_ENV, timeout_seconds=10,
        max_retries=0, batch_lines=5,
    )  # fmt: skip
    import tomllib

    assert tomllib.loads(settings.to_toml())["llm"]["batch_lines"] == 5
    assert json.loads(json.dumps(tomllib.loads(settings.llm.to_toml())))["llm"]["model"] == "fake-distiller"


def test_without_the_openai_package_the_operator_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ConfigError) as raised:
        LLMOperator(LLMSettings(base_url="http://h/v1", model="m", api_key_env=""))
    assert raised.value.hint == "pip install 'agent-memory[llm]'"
