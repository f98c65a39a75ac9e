"""Fuzzing what agents send: recall queries over every store, and MCP tool arguments (issue 11 item 1).

Recall searches any text literally, so a query never raises, whatever FTS5 or ``tsquery``
syntax it holds; only a budget or ``k`` below 1 or a naive time is a ``RecordError``. A
recall never changes the store or the log. An MCP tool call either fails validation of its
arguments (the SDK's tool error), fails with a ``ToolError`` carrying an ``AgentMemoryError``
and writes nothing, or succeeds with a result that matches its output schema.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from random import Random
from typing import Any

import pytest
from fuzz_inputs import query as fuzz_query
from fuzz_inputs import text as fuzz_text
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata, func_metadata
from pydantic import ValidationError
from reliability_kit import (
    INTERFACE_EXAMPLES,
    STORE_KINDS,
    T0,
    fuzz_folder,
    fuzz_inputs,
    make_home,
    memory_over,
    record_figures,
)
from reliability_kit import snapshot as file_snapshot

from agent_memory.errors import AgentMemoryError, RecordError
from agent_memory.mcp.server import Session
from agent_memory.mcp.tools import Tools
from agent_memory.memory import Memory

SEED_TEXTS = (
    ("The staging host is db-2.", "state", "host:staging"),
    ("The staging host is db-3.", "state", "host:staging"),
    ("Deploys go out on Tuesdays after the tea break.", None, None),
    ("The old lighthouse keeps the backup tapes.", None, None),
    ('Quotes "like this" and NEAR(a b) and col:x are just words here.', None, None),
)


_ZONES = (UTC, timezone(timedelta(hours=9)))


def moment(rng: Random) -> datetime | None:
    """None, an aware time within about a year of T0, or a naive one (which recall must refuse)."""
    roll = rng.random()
    if roll < 0.5:
        return None
    when = T0 + timedelta(days=rng.randint(-400, 400))
    return when.replace(tzinfo=None) if roll > 0.95 else when.astimezone(rng.choice(_ZONES))


def seed(memory: Memory) -> None:
    """Write the records every fuzzed recall searches: a state supersede, knowledge, a tainted dispute."""
    for number, (text, kind, subject) in enumerate(SEED_TEXTS):
        memory.remember(
            text, source=f"seed-{number}", kind=kind, subject=subject, now=T0 + timedelta(hours=number)
        )
    memory.remember(
        "The staging host is db-9.",
        source="web-page",
        kind="state",
        subject="host:staging",
        taint=("external",),
        now=T0 + timedelta(days=1),
    )


def truth(memory: Memory) -> tuple[Any, ...]:
    """What a read must never change: every version of every record, and the log's head."""
    versions = tuple(
        (record.id, tuple(v.canonical_bytes() for v in memory.store.history(record.id)))
        for record in memory.store.list()
    )
    head = memory.log.last()
    return versions, (head.seq, head.digest) if head else None


@pytest.fixture(scope="module", params=STORE_KINDS)
def filled(request: pytest.FixtureRequest) -> Iterator[Memory]:
    """A Memory over each store kind holding :data:`SEED_TEXTS` and a tainted dispute."""
    folder = fuzz_folder("agent-memory-recall-fuzz-")
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("XDG_CONFIG_HOME", str(folder / "config"))
            with memory_over(request.param, folder) as memory:
                seed(memory)
                yield memory
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_any_query_is_searched_literally_and_changes_nothing_stored(filled: Memory) -> None:
    outcomes: Counter[str] = Counter()

    @fuzz_inputs(INTERFACE_EXAMPLES)
    def run(rng: Random) -> None:
        query = fuzz_query(rng)
        # About one call in five is invalid (a budget or k below 1, a naive time): refused.
        budget = rng.randint(-2, 0) if rng.random() < 0.05 else rng.choice((1, 2000, rng.randint(1, 40_000)))
        k = rng.randint(-1, 0) if rng.random() < 0.05 else rng.choice((None, rng.randint(1, 200)))
        as_of, valid_at = moment(rng), moment(rng)
        namespace = rng.choice((None, "default", "user:ada", "", fuzz_text(rng)))
        history, archived = rng.random() < 0.5, rng.random() < 0.5
        before = truth(filled)
        invalid = (
            budget < 1
            or (k is not None and k < 1)
            or any(t is not None and t.tzinfo is None for t in (as_of, valid_at))
        )
        try:
            result = filled.recall(
                query,
                budget_tokens=budget,
                k=k,
                as_of=as_of,
                valid_at=valid_at,
                namespace=namespace,
                include_history=history,
                include_archived=archived,
                now=T0 + timedelta(days=2),
            )
        except RecordError:
            assert invalid, "a valid recall raised"
            outcomes["refused"] += 1
        else:
            assert not invalid, "an invalid budget, k or naive time was accepted"
            assert result.total_tokens <= budget
            assert k is None or len(result.records) <= k
            result.as_prompt_block()
            outcomes["answered"] += 1
        assert truth(filled) == before

    run()
    record_figures("fuzz-recall", store=type(filled.store).__name__, **outcomes)


