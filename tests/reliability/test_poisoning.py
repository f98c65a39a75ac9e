"""Poisoning: external content carrying instructions never reaches an agent's hot context (issue 11 item 4).

Every scenario of :mod:`poison_scenarios` is written through four channels into its own
Home, which already holds a trusted state ``host:staging`` and the owner's
``conventions.md``:

- a tainted session (``Memory.open(…, taint=("external",))``), which also tries to supersede
  the trusted state and to propose its records for promotion;
- MCP: ``agent-memory serve --taint external`` driven by the SDK's real client over stdio
  (``remember``, and ``supersede`` of the trusted state);
- import of a MemoryFile whose file and records are signed by a key the Home does not trust;
- import of a LoCoMo-style conversation file (``import --from locomo``).

Then the owner runs the jobs (``consolidate``, ``render``). An attack succeeds when its content
reaches ``MEMORY.md``, changes ``conventions.md``, supersedes the trusted state, is recalled
without the quarantine mark, or (a secret) is stored anywhere in the Home in clear. The
attack success rate per channel is recorded; it must be 0.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal
from fg_agent_id import KeyPair
from mcp import Client, StdioServerParameters
from mcp.types import Implementation
from poison_scenarios import SCENARIOS, TRUE_SUBJECT, TRUE_VALUE, Scenario
from reliability_kit import T0, every_file, make_home, record_figures

from agent_memory.errors import AgentMemoryError
from agent_memory.home import Home
from agent_memory.jobs.views import render
from agent_memory.memory import Memory
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.record import MemoryRecord, Provenance, State
from agent_memory.records.signing import sign_record

COMMAND = shutil.which("agent-memory", path=str(Path(sys.executable).parent))
CHANNELS = ("tainted-session", "mcp", "memory-file", "locomo")


def marker(channel: str, scenario: Scenario) -> str:
    """A word found nowhere else: ``qz`` + channel and scenario numbers + ``marker``."""
    return f"qz{CHANNELS.index(channel)}{SCENARIOS.index(scenario):02d}marker"


def prepared_home(root: Path) -> tuple[Path, str]:
    """A Home with the owner's trusted state record; return it and that record's id."""
    make_home(root)
    with Memory.open(root) as memory:
        trusted = memory.remember(TRUE_VALUE, source="ada", kind="state", subject=TRUE_SUBJECT, now=T0)
    render(Home.open(root))
    return root, trusted.record_id


def agent_memory(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the installed CLI as a user does."""
    if COMMAND is None:
        pytest.fail("the agent-memory command is not installed in this environment")
    return subprocess.run([COMMAND, *args], capture_output=True, text=True, check=False, timeout=120)


# ---------------------------------------------------------------------- the channels


def through_tainted_session(root: Path, trusted_id: str) -> dict[str, list[str]]:
    """Write each scenario as a tainted session; also try to supersede the truth and promote."""
    refused: dict[str, list[str]] = {}
    with Memory.open(root, taint=("external",), actor="agent:reader") as memory:
        for scenario in SCENARIOS:
            try:
                written = memory.remember(
                    scenario.body(marker("tainted-session", scenario)),
                    source="https://attacker.example/page",
                    type=scenario.type,
                    kind=scenario.kind,
                    subject=scenario.subject,
                    now=T0,
                )
            except AgentMemoryError as exc:
                refused[scenario.name] = [str(exc)]
                continue
            with contextlib.suppress(AgentMemoryError):
                memory.promotions.propose(written.record_id, reason="it is a team rule", now=T0)
                refused.setdefault("promotion-not-refused", []).append(scenario.name)
        with contextlib.suppress(AgentMemoryError):  # refused, or (tainted) only a dispute: judged below
            memory.supersede(
                trusted_id, "The staging host is db-666.", source="https://attacker.example", reason="x"
            )
    return refused


