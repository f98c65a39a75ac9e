"""The systems and variants of the retrieval benchmark (``bench/retrieval.py``).

The main rows are built from the built-in recipes (:data:`BUILTIN_RECIPES`), so a change to
a default recipe shows up here without editing the benchmark. Every variant changes one
thing against the default and says what in its name:

- **document**: the text indexed for a turn. ``window ±n`` adds the ``n`` turns before and
  after it in the same session (the turn itself stays the unit that is ranked and scored);
  ``+ date`` adds the session date in words.
- **fusion**: RRF constant and weights, or normalised-score fusion.
- **query**: the same FTS index asked with a changed question (pseudo-relevance feedback
  fused with the original ranking).
- **threads**: the hybrid's thread boost (:func:`agent_memory.search.hybrid.boost_threads`)
  after fusion, with each turn's thread read from its note as :mod:`agent_memory.search.threads`
  reads it (one thread per session); the vector part's thread means (``VectorIndex``
  ``thread_weight``, the default since session 4) and its floor; the date boost
  (:mod:`agent_memory.search.dates`) with the question's date as ``now``; and, bench only,
  vectors mixed with their ±1 neighbours (``MixedVectors``).

- **session 5** (issue 21 item 3): the hybrid's coverage look (``hybrid.COVERAGE``, the default
  since session 5) and the ideas measured beside it (:mod:`retrieval_ideas`): a thread scored
  by its two best turns, the notes of the question's date window added as candidates,
  sub-questions per name, the vectors asked the content words only, and (LoCoMo only: the
  70,000 LongMemEval windows would double the embedding cache) vectors of ±1-turn windows.

The bench-only indexes live in :mod:`retrieval_parts` and :mod:`retrieval_ideas`; the thread boost reads
``FtsIndex.threads``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from retrieval_data import History
from retrieval_ideas import ContentWords, SubQueries, SubQueriesFts
from retrieval_parts import (
    FTS_CLASS,
    MixedVectors,
    PrfFts,
    SessionDocs,
    SmoothedVectors,
    WeightedContext,
)

from agent_memory.search import fts
from agent_memory.search.base import Embedder, Hit, SearchIndex
from agent_memory.search.dates import DATE_WEIGHT
from agent_memory.search.fts import FtsIndex
from agent_memory.search.holdings import fuse as fuse_recipe
from agent_memory.search.hybrid import COVERAGE, THREAD_WEIGHT, HybridIndex, fuse
from agent_memory.search.recipes import BUILTIN_RECIPES, RecipeSpec
from agent_memory.search.threads import place_of
from agent_memory.search.vectors import VectorIndex, scoring_options

Ranker = Callable[[History], list[list[int]]]
Scales = Sequence[Mapping[str, float] | None] | None
"""Per part, the coverage look's factors by record id (``hybrid.fuse`` ``scales``)."""
"""A system of its own: builds over a history and returns a ranking per question."""


@dataclass(frozen=True)
class Part:
    """One index to build per history: how to make it and what text it holds for each turn."""

    name: str
    make: Callable[[], SearchIndex]
    document: Callable[[History, int], str]


@dataclass(frozen=True)
class System:
    """A row of a table: how its ranking is made from the parts' rankings (or by itself)."""

    name: str
    parts: tuple[str, ...] = ()
    combine: Callable[..., list[Hit]] | None = None  # (rankings[, scales]) -> fused hits
    own: Ranker | None = None  # bm25s, porcelain: a ranking per question
    sessions: bool = False  # its ranking holds sessions, not turns
    note: str = ""
    thread_weight: float = 0.0  # thread boost after ``combine`` (hybrid.boost_threads)
    date_weight: float = 0.0  # date boost last (dates.boost_dates), the question's date as now
    date_add: int = 0  # bench-only: the notes of a window of at most this many are added as candidates
    thread_second: float = 0.0  # bench-only: the thread boost also adds this share of the second best
    coverage: float = 0.0  # the coverage look's exponent (hybrid.COVERAGE), read from the BM25 part


