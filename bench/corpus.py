"""The benchmarks' shared corpus: real conversation turns and questions from ``../shared/datasets``.

Every benchmark that measures on realistic text reads it through this module, so the
datasets are found, loaded and walked in one way (issue 10 item 2). Sources, read in place
and never copied into the repository (both for evaluation only; see their READMEs):

- LoCoMo (``locomo/locomo.json``, CC BY-NC 4.0): turns ``{speaker, dia_id, text,
  blip_caption?}`` in ``session_<n>`` lists, questions with ``evidence`` dia ids and a
  ``category`` (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial);
- LongMemEval_S (``longmemeval/longmemeval_s_cleaned_useronly.json``, MIT): per question, a
  haystack of sessions of ``{role, content}`` turns.

The folder is ``$AGENT_MEMORY_DATASETS`` when set, else ``shared/datasets`` beside the
repository (``../shared/datasets`` from its root), else ``/work/shared/datasets``. Invariant:
every function returns the same texts in the same order on every run (seeded generators),
so a figure measured today and one measured tomorrow saw the same corpus.
"""

from __future__ import annotations

import functools
import json
import os
import random
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_CANDIDATES = [ROOT.parent / "shared" / "datasets", Path("/work/shared/datasets")]


def _datasets() -> Path:
    override = os.environ.get("AGENT_MEMORY_DATASETS")
    if override:
        return Path(override)
    return next((path for path in _CANDIDATES if path.is_dir()), _CANDIDATES[0])


DATASETS = _datasets()
LOCOMO = DATASETS / "locomo" / "locomo.json"
LONGMEMEVAL = DATASETS / "longmemeval" / "longmemeval_s_cleaned_useronly.json"
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def available() -> bool:
    """Return whether both dataset files are present."""
    return LOCOMO.is_file() and LONGMEMEVAL.is_file()


def missing() -> str:
    """Return the one-line reason a benchmark skips when :func:`available` is false."""
    absent = [str(path) for path in (LOCOMO, LONGMEMEVAL) if not path.is_file()]
    return (
        f"skipped: the datasets are absent ({', '.join(absent)}); put LoCoMo and LongMemEval_S under "
        f"{DATASETS} or set AGENT_MEMORY_DATASETS to their folder"
    )


@functools.cache
def locomo() -> list[dict[str, Any]]:
    """Return the LoCoMo conversations (parsed once per process).

    Raises:
        FileNotFoundError: The file is absent (check :func:`available` first).
    """
    data: list[dict[str, Any]] = json.loads(LOCOMO.read_text(encoding="utf-8"))
    return data


@functools.cache
def longmemeval() -> list[dict[str, Any]]:
    """Return the LongMemEval_S items (parsed once per process; about 280 MB of JSON).

    Raises:
        FileNotFoundError: The file is absent (check :func:`available` first).
    """
    data: list[dict[str, Any]] = json.loads(LONGMEMEVAL.read_text(encoding="utf-8"))
    return data


def locomo_turns(conversation: dict[str, Any], *, captions: bool = True) -> list[tuple[str, str]]:
    """Return ``(dia_id, "speaker: text")`` of every turn in session order.

    Args:
        conversation: One LoCoMo sample.
        captions: Append ``[shares <caption>]`` to image turns, as the LoCoMo paper does.
    """
    turns: list[tuple[str, str]] = []
    chat = conversation["conversation"]
    number = 1
    while f"session_{number}" in chat:
        for turn in chat[f"session_{number}"]:
            text = f"{turn['speaker']}: {turn['text']}"
            if captions and turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            turns.append((turn["dia_id"], text))
        number += 1
    return turns


def longmemeval_user_turns(item: dict[str, Any]) -> Iterator[tuple[str, int, str]]:
    """Yield ``(session_id, turn number from 1, content)`` of every non-blank user turn of one item."""
    for session_id, session in zip(item["haystack_session_ids"], item["haystack_sessions"], strict=True):
        for number, turn in enumerate(session, 1):
            if turn["role"] == "user" and turn["content"].strip():
                yield session_id, number, turn["content"]


def questions() -> list[str]:
    """Return the datasets' questions: LoCoMo's, then LongMemEval_S's."""
    found = [str(qa["question"]) for conversation in locomo() for qa in conversation["qa"]]
    return found + [str(item["question"]) for item in longmemeval()]


def add_tier_options(parser: Any, *, asked: str) -> None:
    """Add ``--sizes`` (records per Home), ``--questions`` (``asked`` per Home) and ``--quick``."""
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="records per Home")
    parser.add_argument("--questions", type=int, default=200, help=f"{asked} per Home [200]")
    parser.add_argument("--quick", action="store_true", help="1,000 records, 20 questions")


