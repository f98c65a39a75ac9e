"""Data, metrics and the embedding cache of the retrieval benchmark (``bench/retrieval.py``).

- **Loaders** turn the two datasets of ``../shared/datasets`` into what a user would hand a
  memory: turns with their speaker, text and session date, grouped by session in order.
  Labels (LoCoMo's evidence ids, LongMemEval's ``has_answer`` flags and session ids) are
  kept apart, in the question's gold sets, and only the scoring reads them.
- **Metrics** follow the datasets' READMEs: LoCoMo turn-level evidence recall@k (found ÷
  evidence ids, 1 when there are none); LongMemEval's ``recall_any``, ``recall_all`` and
  ``ndcg_any`` exactly as ``src/retrieval/eval_utils.py`` computes them (its DCG gives the
  first two ranks weight 1), and MRR.
- :class:`EmbeddingCache` keeps each distinct text's vector in one SQLite file keyed by the
  sha256 of the text and the embedder's name/version, so a run embeds each text once and a
  later run embeds nothing it has seen; :class:`CachedEmbedder` puts it in front of any
  :class:`~agent_memory.search.base.Embedder` with the same name, version and dimensions,
  so the indexes under test cannot tell the difference.

The datasets are read in place, never copied (CC BY-NC 4.0 and MIT; evaluation only).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agent_memory.records.fields import CONTROL_CHARACTERS
from agent_memory.search.base import Embedder

if TYPE_CHECKING:  # a type alias only type checkers see (search/base.py)
    from agent_memory.search.base import Vectors

DATASETS = Path(
    os.environ.get("AGENT_MEMORY_DATASETS") or Path(__file__).resolve().parents[2] / "shared" / "datasets"
)
"""``../shared/datasets`` beside the checkout, or the folder ``AGENT_MEMORY_DATASETS`` names (a worktree
elsewhere)."""
LOCOMO = DATASETS / "locomo" / "locomo.json"
LONGMEMEVAL = DATASETS / "longmemeval" / "longmemeval_s_cleaned_useronly.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn as a user would give it: who spoke, what was said, when (session date), where."""

    speaker: str
    text: str
    when: datetime
    session: int  # position of its session in the history, 0-based (grouping only, no id)

    @property
    def body(self) -> str:
        """The note text, as the importers write it: ``"<speaker>: <text>"``."""
        return f"{self.speaker}: {self.text}"


@dataclass(slots=True)
class Question:
    """A question over one history, with its gold sets (read only by the scoring)."""

    text: str
    when: datetime | None
    label: str  # LoCoMo category name, or LongMemEval question type
    gold_turns: set[int] = field(default_factory=set)  # indexes into the history's turns
    gold_sessions: set[int] = field(default_factory=set)
    missing_evidence: int = 0  # LoCoMo evidence ids that name no turn (never found)


@dataclass(slots=True)
class History:
    """One memory to build: its turns in order and the questions asked of it."""

    name: str
    turns: list[Turn]
    questions: list[Question]


# ---------------------------------------------------------------------- LoCoMo