def body(history: History, index: int) -> str:
    """The note text of a turn (the default document)."""
    return history.turns[index].body


def rrf(
    weights: Sequence[float] = (1.0, 1.0), k_rrf: int = 60, depth: int | None = None
) -> Callable[..., list[Hit]]:
    """Return a combiner: reciprocal rank fusion with these weights and constant (hybrid.fuse).

    With ``depth``, only each part's first ``depth`` hits are fused; the rest of the
    ranking follows, fused over every hit.
    """

    def combine(rankings: list[list[Hit]], scales: Scales = None) -> list[Hit]:
        full = fuse(rankings, weights, method="rrf", k_rrf=k_rrf, scales=scales)
        if depth is None:
            return full
        head = fuse([r[:depth] for r in rankings], weights, method="rrf", k_rrf=k_rrf, scales=scales)
        held = {h.record_id for h in head}
        return head + [h for h in full if h.record_id not in held]

    return combine


def weighted(
    weights: Sequence[float], normalise: Any = "max", depth: int | None = None
) -> Callable[..., list[Hit]]:
    """Return a combiner: normalised-score fusion (hybrid.fuse ``weighted``); ``depth`` as for :func:`rrf`."""

    def combine(rankings: list[list[Hit]], scales: Scales = None) -> list[Hit]:
        full = fuse(rankings, weights, method="weighted", normalise=normalise, scales=scales)
        if depth is None:
            return full
        head = fuse(
            [r[:depth] for r in rankings], weights, method="weighted", normalise=normalise, scales=scales
        )
        held = {h.record_id for h in head}
        return head + [h for h in full if h.record_id not in held]

    return combine


def thread_keys(history: History) -> dict[str, str]:
    """Return ``{turn index as text: thread key}`` for the history's notes, as place_of reads them."""
    from retrieval import records_for

    records, where = records_for(history, body)
    out = {}
    for record in records:
        place = place_of(record)
        if place is not None:
            out[str(where[record.id])] = place[0]
    return out


def from_recipe(spec: RecipeSpec, embedder: Embedder, *, threads: bool = True) -> SearchIndex:
    """Open an in-memory index of a built-in recipe, its MiniLM vectors read through ``embedder``.

    ``threads=False`` opens a hybrid without the thread boost (``thread_weight`` 0; its date
    boost stays). ``FtsIndex`` names threads itself since session 3, so the boost is turned
    off in the hybrid rather than by a BM25 class without the lookup.
    """
    if spec.kind == "hybrid":
        fused = fuse_recipe(spec, [from_recipe(part, embedder) for part in spec.parts])
        if threads or not isinstance(fused, HybridIndex):
            return fused
        options = spec.options
        return HybridIndex(
            fused.parts,
            method=options["fusion"],
            k_rrf=options.get("k_rrf", 60),
            weights=options["weights"],
            normalise=options.get("normalise", "max"),
            name=spec.name,
            thread_weight=0.0,
        )
    if spec.kind == "bm25":
        return FTS_CLASS(
            ":memory:", name=spec.name, mode=spec.options["mode"], context=spec.options["context"]
        )
    return VectorIndex(":memory:", embedder, name=spec.name, **scoring_options(spec.options))


def window(before: int, after: int) -> Callable[[History, int], str]:
    """Return a document maker: the turn, with up to ``before``/``after`` neighbours of its session."""

    def document(history: History, index: int) -> str:
        turns = history.turns
        session = turns[index].session
        lo, hi = index, index
        while lo > 0 and index - lo < before and turns[lo - 1].session == session:
            lo -= 1
        while hi + 1 < len(turns) and hi - index < after and turns[hi + 1].session == session:
            hi += 1
        return "\n".join(turns[j].body for j in range(lo, hi + 1))

    return document


