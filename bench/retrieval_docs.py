"""The ``## Retrieval quality`` section of ``docs/benchmarks.md``, from the results of ``bench/retrieval.py``.

Tables: one row per system and one column per metric, the published bars beside them
(labelled as published, never run here), the variants tried, and where the aims stand.
"""

from __future__ import annotations

from typing import Any

from retrieval_data import describe

LOCOMO_COLUMNS = ("R@5", "R@10", "R@25", "R@50")
LME_COLUMNS = (
    "recall_all@5",
    "recall_all@10",
    "ndcg@10",
    "recall_any@1",
    "mrr",
    "turn recall_all@10",
    "turn recall_all@50",
)
LME_TYPES = (
    "single-session-user",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)
DEFAULT = "hybrid (default recipe)"

PUBLISHED_LOCOMO = [
    ["LoCoMo paper, Table 3: dense retriever over turns (published)", "0.567", "0.662", "0.767", "0.827"],
    ["plain BM25 over the same turns (published: about 8-10 points below the dense one)", "", "", "", ""],
    ["aim, issue 4", "", "≥ 0.70", "", ""],
    ["aim, issue 10", "", "≥ 0.78", "≥ 0.88", ""],
]
PUBLISHED_LME = [
    ["plain BM25, session level (published)", "≈ 0.84", "", "≈ 0.88", "", "", "", ""],
    ["best public claims (published)", "", "", "≈ 0.94", "", "", "", ""],
    ["aim, issue 4", "≥ 0.90", "", "", "", "", "", ""],
    ["aim, issue 10", "≥ 0.95", "", "≥ 0.96", "", "", "", ""],
]

# Written after reading the variant tables; each claim names the rows that carry it.
DECISIONS: list[str] = []


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|---|" + "--:|" * (len(header) - 1)]
    return "\n".join([*lines, *("| " + " | ".join(row) + " |" for row in rows)])


def _rows(results: dict[str, Any], columns: tuple[str, ...], names: list[str]) -> list[list[str]]:
    return [[name, *(describe(results[name].mean(c)) for c in columns)] for name in names]


def _locomo(results: dict[str, Any], context: dict[str, Any]) -> list[str]:
    main = [n for n, r in results.items() if not r.variant]
    categories = list(context["categories"].values())
    rows = [
        [
            *row,
            " / ".join(describe(results[row[0]].mean("R@10", c)) for c in categories),
            f"{results[row[0]].seconds:.0f}",
        ]
        for row in _rows(results, LOCOMO_COLUMNS, main)
    ]
    published = [[*row, "", ""] for row in PUBLISHED_LOCOMO]
    header = ["system", *LOCOMO_COLUMNS, "R@10 by category: " + " / ".join(categories), "seconds"]
    return [_table(header, rows + published)]


def _longmemeval(results: dict[str, Any]) -> list[str]:
    main = [n for n, r in results.items() if not r.variant]
    rows = [[*row, f"{results[row[0]].seconds:.0f}"] for row in _rows(results, LME_COLUMNS, main)]
    published = [[*row, ""] for row in PUBLISHED_LME]
    by_type = [[name, *(describe(results[name].mean("recall_all@5", t)) for t in LME_TYPES)] for name in main]
    return [
        _table(["system", *LME_COLUMNS, "seconds"], rows + published),
        "",
        "Session recall_all@5 by question type:",
        "",
        _table(["system", *LME_TYPES], by_type),
    ]


def _variants(results: dict[str, dict[str, Any]]) -> list[str]:
    locomo, lme = results.get("locomo", {}), results.get("longmemeval", {})
    names = [n for n, r in locomo.items() if r.variant] or [n for n, r in lme.items() if r.variant]
    base = [
        n for n in ("bm25 (FtsIndex)", "vectors-minilm (MiniLM int8, cosine ≥ 0.3)", DEFAULT) if n in locomo
    ]
    rows = []
    for name in base + names:
        got = [locomo[name].mean(m) if name in locomo else None for m in ("R@5", "R@10", "R@25", "R@50")] + [
            lme[name].mean(m) if name in lme else None
            for m in ("recall_all@5", "ndcg@10", "turn recall_all@10")
        ]
        rows.append([name if name not in base else f"**{name}**", *(describe(g) for g in got)])
    header = [
        "variant (one change against the default)",
        "LoCoMo R@5",
        "R@10",
        "R@25",
        "R@50",
        "LongMemEval recall_all@5",
        "NDCG@10",
        "turn recall_all@10",
    ]
    return [_table(header, rows)]