# ---------------------------------------------------------------------- MCP tool arguments

TIMES = ("2026-11-29T16:00:00.000Z", "2026-11-29T16:00:00+09:00", "2026-11-29T16:00:00", "yesterday", "")
GARBAGE_IDS = ("mem:" + "0" * 32, "mem:XYZ", "../../etc/passwd", "mem:" + "a" * 31, "")


class ToolBench:
    """The MCP tools of one session over a Home, rebuilt from a template when it has grown."""

    def __init__(self, folder: Path, taint: tuple[str, ...]) -> None:
        self.folder = folder
        self.taint = taint
        self.template = folder / "template"
        make_home(self.template)
        with Memory.open(self.template) as memory:
            seed(memory)
        self.memory: Memory | None = None
        self.reset()

    def reset(self) -> None:
        if self.memory is not None:
            self.memory.close()
        shutil.rmtree(self.folder / "home", ignore_errors=True)
        shutil.copytree(self.template, self.folder / "home")
        self.memory = Memory.open(
            self.folder / "home", actor="agent:fuzz", taint=self.taint, source_kind="mcp"
        )
        session = Session(self.folder / "home", "fuzz", self.taint)
        tools = Tools(self.memory, session)
        self.table: dict[str, tuple[Any, FuncMetadata]] = {
            name: (fn, func_metadata(fn, skip_names=("ctx",), structured_output=True))
            for name, _, fn, _ in tools.table()
        }

    def ids(self) -> list[str]:
        assert self.memory is not None
        return sorted(self.memory.store.version_tokens())