def dated(history: History, index: int) -> str:
    """The note text with its session date in words (``8 May 2023``)."""
    turn = history.turns[index]
    return f"{turn.body}\n({turn.when.day} {turn.when:%B %Y})"


def parts(embedder: Embedder) -> dict[str, Part]:
    """Every index the systems read, by name."""
    bm25, vec = BUILTIN_RECIPES["bm25"], BUILTIN_RECIPES["vectors-minilm"]
    context = bm25.options["context"]
    out = {
        "fts": Part("fts", lambda: from_recipe(bm25, embedder), body),
        "vec": Part("vec", lambda: from_recipe(vec, embedder), body),
        "vec0": Part("vec0", lambda: VectorIndex(":memory:", embedder), body),
        "fts-or": Part("fts-or", lambda: FtsIndex(":memory:", mode="or", context=context), body),
        "fts-date": Part("fts-date", lambda: from_recipe(bm25, embedder), dated),
    }
    for weight in (0.3, 0.5, 0.7, 1.0):
        tag = f"fts-cw{int(weight * 10)}"
        out[tag] = Part(tag, lambda w=weight: WeightedContext(w, context), body)  # type: ignore[misc]
    for reach in (0, 1, 3):
        out[f"fts-c{reach}"] = Part(f"fts-c{reach}", lambda r=reach: FtsIndex(":memory:", context=r), body)  # type: ignore[misc]
    out["sessions"] = Part("sessions", SessionDocs, body)  # type: ignore[arg-type]
    out["prf"] = Part("prf", lambda: PrfFts(5, 10, 0.4), body)  # type: ignore[arg-type,return-value]
    for reach, weight in ((1, 0.5), (1, 1.0), (2, 0.5)):
        tag = f"vsm{reach}{int(weight * 10)}"
        out[tag] = Part(tag, lambda r=reach, w=weight: SmoothedVectors(embedder, r, w), body)  # type: ignore[arg-type,misc]
    mixes = {
        "vmix-s5-g": {"smooth": 0.5, "gate": True},
        "vmix-s5-c5-g": {"smooth": 0.5, "centroid": 0.5, "gate": True},
    }
    for tag, options in mixes.items():
        out[tag] = Part(tag, lambda o=options: MixedVectors(embedder, **o), body)  # type: ignore[arg-type,misc]
    for tag, options in {
        "vec-t5": {"thread_weight": 0.5},
        "vec-t5-best": {"thread_weight": 0.5, "floor": "best"},
        "vec-t5-f2": {"thread_weight": 0.5, "min_similarity": 0.2},
        "vec-t8-f2": {"thread_weight": 0.8, "min_similarity": 0.2},
        "vec-t5-f0": {"thread_weight": 0.5, "min_similarity": 0.0},
        "vec-s3": {},
    }.items():
        made = {"min_similarity": 0.3, **options}
        out[tag] = Part(tag, lambda o=made: VectorIndex(":memory:", embedder, **o), body)  # type: ignore[misc,arg-type]
    out["fts-sub"] = Part("fts-sub", lambda: SubQueriesFts(from_recipe(bm25, embedder), 0.5), body)  # type: ignore[arg-type]
    out["vec-sub"] = Part("vec-sub", lambda: SubQueries(from_recipe(vec, embedder), 0.5), body)  # type: ignore[arg-type]
    out["vec-content"] = Part("vec-content", lambda: ContentWords(from_recipe(vec, embedder)), body)  # type: ignore[arg-type]
    for before, after in ((1, 0), (1, 1), (2, 2)):
        tag = f"w{before}{after}"
        out[f"fts-{tag}"] = Part(f"fts-{tag}", lambda: FtsIndex(":memory:", context=0), window(before, after))
        out[f"vec-{tag}"] = Part(f"vec-{tag}", lambda: from_recipe(vec, embedder), window(before, after))
    return out