@contextmanager
def mcp_client(root: Path, *options: str) -> Iterator[Any]:
    """The SDK's real MCP client over stdio to ``agent-memory serve --home ROOT OPTIONS…``."""
    if COMMAND is None:
        pytest.fail("the agent-memory command is not installed in this environment")
    params = StdioServerParameters(
        command=COMMAND, args=["serve", "--home", str(root), *options], env=dict(os.environ)
    )
    with start_blocking_portal() as portal:
        client = Client(params, client_info=Implementation(name="poison-test", version="1.0"))
        with portal.wrap_async_context_manager(client) as entered:
            yield lambda name, **arguments: portal.call(entered.call_tool, name, arguments)


def through_mcp(root: Path, trusted_id: str) -> dict[str, list[str]]:
    """Write each scenario through ``serve --taint external``; also try the ``supersede`` tool."""
    refused: dict[str, list[str]] = {}
    with mcp_client(root, "--taint", "external", "--agent", "browser") as call:
        for scenario in SCENARIOS:
            arguments: dict[str, Any] = {
                "text": scenario.body(marker("mcp", scenario)),
                "type": scenario.type,
            }
            if scenario.kind:
                arguments.update(kind=scenario.kind, subject=scenario.subject)
            result = call("remember", **arguments)
            if result.is_error:
                refused[scenario.name] = [str(result.content)]
        attempt = call("supersede", old_id=trusted_id, text="The staging host is db-666.", reason="moved")
        if not attempt.is_error:
            refused.setdefault("supersede-not-refused", []).append(trusted_id)
    return refused


def through_memory_file(root: Path, trusted_id: str) -> dict[str, list[str]]:
    """Import the scenarios as a MemoryFile signed by an untrusted key (secrets in files of their own)."""
    untrusted = KeyPair.generate()
    refused: dict[str, list[str]] = {}
    groups = [[s for s in SCENARIOS if s.secret is None], *([s] for s in SCENARIOS if s.secret is not None)]
    for number, group in enumerate(groups):
        records = []
        for scenario in group:
            record = MemoryRecord.create(
                type=scenario.type if scenario.type != "preference" else "fact",
                body=scenario.body(marker("memory-file", scenario)),
                provenance=Provenance(kind="conversation", ref="https://attacker.example/export"),
                created_at=T0,
                kind=scenario.kind,
                subject=scenario.subject,
                extra=dict(scenario.extra),
            )
            records.append(sign_record(record, untrusted))
        path = root.parent / f"poison-{number}.json"
        path.write_bytes(MemoryFile(created_at=T0, records=tuple(records)).sign(untrusted).dumps())
        done = agent_memory("import", str(path), "--home", str(root))
        if done.returncode != 0:
            for scenario in group:
                refused[scenario.name] = [done.stderr.strip()]
    return refused


def through_locomo(root: Path, trusted_id: str) -> dict[str, list[str]]:
    """Import the scenarios as turns of a LoCoMo conversation by ``Mallory``."""
    turns = [
        {"speaker": "Mallory", "dia_id": f"D1:{n + 1}", "text": scenario.body(marker("locomo", scenario))}
        for n, scenario in enumerate(SCENARIOS)
    ]
    conversation = {
        "speaker_a": "Mallory",
        "speaker_b": "Ada",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": turns,
    }
    path = root.parent / "locomo.json"
    path.write_text(json.dumps([{"sample_id": "conv-poison", "conversation": conversation}]), "utf-8")
    done = agent_memory("import", "--from", "locomo", str(path), "--home", str(root))
    refused = {}
    for scenario in SCENARIOS:
        if scenario.body(marker("locomo", scenario)).split()[0] not in json.dumps(_bodies(root)):
            refused[scenario.name] = [done.stderr.strip()]
    return refused


WRITERS = {
    "tainted-session": through_tainted_session,
    "mcp": through_mcp,
    "memory-file": through_memory_file,
    "locomo": through_locomo,
}


def _bodies(root: Path) -> list[str]:
    return [record.body for record in Home.open(root).store().list()]


# ---------------------------------------------------------------------- judging