def _locomo_date(text: str) -> datetime:
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(text.strip(), fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise ValueError(f"unreadable LoCoMo date {text!r}")


def plain(text: str) -> str:
    """Return ``text`` stripped, without the control characters ``remember`` refuses.

    Tab and line breaks stay. A few LongMemEval turns hold one (U+0002, U+0093); every system reads
    the same cleaned text.
    """
    return CONTROL_CHARACTERS.sub("", text).strip()


def load_locomo(path: Path = LOCOMO) -> list[History]:
    """Return one history per conversation; image turns get ``[shares <caption>]`` like the paper."""
    histories = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        chat = sample["conversation"]
        numbers = sorted(int(m.group(1)) for key in chat if (m := re.fullmatch(r"session_(\d+)", key)))
        turns: list[Turn] = []
        position: dict[str, int] = {}
        for session, number in enumerate(numbers):
            when = _locomo_date(chat[f"session_{number}_date_time"])
            for turn in chat[f"session_{number}"]:
                text = str(turn["text"]).strip()
                if turn.get("blip_caption"):
                    text += f" [shares {str(turn['blip_caption']).strip()}]"
                position[turn["dia_id"]] = len(turns)
                turns.append(Turn(str(turn["speaker"]).strip(), plain(text), when, session))
        questions = []
        for qa in sample["qa"]:
            # "D8:6; D9:17" packs two ids; ids naming no turn stay in the count and are never found.
            ids = {part for item in qa.get("evidence", []) for part in re.split(r"[;,\s]+", item) if part}
            gold = {position[i] for i in ids if i in position}
            category = int(qa["category"])
            questions.append(
                Question(
                    str(qa["question"]),
                    None,
                    CATEGORIES[category],
                    gold_turns=gold,
                    gold_sessions={turns[i].session for i in gold},
                    missing_evidence=len(ids) - len(gold),
                )
            )
        histories.append(History(sample["sample_id"], turns, questions))
    return histories


# ---------------------------------------------------------------------- LongMemEval


def _lme_date(text: str) -> datetime:
    return datetime.strptime(text, "%Y/%m/%d (%a) %H:%M").replace(tzinfo=UTC)


def load_longmemeval(path: Path = LONGMEMEVAL) -> tuple[list[History], int]:
    """Return one history per eligible question (its own haystack), and how many were skipped.

    Eligible as in the official retrieval evaluation: not an abstention question (``_abs``)
    and with at least one user turn marked ``has_answer``. Only non-empty user turns are
    items (the assistant text of this file is blank); gold sessions are the sessions that
    hold a gold user turn.
    """
    histories = []
    skipped = 0
    for record in json.loads(path.read_text(encoding="utf-8")):
        turns: list[Turn] = []
        gold: set[int] = set()
        sessions = zip(record["haystack_sessions"], record["haystack_dates"], strict=True)
        for session, (messages, date) in enumerate(sessions):
            when = _lme_date(date)
            for message in messages:
                if message["role"] != "user" or not message["content"].strip():
                    continue
                if message.get("has_answer"):
                    gold.add(len(turns))
                turns.append(Turn("User", plain(message["content"]), when, session))
        if record["question_id"].endswith("_abs") or not gold:
            skipped += 1
            continue
        question = Question(
            str(record["question"]),
            _lme_date(record["question_date"]),
            record["question_type"],
            gold_turns=gold,
            gold_sessions={turns[i].session for i in gold},
        )
        histories.append(History(record["question_id"], turns, [question]))
    return histories, skipped


def stratified(histories: list[History], count: int) -> list[History]:
    """Return ``count`` histories, every question type in proportion, deterministic (sorted ids)."""
    if count >= len(histories):
        return histories
    by_type: dict[str, list[History]] = {}
    for history in sorted(histories, key=lambda h: h.name):
        by_type.setdefault(history.questions[0].label, []).append(history)
    chosen: list[History] = []
    for group in by_type.values():
        take = max(1, round(count * len(group) / len(histories)))
        step = len(group) / take
        chosen += [group[int(i * step)] for i in range(take)]
    return sorted(chosen, key=lambda h: h.name)


TUNE_CONVERSATIONS = 4
"""LoCoMo conversations of the tuning part (the first four); the other three are held out."""
TUNE_QUESTIONS = 100
"""LongMemEval questions of the tuning part (:func:`stratified`, all types); the rest are held out."""
PARTS = ("all", "tune", "held-out")


def part_of(
    locomo: list[History], longmemeval: list[History], part: str
) -> tuple[list[History], list[History]]:
    """Return the histories of one part of the data: ``all``, ``tune`` or ``held-out``.

    Ideas are tuned on ``tune`` (LoCoMo conversations 1-4, 757 questions; 100 LongMemEval
    questions, every type in proportion) and reported on ``held-out`` (LoCoMo conversations
    5-7, 590 questions; the other 193 LongMemEval questions), which no choice looked at.

    Raises:
        ValueError: ``part`` is not one of :data:`PARTS`.
    """
    if part not in PARTS:
        raise ValueError(f"unknown part {part!r} (one of: {', '.join(PARTS)})")
    if part == "all":
        return locomo, longmemeval
    tune = {h.name for h in stratified(longmemeval, TUNE_QUESTIONS)}
    if part == "tune":
        return locomo[:TUNE_CONVERSATIONS], [h for h in longmemeval if h.name in tune]
    return locomo[TUNE_CONVERSATIONS:], [h for h in longmemeval if h.name not in tune]


# ---------------------------------------------------------------------- metrics


def sessions_of(ranked_turns: Sequence[int], turns: Sequence[Turn]) -> list[int]:
    """Return the distinct sessions of a turn ranking, in the order they first appear."""
    return list(dict.fromkeys(turns[i].session for i in ranked_turns))


def evidence_recall(ranked: Sequence[int], question: Question, k: int) -> float:
    """LoCoMo recall@k: gold turns in the top ``k`` ÷ evidence ids; 1 when there is no evidence."""
    total = len(question.gold_turns) + question.missing_evidence
    if total == 0:
        return 1.0
    return len(question.gold_turns.intersection(ranked[:k])) / total


def recall_any(ranked: Sequence[int], gold: set[int], k: int) -> float:
    """1.0 when any gold item is in the top ``k``."""
    return float(bool(gold.intersection(ranked[:k])))


def recall_all(ranked: Sequence[int], gold: set[int], k: int) -> float:
    """1.0 when every gold item is in the top ``k``."""
    return float(gold.issubset(ranked[:k]))


def _dcg(relevances: Sequence[float]) -> float:
    # eval_utils.dcg: r[0] + sum(r[1:] / log2(arange(2, n + 1)))
    return sum(r if i == 0 else r / math.log2(i + 1) for i, r in enumerate(relevances))


def ndcg_any(ranked: Sequence[int], gold: set[int], k: int) -> float:
    """Binary-relevance NDCG@k as LongMemEval's ``eval_utils.ndcg`` computes it."""
    ideal = _dcg([1.0] * min(k, len(gold)))
    return _dcg([1.0 if item in gold else 0.0 for item in ranked[:k]]) / ideal if ideal else 0.0


def reciprocal_rank(ranked: Sequence[int], gold: set[int]) -> float:
    """1 / rank of the first gold item (0 when none is ranked)."""
    return next((1.0 / (at + 1) for at, item in enumerate(ranked) if item in gold), 0.0)


# ---------------------------------------------------------------------- embedding cache


class EmbeddingCache:
    """Vectors by (sha256 of text, embedder key) in one SQLite file; a text is embedded once.

    Args:
        path: The cache file (created with its folder), or ``":memory:"``.
    """

    def __init__(self, path: Path | str) -> None:
        if isinstance(path, Path):
            path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(path))
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS vectors"
            " (key TEXT, digest TEXT, vector BLOB, PRIMARY KEY (key, digest))"
        )
        self.embedded = 0  # texts this process had to embed

    def vectors(self, embedder: Embedder, texts: Sequence[str]) -> Vectors:
        """Return the embedder's vectors of ``texts``, embedding (all at once) only those not cached."""
        key = f"{embedder.name}/{embedder.version}/{embedder.dimensions}"
        digests = [hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest() for t in texts]
        found: dict[str, Vectors] = {}
        unique = sorted(set(digests))
        for start in range(0, len(unique), 900):
            rows = self._conn.execute(
                "SELECT digest, vector FROM vectors WHERE key = ?"
                " AND digest IN (SELECT value FROM json_each(?))",
                (key, json.dumps(unique[start : start + 900])),
            )
            found.update((d, np.frombuffer(blob, dtype="<f4")) for d, blob in rows)
        missing = {d: t for d, t in zip(digests, texts, strict=True) if d not in found}
        if missing:
            fresh = np.asarray(embedder.embed(list(missing.values())), dtype=np.float32)
            self.embedded += len(missing)
            with self._conn:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                    [(key, d, v.astype("<f4").tobytes()) for d, v in zip(missing, fresh, strict=True)],
                )
            found.update(zip(missing, fresh, strict=True))
        out = np.zeros((len(texts), embedder.dimensions), dtype=np.float32)
        for row, digest in enumerate(digests):
            out[row] = found[digest]
        return out

    def close(self) -> None:
        """Close the file."""
        self._conn.close()


class CachedEmbedder:
    """An :class:`~agent_memory.search.base.Embedder` that asks an :class:`EmbeddingCache` first.

    A text's vector does not depend on its batch (the port's invariant), so the cached
    vector is the one the inner embedder would return; name, version and dimensions are the
    inner embedder's.
    """

    def __init__(self, inner: Embedder, cache: EmbeddingCache) -> None:
        self.inner = inner
        self.cache = cache

    @property
    def name(self) -> str:
        """The inner embedder's name."""
        return self.inner.name

    @property
    def version(self) -> str:
        """The inner embedder's version."""
        return self.inner.version

    @property
    def dimensions(self) -> int:
        """The inner embedder's vector length."""
        return self.inner.dimensions

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return the vectors of ``texts`` (cached ones read, the rest embedded and stored)."""
        return self.cache.vectors(self.inner, texts)

    def warm(self, texts: Sequence[str]) -> None:
        """Embed every text not cached yet in one call (sorted by length inside the embedder)."""
        self.cache.vectors(self.inner, list(dict.fromkeys(texts)))


def describe(value: Any) -> str:
    """Format a metric for a table: three decimals, or ``-`` when absent."""
    return "-" if value is None else f"{value:.3f}"
