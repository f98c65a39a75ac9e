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
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata, func_metadata
from pydantic import ValidationError

from agent_memory.errors import AgentMemoryError, RecordError
from agent_memory.mcp.server import Session
from agent_memory.mcp.tools import Tools
from agent_memory.memory import Memory
from reliability_kit import STORE_KINDS, T0, fuzz_folder, fuzz_settings, make_home, memory_over, record_figures
from reliability_kit import snapshot as file_snapshot
from strategies import texts

SEED_TEXTS = (
    ("The staging host is db-2.", "state", "host:staging"),
    ("The staging host is db-3.", "state", "host:staging"),
    ("Deploys go out on Tuesdays after the tea break.", None, None),
    ("The old lighthouse keeps the backup tapes.", None, None),
    ('Quotes "like this" and NEAR(a b) and col:x are just words here.', None, None),
)
seeds = st.randoms(use_true_random=True)


_ZONES = (UTC, timezone(timedelta(hours=9)), None)
moments = st.none() | st.builds(
    lambda days, zone: (T0 + timedelta(days=days)).replace(tzinfo=zone) if zone else T0.replace(tzinfo=None),
    st.integers(-400, 400),
    st.sampled_from(_ZONES),
)


def seed(memory: Memory) -> None:
    """Write the records every fuzzed recall searches: a state supersede, knowledge, a tainted dispute."""
    for number, (text, kind, subject) in enumerate(SEED_TEXTS):
        memory.remember(text, source=f"seed-{number}", kind=kind, subject=subject, now=T0 + timedelta(hours=number))
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

    @fuzz_settings()
    @given(
        query=queries(),
        budget=st.integers(-2, 40_000),
        k=st.none() | st.integers(-1, 200),
        as_of=moments,
        valid_at=moments,
        namespace=st.none() | st.sampled_from(("default", "user:ada", "")) | texts(),
        history=st.booleans(),
        archived=st.booleans(),
    )
    def run(
        query: str,
        budget: int,
        k: int | None,
        as_of: datetime | None,
        valid_at: datetime | None,
        namespace: str | None,
        history: bool,
        archived: bool,
    ) -> None:
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
        self.memory = Memory.open(self.folder / "home", actor="agent:fuzz", taint=self.taint, source_kind="mcp")
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


@dataclass(frozen=True)
class HeldId:
    """The ``n``-th id the Home holds when the call is made (a draw must not depend on the Home)."""

    n: int


def resolve(value: Any, ids: list[str]) -> Any:
    """Replace every :class:`HeldId` in ``value`` by a held id (or a garbage one past the end)."""
    if isinstance(value, HeldId):
        return ids[value.n] if value.n < len(ids) else GARBAGE_IDS[value.n % len(GARBAGE_IDS)]
    if isinstance(value, list):
        return [resolve(item, ids) for item in value]
    return value


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A tool name and its arguments: each plausible, wrong-typed, out of range or missing."""
    name = draw(st.sampled_from(("remember", "recall", "status", "supersede", "resolve", "review", "feedback")))
    record_id = st.builds(HeldId, st.integers(0, 24))
    anything = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | texts() | st.lists(texts())
    plausible: dict[str, st.SearchStrategy[Any]] = {
        "text": texts() | st.sampled_from(("x" * 16_001, "db-7 is the staging host")),
        "tags": st.none() | st.lists(texts(), max_size=40),
        "source": st.none() | texts(),
        "kind": st.sampled_from(("knowledge", "state", None, "fact")),
        "subject": st.none() | texts() | st.just("host:staging"),
        "type": st.sampled_from(("fact", "preference", "episodic", "rule", "memo")),
        "occurred_at": st.none() | st.sampled_from(TIMES),
        "valid_from": st.none() | st.sampled_from(TIMES),
        "query": queries(),
        "budget_tokens": st.integers(-5, 40_000),
        "include_history": st.booleans(),
        "include_archived": st.booleans(),
        "as_of": st.none() | st.sampled_from(TIMES),
        "valid_at": st.none() | st.sampled_from(TIMES),
        "k": st.none() | st.integers(-5, 200),
        "old_id": record_id,
        "winner_id": record_id,
        "loser_id": record_id,
        "record_id": record_id,
        "reason": texts(),
        "expected_version": st.none() | st.integers(-1, 5),
        "verdict": st.sampled_from(("stale", "approve", "reject", "helpful", "misleading", "nope")),
        "record_ids": st.lists(record_id, max_size=3),
        "attribution_confidence": st.sampled_from(("low", "high", "certain")),
        "use_role": st.sampled_from(("background", "constraint", "gossip")),
        "task_id": st.none() | texts(),
        "evidence_refs": st.none() | st.lists(texts(), max_size=3),
    }
    arguments: dict[str, Any] = {}
    for parameter, strategy in plausible.items():
        pick = draw(st.integers(0, 9))
        if pick < 6:
            arguments[parameter] = draw(strategy)
        elif pick == 6:
            arguments[parameter] = draw(anything)
    if draw(st.integers(0, 9)) == 0:
        arguments[draw(texts())] = draw(anything)
    return name, arguments


def test_any_tool_call_is_refused_cleanly_or_answers_in_its_schema(bench: ToolBench) -> None:
    outcomes: Counter[str] = Counter()
    home = bench.folder / "home"

    @fuzz_settings()
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        name, drawn = data.draw(tool_calls())
        held = bench.ids()
        arguments = {key: resolve(value, held) for key, value in drawn.items()}
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
            assert isinstance(exc.__cause__, AgentMemoryError), f"{name} failed without an AgentMemoryError: {exc!r}"
            assert file_snapshot(home, ("notes", "log", "proposals")) == before, f"a refused {name} wrote"
            outcomes["tool error"] += 1
            return
        metadata.convert_result(result)
        outcomes["answered"] += 1
        if name == "remember" and len(held) >= 40:
            bench.reset()  # keep the Home small: every input then costs about the same

    run()
    record_figures("fuzz-mcp-arguments", session="tainted" if bench.taint else "trusted", **outcomes)
