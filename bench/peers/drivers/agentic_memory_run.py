"""Run agentic-memory-ai on a LoCoMo slice, inside its own venv (bench/peers, issue 10 item 4).

Usage: ``python agentic_memory_run.py SLICE.json WORK OUT.json``. agentic-memory-ai has no
dependencies and runs offline with its built-in embedder (hashed TF-IDF vectors trained on
what it stores) and its multi-signal retrieval. Each conversation is its own ``AgentMemory``
(the default in-memory store), filled by ``store`` of every turn (the turn id in its
metadata); each question is a ``retrieve`` with ``limit`` 10. Writes ``{version, mode,
index_s, ranked, latency_ms}``.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import sys
import time
from pathlib import Path
from typing import Any

from agentic_memory import AgentMemory, RetrievalQuery


async def run(conversations: list[dict[str, Any]]) -> dict[str, Any]:
    """Fill one memory per conversation and ask its questions."""
    index_s, ranked, latency = 0.0, [], []
    for conversation in conversations:
        memory = AgentMemory()
        started = time.perf_counter()
        for dia_id, text in conversation["turns"]:
            await memory.store(text, metadata={"dia_id": dia_id})
        index_s += time.perf_counter() - started
        for question in conversation["questions"]:
            started = time.perf_counter()
            results = await memory.retrieve(RetrievalQuery(query=question, limit=10))
            latency.append((time.perf_counter() - started) * 1000)
            found = [result.entry.metadata.get("dia_id") for result in results]
            ranked.append([dia for dia in dict.fromkeys(found) if dia][:10])
    return {
        "version": importlib.metadata.version("agentic-memory-ai"),
        "mode": "built-in embedder, multi-signal retrieve",
        "index_s": index_s,
        "ranked": ranked,
        "latency_ms": latency,
    }


def main() -> None:
    """Index the slice, ask its questions, write the results."""
    slice_path, out = Path(sys.argv[1]), Path(sys.argv[3])
    conversations = json.loads(slice_path.read_text(encoding="utf-8"))["conversations"]
    out.write_text(json.dumps(asyncio.run(run(conversations))), encoding="utf-8")


if __name__ == "__main__":
    main()