def _default_combiner() -> Callable[..., list[Hit]]:
    options: dict[str, Any] = dict(BUILTIN_RECIPES["hybrid"].options)
    if options["fusion"] == "rrf":
        return rrf(options["weights"], options["k_rrf"])
    return weighted(options["weights"], options["normalise"])


REFERENCE = (
    "bm25 (FtsIndex)",
    "vectors-minilm (MiniLM int8, + 0.5 × thread mean, floor 0.2)",
    "hybrid (default recipe)",
    "Memory.recall (default recipe)",
)
"""Main rows also run beside the variants, on the same questions, as the reference."""
SPLIT = "variant-split"
"""The note of session 5's rows: they run with the main rows, on every question, so their figures can
be split into the tuning and the held-out part (``retrieval_data.part_of``)."""


def systems(
    dataset: str,
    embedder: Embedder,
    porcelain: Callable[..., Ranker],
    bm25s_turns: Ranker,
    bm25s_sessions: Ranker,
) -> list[System]:
    """The rows of one dataset's tables: main systems first, then the variants (``note="variant"``)."""
    hybrid = _default_combiner()
    main = [
        System("bm25 (FtsIndex)", ("fts",)),
        System("vectors-minilm (MiniLM int8, + 0.5 × thread mean, floor 0.2)", ("vec",)),
        System(
            "hybrid (default recipe)",
            ("fts", "vec"),
            hybrid,
            thread_weight=THREAD_WEIGHT,
            date_weight=DATE_WEIGHT,
            coverage=COVERAGE,
        ),
        System(
            "Memory.recall (default recipe)",
            own=porcelain(lambda: from_recipe(BUILTIN_RECIPES["hybrid"], embedder)),
        ),
        System("bm25s 0.3 over turns (baseline)", own=bm25s_turns),
    ]
    if dataset == "longmemeval":
        main.append(System("bm25s 0.3 over whole sessions (baseline)", own=bm25s_sessions, sessions=True))
    v, x = "variant", "variant-extended"  # extended: run with --all-variants only
    both = ("fts", "vec")
    variants = [
        # The earlier default, exactly: BM25 alone per turn, RRF k=60 1:1 over the 32 candidates recall asked.
        System(
            "previous default: bm25 without context + vectors, RRF k=60 over 32",
            ("fts-c0", "vec"),
            rrf((1.0, 1.0), 60, 32),
            note=v,
        ),
        # BM25 on its own: how much context, and how it is weighted.
        System("bm25, no context (each turn alone, the old default)", ("fts-c0",), note=v),
        System("bm25, context 1", ("fts-c1",), note=v),
        System("bm25, context 3", ("fts-c3",), note=v),
        *(
            System(f"bm25, context column weight {w}", (f"fts-cw{int(w * 10)}",), note=v if w == 0.5 else x)
            for w in (0.3, 0.5, 0.7, 1.0)
            if w != fts._CONTEXT_WEIGHT
        ),
        System("bm25 without context, window ±1 joined to the text", ("fts-w11",), note=x),
        System("bm25 without context, window ±2 joined to the text", ("fts-w22",), note=v),
        System("bm25 without context, previous turn joined to the text", ("fts-w10",), note=x),
        System("bm25, query mode or", ("fts-or",), note=v),
        System("bm25, + session date in the text", ("fts-date",), note=v),
        System(
            'Memory.recall, [recall] recency = "off"',
            own=porcelain(lambda: from_recipe(BUILTIN_RECIPES["hybrid"], embedder), recency_off=True),
            note=v,
        ),
        System(
            "Memory.recall without the thread boost",
            own=porcelain(lambda: from_recipe(BUILTIN_RECIPES["hybrid"], embedder, threads=False)),
            note=v,
        ),
        # Vectors on their own.
        System("vectors, no cosine floor", ("vec0",), note=v),
        System("vectors, ±1 in vector space (neighbours × 0.5)", ("vsm15",), note=v),
        System("vectors, ±1 in vector space (neighbours × 1)", ("vsm110",), note=x),
        System("vectors, ±2 in vector space (neighbours × 0.5)", ("vsm25",), note=x),
        # Fusion of the default parts.
        System("hybrid, RRF k=60 1:1", both, rrf(), note=v),
        System("hybrid, RRF k=60 1:1 over the first 32", both, rrf((1.0, 1.0), 60, 32), note=v),
        System("hybrid, RRF k=10 1:1", both, rrf((1.0, 1.0), 10), note=v),
        System("hybrid, RRF k=5 1:1 over the first 20", both, rrf((1.0, 1.0), 5, 20), note=v),
        System("hybrid, RRF k=10 2:1 over the first 32", both, rrf((2.0, 1.0), 10, 32), note=v),
        System("hybrid, weighted max 1:1", both, weighted((1.0, 1.0)), note=v),
        System("hybrid, weighted max 2:1", both, weighted((2.0, 1.0)), note=v),
        System("hybrid, weighted minmax 1:1", both, weighted((1.0, 1.0), "minmax"), note=v),
        System("hybrid, weighted minmax 1.5:1", both, weighted((1.5, 1.0), "minmax"), note=v),
        System("hybrid, weighted minmax 3:1", both, weighted((3.0, 1.0), "minmax"), note=v),
        System(
            "hybrid, weighted minmax 2:1 over the first 32", both, weighted((2.0, 1.0), "minmax", 32), note=v
        ),
        # Other parts under the default fusion.
        System("hybrid, bm25 without context", ("fts-c0", "vec"), hybrid, note=v),
        System("hybrid, bm25 context weight 0.5", ("fts-cw5", "vec"), hybrid, note=v),
        System("hybrid, bm25 context 3", ("fts-c3", "vec"), hybrid, note=v),
        System("hybrid, vectors without floor", ("fts", "vec0"), hybrid, note=v),
        System("hybrid, vectors ±1 in vector space", ("fts", "vsm15"), hybrid, note=v),
        System("hybrid, bm25 + session date", ("fts-date", "vec"), hybrid, note=v),
        # Session 3: pseudo-relevance feedback, whole sessions, the thread boost, thread vectors.
        System("bm25 + pseudo-relevance feedback (5 notes, 10 words, × 0.4)", ("prf",), note=v),
        System("hybrid, bm25 + pseudo-relevance feedback", ("prf", "vec"), hybrid, note=v),
        System(
            "hybrid + bm25 over whole sessions as a third part (2 : 1 : 0.5), no thread boost",
            ("fts", "vec", "sessions"),
            weighted((2.0, 1.0, 0.5), "minmax"),
            note=v,
        ),
        System("hybrid without the thread boost", both, hybrid, note=v, date_weight=DATE_WEIGHT),
        *(
            System(f"hybrid, thread boost {w}", both, hybrid, note=v, thread_weight=w)
            for w in (0.15, 0.2, 0.4)
        ),
    ]
    t, d = THREAD_WEIGHT, DATE_WEIGHT
    variants += [
        # Session 4: thread means in the vector part, its floor, and the question's dates.
        System(
            "hybrid, session 3 default (plain cosines ≥ 0.3, no date boost)",
            ("fts", "vec-s3"),
            hybrid,
            note=v,
            thread_weight=t,
        ),
        System("hybrid without the date boost", both, hybrid, note=v, thread_weight=t),
        System(
            "hybrid, plain cosines ≥ 0.3 (no thread means)",
            ("fts", "vec-s3"),
            hybrid,
            note=v,
            thread_weight=t,
            date_weight=d,
        ),
        System(
            "hybrid, thread means, floor 0.3 on the mixed score",
            ("fts", "vec-t5"),
            hybrid,
            note=v,
            thread_weight=t,
            date_weight=d,
        ),
        System(
            "hybrid, thread means, floor best (0.3 on the best plain cosine)",
            ("fts", "vec-t5-best"),
            hybrid,
            note=v,
            thread_weight=t,
            date_weight=d,
        ),
        System(
            "hybrid, thread means × 0.8", ("fts", "vec-t8-f2"), hybrid, note=x, thread_weight=t, date_weight=d
        ),
        System("hybrid, date boost 0.15", both, hybrid, note=v, thread_weight=t, date_weight=0.15),
        System("hybrid, date boost 0.3", both, hybrid, note=v, thread_weight=t, date_weight=0.3),
        System("hybrid, date boost 0.8", both, hybrid, note=v, thread_weight=t, date_weight=0.8),
        *(
            System(
                f"hybrid, weights {w:g} : 1",
                both,
                weighted((w, 1.0), "minmax"),
                note=v,
                thread_weight=t,
                date_weight=d,
            )
            for w in (1.0, 1.5, 3.0)
        ),
        System(
            "hybrid, vectors without floor (thread means)",
            ("fts", "vec-t5-f0"),
            hybrid,
            note=v,
            thread_weight=t,
            date_weight=d,
        ),
        System(
            "hybrid, bench vectors: ±1 neighbours × 0.5 + 0.5 × thread mean, floor on the best cosine",
            ("fts", "vmix-s5-c5-g"),
            hybrid,
            note=v,
            thread_weight=t,
            date_weight=d,
        ),
        System(
            "hybrid, bench vectors: ±1 neighbours × 0.5, floor on the best cosine (no thread means)",
            ("fts", "vmix-s5-g"),
            hybrid,
            note=v,
            thread_weight=t,
            date_weight=d,
        ),
        System(
            "hybrid, thread boost + 0.5 × the thread's second best",
            both,
            hybrid,
            note=v,
            thread_weight=t,
            thread_second=0.5,
            date_weight=d,
        ),
    ]
    c = COVERAGE
    variants += [
        # Session 5 (issue 21 item 3): the coverage look and the ideas measured beside it.
        System(
            "hybrid without the coverage look (the session 4 default)",
            both,
            hybrid,
            note=SPLIT,
            thread_weight=t,
            date_weight=d,
        ),
        *(
            System(
                f"hybrid, coverage exponent {e:g}",
                both,
                hybrid,
                note=SPLIT,
                thread_weight=t,
                date_weight=d,
                coverage=e,
            )
            for e in (0.5, 1.0)
        ),
        System(
            "hybrid, a thread scored by its best + 0.5 × its second best turn",
            both,
            hybrid,
            note=SPLIT,
            thread_weight=t,
            thread_second=0.5,
            date_weight=d,
            coverage=c,
        ),
        System(
            "hybrid, notes dated in the question's window added as candidates (≤ 40 notes)",
            both,
            hybrid,
            note=SPLIT,
            thread_weight=t,
            date_weight=d,
            date_add=40,
            coverage=c,
        ),
        System(
            "hybrid, both parts also asked once per name the question names (× 0.5)",
            ("fts-sub", "vec-sub"),
            hybrid,
            note=SPLIT,
            thread_weight=t,
            date_weight=d,
            coverage=c,
        ),
        System(
            "hybrid, vectors asked the question's content words only",
            ("fts", "vec-content"),
            hybrid,
            note=SPLIT,
            thread_weight=t,
            date_weight=d,
            coverage=c,
        ),
    ]
    if dataset == "locomo":  # LongMemEval's 70,000 windows were not embedded (module docstring)
        variants.append(
            System(
                "hybrid + vectors of ±1-turn windows as a third part (2 : 1 : 0.5)",
                ("fts", "vec", "vec-w11"),
                weighted((2.0, 1.0, 0.5), "minmax"),
                note=SPLIT,
                thread_weight=t,
                date_weight=d,
                coverage=c,
            )
        )
    return main + variants
