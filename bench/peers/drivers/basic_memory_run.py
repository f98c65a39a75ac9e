"""Run basic-memory on a LoCoMo slice, inside basic-memory's own venv (bench/peers, issue 10 item 4).

Usage: ``python basic_memory_run.py SLICE.json WORK OUT.json``. Each conversation becomes a
basic-memory project of one Markdown note per turn (file ``D1_3.md`` for turn ``D1:3``),
added and indexed through its CLI (``project add``, ``reindex``: the way a user indexes
notes written outside it). Questions go through its MCP tool function ``search_notes``
(keyword mode: its semantic search needs SQLite extension loading and a fastembed model from
a hub, neither available here), in one process, top 10. Writes ``{version, mode, index_s,
ranked, latency_ms}``. Runs with the peer's Python only: standard library and basic-memory.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ENV = {"BASIC_MEMORY_AUTO_UPDATE": "false", "BASIC_MEMORY_DEFAULT_SEARCH_TYPE": "text"}


def note_name(dia_id: str) -> str:
    """Return the file stem of a turn's note: ``D1:3`` becomes ``D1_3``."""
    return dia_id.replace(":", "_")


def index(conversations: list[dict[str, Any]], work: Path) -> float:
    """Write every turn as a note and index each conversation as a project; return the seconds."""
    command = str(Path(sys.executable).parent / "basic-memory")
    seconds = 0.0
    for number, conversation in enumerate(conversations):
        folder = work / f"conv{number}"
        folder.mkdir(parents=True, exist_ok=True)
        for dia_id, text in conversation["turns"]:
            name = note_name(dia_id)
            (folder / f"{name}.md").write_text(f"---\ntitle: {name}\n---\n{text}\n", encoding="utf-8")
        started = time.perf_counter()
        for args in (
            ["project", "add", f"conv{number}", str(folder)],
            ["reindex", "--project", f"conv{number}"],
        ):
            done = subprocess.run([command, *args], capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise SystemExit(f"basic-memory {' '.join(args)} failed: {done.stderr.strip()[-300:]}")
        seconds += time.perf_counter() - started
    return seconds


async def ask(conversations: list[dict[str, Any]]) -> tuple[list[list[str]], list[float]]:
    """Ask every question of each conversation in its project; return the ranked turn ids and ms."""
    from basic_memory.mcp.tools import search_notes

    ranked, latency = [], []
    for number, conversation in enumerate(conversations):
        by_name = {note_name(dia_id): dia_id for dia_id, _ in conversation["turns"]}
        for question in conversation["questions"]:
            started = time.perf_counter()
            result = await search_notes(
                query=question,
                project=f"conv{number}",
                output_format="json",
                page_size=10,
                search_type="text",
            )
            latency.append((time.perf_counter() - started) * 1000)
            hits = result.get("results", []) if isinstance(result, dict) else []
            found = [by_name.get(Path(str(hit.get("file_path", ""))).stem) for hit in hits]
            ranked.append([dia for dia in dict.fromkeys(found) if dia][:10])
    return ranked, latency


def main() -> None:
    """Index the slice, ask its questions, write the results."""
    slice_path, work, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    conversations = json.loads(slice_path.read_text(encoding="utf-8"))["conversations"]
    os.environ.update(ENV)
    index_s = index(conversations, work)
    ranked, latency = asyncio.run(ask(conversations))
    result = {
        "version": importlib.metadata.version("basic-memory"),
        "mode": "keyword (SQLite FTS5), search_notes",
        "index_s": index_s,
        "ranked": ranked,
        "latency_ms": latency,
    }
    out.write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main()
