"""Run agent-memory on a LoCoMo slice, the way the peers are run (bench/peers, issue 10 item 4).

Usage: ``python agent_memory_run.py SLICE.json WORK OUT.json``, with the project's Python.
Each conversation is a Home (``agent-memory init`` defaults: the hybrid recipe, BM25 and
all-MiniLM-L6-v2 vectors when the embeddings extra is installed, else BM25 alone) filled by
``Memory.remember`` of every turn; each question is a ``Memory.recall`` (k = 10, budget
4,000 tokens, not counted as a use), in one process. Writes ``{version, mode, index_s,
ranked, latency_ms}``; the Homes stay in WORK for the cold-start and MCP runs.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from agent_memory.home import Home
from agent_memory.memory import Memory


def run(conversations: list[dict[str, Any]], work: Path) -> dict[str, Any]:
    """Fill a Home per conversation and ask its questions; return the results."""
    index_s, ranked, latency = 0.0, [], []
    recipes: list[str] = []
    for number, conversation in enumerate(conversations):
        root = work / f"conv{number}"
        Home.init(root, git=False)
        started = time.perf_counter()
        dia_of: dict[str, str] = {}
        with Memory.open(root) as memory:
            for dia_id, text in conversation["turns"]:
                result = memory.remember(text, source=f"locomo/{conversation['id']}#{dia_id}", type="episode")
                dia_of.setdefault(result.record_id, dia_id)
            memory.catalog.refresh()
            index_s += time.perf_counter() - started
            recipes = list(memory.catalog.active)
            for question in conversation["questions"]:
                started = time.perf_counter()
                answer = memory.recall(question, k=10, budget_tokens=4000, touch=False)
                latency.append((time.perf_counter() - started) * 1000)
                ranked.append([dia_of[r.record.id] for r in answer.records if r.record.id in dia_of][:10])
    return {
        "version": importlib.metadata.version("agent-memory"),
        "mode": f"Memory.recall, recipes {', '.join(recipes)}",
        "index_s": index_s,
        "ranked": ranked,
        "latency_ms": latency,
    }


def main() -> None:
    """Index the slice, ask its questions, write the results."""
    slice_path, work, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    os.environ.setdefault("XDG_CONFIG_HOME", str(work / "config"))
    conversations = json.loads(slice_path.read_text(encoding="utf-8"))["conversations"]
    out.write_text(json.dumps(run(conversations, work)), encoding="utf-8")


if __name__ == "__main__":
    main()