@pytest.fixture(scope="module", params=[(), ("external",)], ids=["trusted-session", "tainted-session"])
def bench(request: pytest.FixtureRequest) -> Iterator[ToolBench]:
    folder = fuzz_folder("agent-memory-mcp-fuzz-")
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("XDG_CONFIG_HOME", str(folder / "config"))
            made = ToolBench(folder, request.param)
            yield made
            if made.memory is not None:
                made.memory.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def tool_call(rng: Random, held: list[str], known: dict[str, list[str]]) -> tuple[str, dict[str, Any]]:
    """A tool name and its arguments: each valid, invalid (wrong type, out of range) or missing.

    Four calls in five keep to the tool's own parameters with mostly valid values, so the
    tool bodies run; the rest mix every parameter of every tool with anything at all.
    """
    name = rng.choice(sorted(known))

    def record_id(r: Random) -> str:
        return r.choice(held) if held and r.random() < 0.9 else r.choice(GARBAGE_IDS)

    def pick(*options: Any) -> Any:
        return lambda r: r.choice(options)

    def anything(r: Random) -> Any:
        return r.choice(
            (
                None,
                True,
                r.randint(-(2**40), 2**40),
                r.random() * 1e6,
                float("nan"),
                fuzz_text(r),
                [fuzz_text(r)],
            )
        )

    valid: dict[str, Any] = {
        "text": lambda r: fuzz_text(r).strip() or "db-7 is the staging host",
        "tags": lambda r: [fuzz_text(r)[:64] or "t" for _ in range(r.randrange(4))],
        "source": lambda r: r.choice((None, fuzz_text(r)[:500])),
        "kind": pick("knowledge", "state", None),
        "subject": lambda r: r.choice((None, (fuzz_text(r)[:200] or "s"), "host:staging")),
        "type": pick("fact", "preference", "episodic", "procedure"),
        "occurred_at": pick(None, *TIMES[:2]),
        "valid_from": pick(None, *TIMES[:2]),
        "query": lambda r: fuzz_query(r)[:2000] or "staging",
        "budget_tokens": lambda r: r.randint(1, 32_000),
        "include_history": pick(True, False),
        "include_archived": pick(True, False),
        "as_of": pick(None, *TIMES[:2]),
        "valid_at": pick(None, *TIMES[:2]),
        "k": lambda r: r.choice((None, r.randint(1, 100))),
        "old_id": record_id,
        "winner_id": record_id,
        "loser_id": record_id,
        "record_id": record_id,
        "reason": lambda r: fuzz_text(r)[:1000] or "because",
        "expected_version": lambda r: r.choice((None, r.randint(1, 3))),
        "verdict": pick("stale", "approve", "reject", "helpful", "misleading", "neutral", "unknown"),
        "record_ids": lambda r: [record_id(r) for _ in range(r.randint(1, 3))],
        "attribution_confidence": pick("low", "medium", "high"),
        "use_role": pick("background", "constraint", "action-premise"),
        "task_id": pick(None, "task-1"),
        "evidence_refs": lambda r: r.choice((None, ["ticket-9"], [])),
    }
    invalid: dict[str, Any] = {
        "text": pick("", "x" * 16_001),
        "tags": lambda r: ["t"] * 40,
        "kind": pick("fact"),
        "type": pick("memo"),
        "occurred_at": pick(*TIMES[2:]),
        "valid_from": pick(*TIMES[2:]),
        "as_of": pick(*TIMES[2:]),
        "valid_at": pick(*TIMES[2:]),
        "query": pick("", "q" * 2001),
        "budget_tokens": pick(0, -5, 40_000),
        "k": pick(0, -1, 101),
        "expected_version": pick(0, -1),
        "verdict": pick("nope"),
        "record_ids": pick([], ["mem:XYZ"]),
        "task_id": pick("has space", ""),
    }
    arguments: dict[str, Any] = {}
    if rng.random() < 0.8:
        for parameter in known[name]:
            roll = rng.random()
            if roll < 0.8 and parameter in valid:
                arguments[parameter] = valid[parameter](rng)
            elif roll < 0.9:
                arguments[parameter] = invalid.get(parameter, anything)(rng)
        return name, arguments
    for parameter in valid:
        roll = rng.randrange(10)
        if roll < 6:
            arguments[parameter] = valid[parameter](rng)
        elif roll == 6:
            arguments[parameter] = anything(rng)
    if rng.randrange(10) == 0:
        arguments[fuzz_text(rng)] = anything(rng)
    return name, arguments


def test_any_tool_call_is_refused_cleanly_or_answers_in_its_schema(bench: ToolBench) -> None:
    outcomes: Counter[str] = Counter()
    home = bench.folder / "home"

    @fuzz_inputs(INTERFACE_EXAMPLES)
    def run(rng: Random) -> None:
        held = bench.ids()
        known = {name: list(metadata.arg_model.model_fields) for name, (_, metadata) in bench.table.items()}
        name, arguments = tool_call(rng, held, known)
        fn, metadata = bench.table[name]
        before = file_snapshot(home, ("notes", "log", "proposals"))
        try:
            validated = metadata.validate_arguments(arguments)
        except ValidationError:
            assert file_snapshot(home, ("notes", "log", "proposals")) == before
            outcomes["invalid arguments"] += 1
            return
        try:
            result = fn(**validated)
        except ToolError as exc:
            error: BaseException = exc  # the SDK's tool error: what caused it decides
            cause = error.__cause__
            assert isinstance(cause, AgentMemoryError), (
                f"{name} failed without an AgentMemoryError: {error!r}"
            )
            assert file_snapshot(home, ("notes", "log", "proposals")) == before, f"a refused {name} wrote"
            outcomes["tool error"] += 1
            return
        metadata.convert_result(result)
        outcomes["answered"] += 1
        if name == "remember" and len(held) >= 40:
            bench.reset()  # keep the Home small: every input then costs about the same

    run()
    record_figures("fuzz-mcp-arguments", session="tainted" if bench.taint else "trusted", **outcomes)
