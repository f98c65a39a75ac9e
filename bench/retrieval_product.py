"""The product as users drive it: ``agent-memory import --from locomo|longmemeval``, then MCP ``recall``.

Issue 21: the retrieval tables showed the index's figures while the porcelain returned far
less; these rows are what a user gets, so the two cannot drift apart unseen. For each history
(a LoCoMo conversation, a LongMemEval question's haystack) the dataset's own record is written
to a file as the dataset ships it, a fresh Home is made with ``agent-memory init`` (default
recipes: the hybrid, since the model is part of the default install), the file is imported
with the installed command, and ``agent-memory serve`` answers every question through the MCP
SDK's client over stdio: ``recall(query, budget_tokens=32000, k=100)``, asked now (MCP recall
has no clock argument; LoCoMo's questions carry no date either). A returned record is mapped
back to its turn by its source anchor (``locomo.json#conv-26/D1:3``,
``longmemeval_s.json#/0/haystack_sessions/3/5``); records that are no dataset turn are skipped.

The product embeds every turn itself (the bench's embedding cache is not used: the importers
add their tag to the indexed text), so these rows cost what an import costs a user.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from retrieval_data import LOCOMO, LONGMEMEVAL, History

COMMAND = shutil.which("agent-memory", path=str(Path(sys.executable).parent)) or "agent-memory"
BUDGET = 32_000
K = 100
PRODUCT = "product: CLI import, then MCP recall (default install, budget 32,000)"

Ranking = list[int]


def _raw(path: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return data


_LOCOMO_RAW: dict[str, dict[str, Any]] = {}
_LME_RAW: list[dict[str, Any]] = []


def _locomo_sample(name: str) -> dict[str, Any]:
    if not _LOCOMO_RAW:
        _LOCOMO_RAW.update({s["sample_id"]: s for s in _raw(LOCOMO)})
    return _LOCOMO_RAW[name]


def _lme_record(history: History) -> dict[str, Any]:
    if not _LME_RAW:
        _LME_RAW.extend(_raw(LONGMEMEVAL))
    for record in _LME_RAW:
        if record["question"] == history.questions[0].text and _lme_turns(record) == len(history.turns):
            return record
    raise KeyError(f"no LongMemEval record for {history.name}")


def _lme_turns(record: dict[str, Any]) -> int:
    return sum(
        1 for s in record["haystack_sessions"] for m in s if m["role"] == "user" and m["content"].strip()
    )


def _locomo_positions(sample: dict[str, Any]) -> dict[str, int]:
    """``{dia_id: turn index}`` in the order ``retrieval_data.load_locomo`` numbers turns."""
    chat = sample["conversation"]
    numbers = sorted(int(m.group(1)) for key in chat if (m := re.fullmatch(r"session_(\d+)", key)))
    positions: dict[str, int] = {}
    count = 0
    for number in numbers:
        for turn in chat[f"session_{number}"]:
            positions[turn["dia_id"]] = count
            count += 1
    return positions


def _lme_positions(record: dict[str, Any]) -> dict[str, int]:
    """``{"<session>/<message>": turn index}`` in the order ``load_longmemeval`` numbers user turns."""
    positions: dict[str, int] = {}
    for s, messages in enumerate(record["haystack_sessions"]):
        for m, message in enumerate(messages):
            if message["role"] == "user" and message["content"].strip():
                positions[f"{s}/{m}"] = len(positions)
    return positions


def _run(*args: str, env: dict[str, str]) -> None:
    done = subprocess.run([COMMAND, *args], capture_output=True, text=True, env=env, check=False)
    # import: 1 nothing written (every item already present or refused), 4 done with
    # exceptions (some refused or cleaned, each reported: a LongMemEval turn holds U+0002).
    if done.returncode not in (0, 1, 4):
        raise RuntimeError(f"agent-memory {' '.join(args[:2])} failed: {done.stderr.strip()}")


@contextmanager
def _server(home: Path, env: dict[str, str]) -> Iterator[Callable[[str], list[dict[str, Any]]]]:
    """Serve ``home`` over stdio; yield ``ask(question) -> records`` through the MCP SDK's client."""
    from anyio.from_thread import start_blocking_portal
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=COMMAND, args=["serve", "--home", str(home)], env=env)
    with start_blocking_portal() as portal:
        client = Client(params)
        with portal.wrap_async_context_manager(client) as connected:

            def ask(question: str) -> list[dict[str, Any]]:
                arguments = {"query": question, "budget_tokens": BUDGET, "k": K}
                result = portal.call(connected.call_tool, "recall", arguments)
                if result.is_error or result.structured_content is None:
                    raise RuntimeError(f"recall failed: {result.content}")
                records: list[dict[str, Any]] = result.structured_content["records"]
                return records

            yield ask


def product(dataset: str) -> Callable[[History], list[Ranking]]:
    """Return a system that imports a history with the CLI and asks every question over MCP."""

    def run(history: History) -> list[Ranking]:
        if dataset == "locomo":
            raw = _locomo_sample(history.name)
            positions, fmt, file = _locomo_positions(raw), "locomo", "locomo.json"
        else:
            raw = _lme_record(history)
            positions, fmt, file = _lme_positions(raw), "longmemeval", "longmemeval_s.json"
        with tempfile.TemporaryDirectory(prefix="bench-product-") as folder:
            root = Path(folder)
            env = {**os.environ, "XDG_CONFIG_HOME": str(root / "config")}
            env.pop("AGENT_MEMORY_HOME", None)
            (root / file).write_text(json.dumps([raw]), encoding="utf-8")
            home = root / "home"
            _run("init", str(home), env=env)
            _run("import", "--from", fmt, str(root / file), "--home", str(home), env=env)
            out = []
            with _server(home, env) as ask:
                for question in history.questions:
                    ranking: Ranking = []
                    for record in ask(question.text):
                        anchor = str(record.get("source") or "").partition("#")[2]
                        key = (
                            anchor.rpartition("/")[2] if fmt == "locomo" else "/".join(anchor.split("/")[-2:])
                        )
                        if key in positions and positions[key] not in ranking:
                            ranking.append(positions[key])
                    out.append(ranking)
        return out

    return run