def tiers(args: Any) -> tuple[list[int], list[str]]:
    """Return the Home sizes and the questions that options of :func:`add_tier_options` ask for."""
    sizes, count = ([1_000], 20) if args.quick else (list(args.sizes), args.questions)
    return sizes, questions()[:count]


def evidence_ids(qa: dict[str, Any]) -> set[str]:
    """Return a LoCoMo question's evidence dia ids, split where several share one string."""
    return {part for item in qa.get("evidence", []) for part in re.split(r"[;,\s]+", str(item)) if part}


def distinct_texts(*, captions: bool = True, strip: bool = False) -> dict[str, str]:
    """Return distinct whole turns as ``{text: source ref}``: LoCoMo turns, then LongMemEval_S user turns.

    Args:
        captions: Image captions on LoCoMo turns (see :func:`locomo_turns`).
        strip: Strip LongMemEval contents of surrounding white space.

    Refs are ``locomo/<sample_id>#<dia_id>`` and ``longmemeval/<session_id>_<n>``; the first
    occurrence of a text keeps its ref.
    """
    texts: dict[str, str] = {}
    for conversation in locomo():
        for dia_id, text in locomo_turns(conversation, captions=captions):
            texts.setdefault(text, f"locomo/{conversation['sample_id']}#{dia_id}")
    for item in longmemeval():
        for session_id, number, content in longmemeval_user_turns(item):
            texts.setdefault(content.strip() if strip else content, f"longmemeval/{session_id}_{number}")
    return texts


def add_lines(texts: dict[str, str], *, strip: bool = False) -> None:
    """Add every line but the first of each text (at least 20 characters) as a text of its own.

    Refs are the turn's ref plus ``/line<n>``; texts already present are left alone.
    """
    for text, ref in list(texts.items()):
        for number, line in enumerate(text.splitlines()[1:], 2):
            if len(line.strip()) >= 20:
                texts.setdefault(line.strip() if strip else line, f"{ref}/line{number}")


def scale_texts(count: int, *, seed: int = 13) -> Iterator[tuple[str, str]]:
    """Yield ``count`` distinct ``(text, ref)`` pairs of realistic notes, for Homes of any size.

    First the distinct whole turns and their lines (see :func:`distinct_texts` and
    :func:`add_lines`, cut to 600 characters, so a note is a note and not a pasted
    document), then notes of two or three sentences drawn at random from those turns, each
    with a ref naming its sentences. Sentences are reused, never invented, so word
    frequencies stay those of real conversations at 1M notes.

    Args:
        count: How many notes.
        seed: The generator's seed (the same seed gives the same notes).
    """
    texts = distinct_texts(captions=False, strip=True)
    add_lines(texts, strip=True)
    seen: set[str] = set()
    made = 0
    for text, ref in texts.items():
        if made == count:
            return
        note = text[:600].strip()
        if note and note not in seen:
            seen.add(note)
            made += 1
            yield note, ref
    sentences = sorted(
        {s.strip() for text in texts for s in _SENTENCE.split(text[:2000]) if 20 <= len(s.strip()) <= 300}
    )
    rng = random.Random(seed)  # noqa: S311 - a reproducible corpus, not a secret
    while made < count:
        picks = rng.sample(range(len(sentences)), rng.choice((2, 2, 3)))
        note = " ".join(sentences[i] for i in picks)
        if note in seen:
            continue
        seen.add(note)
        made += 1
        yield note, "mix/" + "+".join(str(i) for i in picks)


def signed(records: list[Any], keys: Any) -> list[Any]:
    """Sign every record with ``keys`` in place, as the Home that stores them does, and return the list.

    A Home's verified read path refuses an unsigned version ("its signature was removed"), so
    a benchmark that writes notes straight to ``notes/`` (as a copy or a git pull would) signs
    them with the Home's key first, or every recall would be measured on unreadable notes.
    """
    from agent_memory.records.signing import sign_record

    records[:] = [sign_record(record, keys) for record in records]
    return records


def write_notes(notes: Path, records: Iterable[Any], keys: Any = None) -> None:
    """Write each record as ``notes/<id hex>/000001.md``, as a copy or a git pull of a Home leaves it.

    No fsync per file. With ``keys`` each record is signed first (see :func:`signed`); without,
    the records must be signed already.
    """
    from agent_memory.records.note import dump_note
    from agent_memory.records.signing import sign_record

    for record in records:
        folder = notes / record.id.removeprefix("mem:")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "000001.md").write_bytes(dump_note(record if keys is None else sign_record(record, keys)))
