"""Note-read benchmark: reading one note version file into a ``MemoryRecord`` (the Home's read path).

Every recall on the file store reads its candidate notes (about 64 per recall at 100k
records), so the cost of one read is a large part of a recall. A read is: UTF-8 decode,
split at the fences, the frontmatter's fields, then ``MemoryRecord.from_wire`` (types,
invariants, the id recomputed from the birth content).

The frontmatter is read in one of two ways (``agent_memory.records.note``): the YAML reader
(libyaml's node graph walked with JSON's scalar types; ``_parse_yaml``, the only reader
before), and the written-line path (``_parse_written``), which takes a line only when it
is exactly what the writer makes of the value JSON reads from it, leaving anything else to
the YAML reader. The **baseline** is the same read with the YAML reader alone, measured in
the same run by pointing ``notes._parse_frontmatter`` at ``_parse_yaml``; the other
speed-ups of this change (the JSON-value check, timestamps) are in both columns, so the
ratio understates the whole gain (the report of the change gives the figure before it).

Notes come from ``bench/scale.py``'s generator (:func:`scale.make_records` over
:func:`corpus.scale_texts`; plain generated sentences when the datasets are absent). Rows:

- ``load_note``: bytes in memory to a record;
- ``frontmatter``: the frontmatter's fields alone;
- ``FileStore.get, cold``: a new ``FileStore`` (empty cache) reading every record from disk
  (the page cache is warm: this is the parse, not the disk).

Usage: ``python bench/note_reads.py [--quick] [--notes N] [--rounds N] [--no-write]``.
Prints the ``## Note reads`` section and writes it into ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
import scale
from report import machine, replace_section

from agent_memory.records import note as notes
from agent_memory.stores.files import FileStore

HEADING = "## Note reads"


def texts(count: int) -> list[tuple[str, str]]:
    """Return ``count`` ``(text, ref)`` pairs: the scale corpus, or generated sentences without it."""
    if corpus.available():
        return list(corpus.scale_texts(count))
    words = [
        "deploy",
        "runs",
        "on",
        "friday",
        "the",
        "staging",
        "cluster",
        "keeps",
        "logs",
        "for",
        "thirty",
        "days",
        "and",
        "alerts",
    ]
    return [
        (" ".join(words[(i + j) % len(words)] for j in range(12)) + f" #{i}", f"gen#{i}")
        for i in range(count)
    ]


@contextlib.contextmanager
def yaml_only() -> Iterator[None]:
    """Read frontmatter with the YAML reader alone (the baseline), for the duration."""
    fast = notes._parse_frontmatter
    notes._parse_frontmatter = notes._parse_yaml
    try:
        yield
    finally:
        notes._parse_frontmatter = fast


def best_per_item(action: Callable[[], object], items: int, rounds: int) -> float:
    """Return the best of ``rounds`` timings of ``action``, in microseconds per item."""
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best / items * 1e6


def measure(count: int, rounds: int) -> list[dict[str, Any]]:
    """Return one row per measured read: microseconds per note after and with the YAML reader alone."""
    records = scale.make_records(texts(count))
    data = [notes.dump_note(record) for record in records]
    frontmatters = [notes._split(item.decode("utf-8"))[0] for item in data]
    for item, record in zip(data, records, strict=True):  # both ways must give the same record
        with yaml_only():
            baseline = notes.load_note(item).canonical_bytes()
        if not notes.load_note(item).canonical_bytes() == baseline == record.canonical_bytes():
            raise SystemExit(f"the two readers disagree on {record.id}")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        store = FileStore(folder)
        for record in records:
            store.put(record)
        ids = [record.id for record in records]

        def store_reads() -> None:
            cold = FileStore(folder)
            for record_id in ids:
                cold.get(record_id)

        actions: list[tuple[str, Callable[[], object]]] = [
            ("load_note", lambda: [notes.load_note(item, path="n.md") for item in data]),
            ("frontmatter", lambda: [notes._parse_frontmatter(text) for text in frontmatters]),
            ("FileStore.get, cold", store_reads),
        ]
        for name, action in actions:
            after = best_per_item(action, count, rounds)
            with yaml_only():
                before = best_per_item(action, count, rounds)
            rows.append({"read": name, "after_us": after, "before_us": before})
    return rows


def section(rows: list[dict[str, Any]], count: int, rounds: int) -> str:
    """Return the ``## Note reads`` section for ``rows``."""
    lines = [
        HEADING,
        "",
        f"`python bench/note_reads.py --notes {count} --rounds {rounds}`: {count:,} notes from the scale",
        "generator; best of the rounds. Baseline: the same read with the frontmatter read by the YAML",
        "reader alone (the only reader before the written-line path), measured in the same run.",
        "",
        "| read | baseline µs/note | now µs/note | baseline notes/s | now notes/s | speed-up |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for row in rows:
        before, after = row["before_us"], row["after_us"]
        lines.append(
            f"| {row['read']} | {before:.1f} | {after:.1f} | {1e6 / before:,.0f} | {1e6 / after:,.0f}"
            f" | {before / after:.2f}× |"
        )
    lines += ["", f"Machine: {machine()}.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Measure note reads, print the section and (unless ``--no-write``) write it into the docs."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 notes, 3 rounds")
    parser.add_argument("--notes", type=int, default=2000, help="notes to read")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds; the best counts")
    parser.add_argument("--no-write", action="store_true", help="print only; leave the docs alone")
    args = parser.parse_args(argv)
    count, rounds = (500, 3) if args.quick else (args.notes, args.rounds)
    text = section(measure(count, rounds), count, rounds)
    print(text)
    if not args.no_write:
        replace_section(HEADING, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