def _aims(results: dict[str, dict[str, Any]]) -> list[str]:
    locomo, lme = results.get("locomo", {}), results.get("longmemeval", {})
    lines = []
    for dataset, metric, aim, where in (
        (locomo, "R@10", 0.70, "issue 4"),
        (locomo, "R@10", 0.78, "issue 10"),
        (locomo, "R@25", 0.88, "issue 10"),
        (lme, "recall_all@5", 0.90, "issue 4"),
        (lme, "recall_all@5", 0.95, "issue 10"),
        (lme, "ndcg@10", 0.96, "issue 10"),
    ):
        if DEFAULT not in dataset:
            continue
        got = dataset[DEFAULT].mean(metric)
        name = "LoCoMo" if dataset is locomo else "LongMemEval_S"
        verdict = "met" if got >= aim else f"missed by {aim - got:.3f}"
        lines.append(f"- {name} {metric} ≥ {aim:.2f} ({where}): default hybrid {got:.3f}, {verdict}.")
    return lines


def section(heading: str, results: dict[str, dict[str, Any]], context: dict[str, Any]) -> str:
    """Return the whole section: how it was measured, the tables, the aims and the decisions."""
    return "\n".join(
        [
            heading,
            "",
            "Written by `bench/retrieval.py` (`--quick` for a short check that writes nothing). Every",
            "system sees what a user would give a memory: each turn as a note `<speaker>: <text>` dated",
            "by its session, and the question; no session id, label or evidence flag reaches an index.",
            "Each LoCoMo conversation and each LongMemEval question's haystack is its own memory.",
            "`Memory.recall` writes every turn with `remember` and asks `recall` (default recipe,",
            "unlimited budget, k = 100, at the question's date; LoCoMo has none: a day after the last",
            "session), so its ranking includes recall's recency, state and confidence factors. bm25s",
            "(numpy backend, English stopwords, no stemmer) runs on the same text in the same run.",
            "Rows marked published are figures from the papers and issues, not run here.",
            "",
            f"Machine: {context['machine']}. Whole run {context['seconds'] / 60:.1f} min; texts embedded",
            f"in this run (the rest read from the embedding cache): {context['embedded']:,}.",
            "",
            f"### LoCoMo: turn-level evidence recall ({context['locomo_conversations']} conversations,"
            f" {context['locomo_questions']:,} questions)",
            "",
            "R@k per question = evidence turns in the top k ÷ evidence ids (ids naming no turn count as",
            "missed; no evidence counts 1), averaged (the paper's definition, README).",
            "",
            *_locomo(results.get("locomo", {}), context),
            "",
            f"### LongMemEval_S: {context['lme_questions']} questions",
            "",
            f"Of the {context['lme_eligible'] + context['lme_skipped']} questions in the file,"
            f" {context['lme_eligible']} are eligible for the official retrieval evaluation"
            f" ({context['lme_skipped']} abstention or assistant-only ones skipped). Session level from a"
            " turn ranking: its distinct sessions in order. recall_all@k: every gold session in the top"
            " k; NDCG@10 as `eval_utils.ndcg`; recall_any@1; MRR over sessions; turn level: every gold"
            " user turn in the top k.",
            "",
            *_longmemeval(results.get("longmemeval", {})),
            "",
            "### Variants tried",
            "",
            "Each row changes one thing against the default recipe (bold rows) and runs on the same",
            "questions as the tables above.",
            "",
            *_variants(results),
            "",
            "### Aims",
            "",
            *_aims(results),
            "",
            *(["### Decisions", "", *DECISIONS, ""] if DECISIONS else []),
        ]
    )