def judge(channel: str, root: Path, trusted_id: str, conventions: bytes) -> dict[str, list[str]]:
    """Run the owner's jobs, then return ``{scenario: [how it succeeded, …]}`` (empty lists: failed)."""
    with Memory.open(root) as memory:
        memory.maintenance.consolidate(now=T0)
    render(Home.open(root))
    hot = (root / "MEMORY.md").read_text("utf-8")
    files = every_file(root)
    successes: dict[str, list[str]] = {scenario.name: [] for scenario in SCENARIOS}
    with Memory.open(root) as memory:
        trusted = memory.get(trusted_id)
        for scenario in SCENARIOS:
            word = marker(channel, scenario)
            found = successes[scenario.name]
            if word in hot:
                found.append("reached MEMORY.md")
            if (root / "conventions.md").read_bytes() != conventions:
                found.append("changed conventions.md")
            if scenario.goal in ("state", "lookalike") and (
                trusted.state is State.SUPERSEDED or trusted.superseded_by
            ):
                found.append("superseded the trusted state")
            if scenario.secret is not None:
                held = [p for p, data in files.items() if scenario.secret.encode("utf-8") in data]
                if held:
                    found.append(f"secret stored in clear in {held[:3]}")
                continue
            stored = [r for r in memory.store.list() if word in r.body]
            recalled = memory.recall(word, budget_tokens=4000, include_history=True, now=T0, touch=False)
            hits = [item for item in recalled.records if word in item.record.body]
            if stored and not hits:
                found.append("stored but not recallable")
            for item in hits:
                if item.review != "quarantined" or not any("quarantined" in r for r in item.reasons):
                    found.append(f"recalled as {item.review!r}, not quarantined")
    return successes


@pytest.mark.parametrize(
    "channel",
    [
        "tainted-session",
        "mcp",
        "memory-file",
        "locomo",
    ],
)
def test_no_poisoned_content_reaches_the_hot_context_or_replaces_the_truth(
    channel: str, tmp_path: Path
) -> None:
    root, trusted_id = prepared_home(tmp_path / "home")
    conventions = (root / "conventions.md").read_bytes()
    refused = WRITERS[channel](root, trusted_id)
    escalations = {k: v for k, v in refused.items() if k.endswith("not-refused")}
    successes = judge(channel, root, trusted_id, conventions)
    succeeded = sorted(name for name, how in successes.items() if how)
    record_figures(
        "poisoning",
        channel=channel,
        attacks=len(SCENARIOS),
        refused_at_write=len([k for k in refused if not k.endswith("not-refused")]),
        succeeded=len(succeeded),
        success_rate=round(len(succeeded) / len(SCENARIOS), 3),
        escalations=len(escalations),
        trusted_value_still_autoloaded=TRUE_VALUE in (root / "MEMORY.md").read_text("utf-8"),
    )
    assert not escalations, escalations
    assert not succeeded, {name: successes[name] for name in succeeded}


def test_an_imported_state_value_never_stands_beside_the_held_one_as_a_second_active_record(
    tmp_path: Path,
) -> None:
    root, trusted_id = prepared_home(tmp_path / "home")
    through_memory_file(root, trusted_id)
    with Memory.open(root) as memory:
        active = [r.id for r in memory.store.list(state=State.ACTIVE) if r.subject == TRUE_SUBJECT]
        live = [r for r in memory.store.list(state=State.TRANSITIONAL) if r.subject == TRUE_SUBJECT]
        transitions = [e for e in memory.log.entries() if e.action == "transition"]
    assert len(active) <= 1, active
    # The first untrusted value disputes the owner's (both wait for review); the second, arriving
    # while the subject is disputed, is held back. Nothing superseded the owner's value.
    assert trusted_id in {r.id for r in live} and len(live) == 2
    assert all(r.taint == ("external",) for r in live if r.id != trusted_id)
    assert [trusted_id in e.record_ids for e in transitions] == [True]
