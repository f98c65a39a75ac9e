"""Run memweave on a LoCoMo slice, inside memweave's own venv (bench/peers, issue 10 item 4).

Usage: ``python memweave_run.py SLICE.json WORK OUT.json`` to index and ask, or
``python memweave_run.py --cold WORK QUESTION`` to open conversation 0's workspace in a
fresh process and answer one question (cold start). Each conversation is a workspace of one
Markdown file per turn (``memory/D1_3.md`` for turn ``D1:3``), indexed by ``MemWeave.index``.
memweave embeds through LiteLLM (an embeddings API); offline, each call retries for about
ten seconds before it gives up, so the embedding provider given here is one that fails at
once, and memweave falls back to keyword search (its FTS5) as it does without an API.
Questions: ``MemWeave.search`` (default hybrid strategy, ``min_score`` 0), top 10.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import sys
import time
from pathlib import Path
from typing import Any

from memweave import MemoryConfig, MemWeave
from memweave.exceptions import EmbeddingError


class Offline:
    """An embedding provider with no endpoint: fails at once, as an unreachable API does after retries."""

    async def embed_query(self, text: str) -> list[float]:
        """Fail: there is no embeddings API offline."""
        raise EmbeddingError("no embeddings API offline")

    async def embed_batch(self, texts: list[str]) -> list[list[float]]:
        """Fail: there is no embeddings API offline."""
        raise EmbeddingError("no embeddings API offline")


def note_name(dia_id: str) -> str:
    """Return the file stem of a turn's note: ``D1:3`` becomes ``D1_3``."""
    return dia_id.replace(":", "_")


def store(workspace: Path) -> MemWeave:
    """Return a MemWeave over ``workspace`` with the offline provider."""
    return MemWeave(MemoryConfig(workspace_dir=str(workspace)), embedding_provider=Offline())


async def search(mem: MemWeave, question: str) -> list[str]:
    """Return the file stems of the top 10 chunks for ``question``."""
    results = await mem.search(question, max_results=10, min_score=0.0)
    return [Path(result.path).stem for result in results]


async def run(conversations: list[dict[str, Any]], work: Path) -> dict[str, Any]:
    """Index each conversation's workspace and ask its questions."""
    index_s, ranked, latency = 0.0, [], []
    for number, conversation in enumerate(conversations):
        workspace = work / f"conv{number}"
        (workspace / "memory").mkdir(parents=True, exist_ok=True)
        for dia_id, text in conversation["turns"]:
            (workspace / "memory" / f"{note_name(dia_id)}.md").write_text(text + "\n", encoding="utf-8")
        by_name = {note_name(dia_id): dia_id for dia_id, _ in conversation["turns"]}
        async with store(workspace) as mem:
            started = time.perf_counter()
            await mem.index()
            index_s += time.perf_counter() - started
            for question in conversation["questions"]:
                started = time.perf_counter()
                stems = await search(mem, question)
                latency.append((time.perf_counter() - started) * 1000)
                ranked.append([d for d in dict.fromkeys(by_name.get(s) for s in stems) if d][:10])
    return {
        "version": importlib.metadata.version("memweave"),
        "mode": "keyword fallback (FTS5; no embeddings API offline), MemWeave.search",
        "index_s": index_s,
        "ranked": ranked,
        "latency_ms": latency,
    }


async def cold(work: Path, question: str) -> None:
    """Open conversation 0's workspace and answer one question."""
    async with store(work / "conv0") as mem:
        print(len(await search(mem, question)))


def main() -> None:
    """Dispatch on the arguments (see the module docstring)."""
    if sys.argv[1] == "--cold":
        asyncio.run(cold(Path(sys.argv[2]), sys.argv[3]))
        return
    slice_path, work, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    conversations = json.loads(slice_path.read_text(encoding="utf-8"))["conversations"]
    result = asyncio.run(run(conversations, work))
    out.write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main()
