"""Secrets screen benchmark: the cost of screening a note before it is stored (issue 23).

Every door that stores a text screens it first (``governance/secrets.py``): the pre-screen
(``secret_patterns.may_hold_secret``, the detect-secrets plugins' own patterns, line by line)
and, for the rare line one of them matches, the library. On ``corpus.scale_texts`` notes
(the datasets' turns, then notes of two or three of their sentences), timed in the same run:

- **before** (the baseline): the pre-screen trying every pattern on every line, as before
  session 15;
- **after**: the library as it is: a pattern whose guard (``secret_patterns.GUARDS``, a
  literal every match of the pattern holds, with its flags) finds nothing in the line is not
  tried.

Figures, µs per note, the median of several rounds (the variants take turns): the pre-screen
alone and ``find_secrets`` (pre-screen, the library where a line asks for it, the project's
own patterns). Both variants must give the same answer on every line (checked, and counted).

Usage: ``python bench/screen.py [--notes N] [--rounds R] [--quick] [--no-write]``. Prints the
``## Secrets screen`` section and writes it into ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Callable, Sequence

import corpus
from report import machine, replace_section

from agent_memory.governance import secrets
from agent_memory.governance.secret_patterns import PATTERNS, may_hold_secret

HEADING = "## Secrets screen"


def every_pattern() -> Callable[[str], bool]:
    """Return the pre-screen before session 15: every plugin pattern tried on the line."""
    compiled = [re.compile(pattern, flags) for table in PATTERNS.values() for pattern, flags in table]
    return lambda line: any(pattern.search(line) for pattern in compiled)


def per_note(action: Callable[[], object], notes: int) -> float:
    """Return the µs per note one run of ``action`` over ``notes`` notes takes."""
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1e6 / notes


def measure(texts: Sequence[str], rounds: int) -> dict[str, float | int]:
    """Time both variants on ``texts``; return the medians and how many lines the pre-screens agreed on."""
    lines = [line for text in texts for line in text.splitlines(keepends=True)]
    before = every_pattern()
    answers = [may_hold_secret(line) for line in lines]
    agree = sum(before(line) == answer for line, answer in zip(lines, answers, strict=True))
    flagged = sum(answers)
    times: dict[str, list[float]] = {"pre_before": [], "pre_after": [], "find_before": [], "find_after": []}

    def find_all() -> None:
        for text in texts:
            secrets.find_secrets(text)

    for _ in range(rounds):
        times["pre_before"].append(per_note(lambda: [before(line) for line in lines], len(texts)))
        times["pre_after"].append(per_note(lambda: [may_hold_secret(line) for line in lines], len(texts)))
        secrets.may_hold_secret = before  # find_secrets with the old pre-screen
        try:
            times["find_before"].append(per_note(find_all, len(texts)))
        finally:
            secrets.may_hold_secret = may_hold_secret
        times["find_after"].append(per_note(find_all, len(texts)))
    out: dict[str, float | int] = {name: statistics.median(values) for name, values in times.items()}
    return out | {"notes": len(texts), "lines": len(lines), "agree": agree, "flagged": flagged}


def section(row: dict[str, float | int], rounds: int) -> str:
    """Render the ``## Secrets screen`` section."""
    pre = row["pre_before"] / row["pre_after"]
    find = row["find_before"] / row["find_after"]
    return "\n".join(
        [
            HEADING,
            "",
            "Written by `bench/screen.py` (the module docstring says what is run): every note is",
            "screened for secrets before it is stored; **before** is the pre-screen trying every",
            "detect-secrets pattern on every line, **after** the library as it is (a pattern whose",
            "guard, a literal each of its matches holds, is missing from the line is not tried).",
            f"µs per note, the median of {rounds} rounds, the variants taking turns.",
            "",
            f"Machine: {machine()}.",
            "",
            "| notes | lines | pre-screen before → after | find_secrets before → after | same answer |",
            "|--:|--:|--:|--:|--:|",
            f"| {row['notes']:,} | {row['lines']:,} | {row['pre_before']:.1f} → {row['pre_after']:.1f}"
            f" ({pre:.2f}×) | {row['find_before']:.1f} → {row['find_after']:.1f} ({find:.2f}×)"
            f" | {row['agree']:,} of {row['lines']:,} lines |",
            "",
            "- Before session 15 most of the pre-screen went to four keyword-and-value patterns (Cloudant,",
            "  IBM Cloud IAM, IBM COS, SoftLayer; a session script timing each pattern alone): their",
            "  leading alternations and look-behinds give sre no literal to search for, so it tries them",
            "  at every position of every line. One short case-folding search for `key|pw|pass|token`",
            "  now stands before them, as `AKC`, `AP` and `-us` stand before the Artifactory and",
            "  Mailchimp patterns.",
            f"- Lines any pattern matched here (the library is asked about them): {row['flagged']:,}.",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the section and write it unless ``--no-write``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--notes", type=int, default=20_000, help="notes screened per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each variant")
    parser.add_argument("--quick", action="store_true", help="2,000 notes, 2 rounds")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    notes, rounds = (2_000, 2) if args.quick else (args.notes, args.rounds)
    texts = [text for text, _ in corpus.scale_texts(notes)]
    row = measure(texts, rounds)
    text = section(row, rounds)
    print(text)
    if row["agree"] != row["lines"]:
        print("the two pre-screens disagreed on some lines")
        return 1
    if not args.no_write:
        replace_section(HEADING, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
