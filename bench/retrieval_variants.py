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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from retrieval_data import History

from agent_memory.search import fts
from agent_memory.search.base import Embedder, Hit, SearchIndex
from agent_memory.search.fts import FtsIndex
from agent_memory.search.holdings import fuse as fuse_recipe
from agent_memory.search.hybrid import fuse
from agent_memory.search.recipes import BUILTIN_RECIPES, RecipeSpec
from agent_memory.search.vectors import VectorIndex

Ranker = Callable[[History], list[list[int]]]
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
    combine: Callable[[list[list[Hit]]], list[Hit]] | None = None
    own: Ranker | None = None  # bm25s, porcelain: a ranking per question
    sessions: bool = False  # its ranking holds sessions, not turns
    note: str = ""


def body(history: History, index: int) -> str:
    """The note text of a turn (the default document)."""
    return history.turns[index].body


def rrf(
    weights: Sequence[float] = (1.0, 1.0), k_rrf: int = 60, depth: int | None = None
) -> Callable[[list[list[Hit]]], list[Hit]]:
    """Return a combiner: reciprocal rank fusion with these weights and constant (hybrid.fuse).

    With ``depth``, only each part's first ``depth`` hits are fused; the rest of the
    ranking follows, fused over every hit.
    """

    def combine(rankings: list[list[Hit]]) -> list[Hit]:
        full = fuse(rankings, weights, method="rrf", k_rrf=k_rrf)
        if depth is None:
            return full
        head = fuse([r[:depth] for r in rankings], weights, method="rrf", k_rrf=k_rrf)
        held = {h.record_id for h in head}
        return head + [h for h in full if h.record_id not in held]

    return combine


def weighted(
    weights: Sequence[float], normalise: Any = "max", depth: int | None = None
) -> Callable[[list[list[Hit]]], list[Hit]]:
    """Return a combiner: normalised-score fusion (hybrid.fuse ``weighted``); ``depth`` as for :func:`rrf`."""

    def combine(rankings: list[list[Hit]]) -> list[Hit]:
        full = fuse(rankings, weights, method="weighted", normalise=normalise)
        if depth is None:
            return full
        head = fuse([r[:depth] for r in rankings], weights, method="weighted", normalise=normalise)
        held = {h.record_id for h in head}
        return head + [h for h in full if h.record_id not in held]

    return combine


def from_recipe(spec: RecipeSpec, embedder: Embedder) -> SearchIndex:
    """Open an in-memory index of a built-in recipe, its MiniLM vectors read through ``embedder``."""
    if spec.kind == "hybrid":
        return fuse_recipe(spec, [from_recipe(part, embedder) for part in spec.parts])
    if spec.kind == "bm25":
        return FtsIndex(
            ":memory:", name=spec.name, mode=spec.options["mode"], context=spec.options["context"]
        )
    floor = float(spec.options.get("min_similarity", 0.0))
    return VectorIndex(":memory:", embedder, name=spec.name, min_similarity=floor)


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


class SmoothedVectors:
    """Bench-only: cosine against each turn's vector plus ``weight`` × its session neighbours' vectors.

    A window built in vector space from the turns' own vectors (no text is embedded twice);
    neighbours are read from the record's source anchor ``<history>#<session>/<turn>``.
    """

    def __init__(self, embedder: Embedder, reach: int, weight: float) -> None:
        self.embedder, self.reach, self.weight = embedder, reach, weight
        self.ids: list[str] = []
        self.matrix: Any = None

    def index(self, records: list[Any]) -> None:
        """Embed the records' bodies and mix each vector with its session neighbours'."""
        import numpy as np

        own = np.asarray(self.embedder.embed([r.body for r in records]), dtype=np.float32)
        where = [tuple(int(x) for x in r.provenance.ref.split("#")[1].split("/")) for r in records]
        mixed = own.copy()
        for i, (session, _) in enumerate(where):
            for j in range(max(0, i - self.reach), min(len(records), i + self.reach + 1)):
                if j != i and where[j][0] == session:
                    mixed[i] += self.weight * own[j]
        mixed /= np.clip(np.linalg.norm(mixed, axis=1, keepdims=True), 1e-9, None)
        self.ids, self.matrix = [r.id for r in records], mixed

    def query(self, text: str, *, k: int = 32) -> list[Hit]:
        """Return the ``k`` best cosines to the mixed vectors (positive ones only)."""
        import numpy as np

        q = np.asarray(self.embedder.embed([text]), dtype=np.float32)[0]
        scores = self.matrix @ q
        top = np.argsort(-scores)[:k]
        return [Hit(self.ids[i], float(scores[i])) for i in top if scores[i] > 0]


class WeightedContext(FtsIndex):
    """Bench-only: the default FtsIndex with its neighbours' column weighted ``weight`` in bm25()."""

    def __init__(self, weight: float, context: int) -> None:
        super().__init__(":memory:", context=context)
        self.weight = weight

    def _match(self, expression: str, k: int) -> list[Hit]:
        held = f"bm25(fts, 1.0, {fts._CONTEXT_WEIGHT!r})"
        sql = fts._MATCH.replace(held, f"bm25(fts, 1.0, {self.weight!r})")
        saved, fts._MATCH = fts._MATCH, sql
        try:
            return super()._match(expression, k)
        finally:
            fts._MATCH = saved


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
    for reach, weight in ((1, 0.5), (1, 1.0), (2, 0.5)):
        tag = f"vsm{reach}{int(weight * 10)}"
        out[tag] = Part(tag, lambda r=reach, w=weight: SmoothedVectors(embedder, r, w), body)  # type: ignore[misc]
    for before, after in ((1, 0), (1, 1), (2, 2)):
        tag = f"w{before}{after}"
        out[f"fts-{tag}"] = Part(f"fts-{tag}", lambda: FtsIndex(":memory:", context=0), window(before, after))
        out[f"vec-{tag}"] = Part(f"vec-{tag}", lambda: from_recipe(vec, embedder), window(before, after))
    return out


def _default_combiner() -> Callable[[list[list[Hit]]], list[Hit]]:
    options: dict[str, Any] = dict(BUILTIN_RECIPES["hybrid"].options)
    if options["fusion"] == "rrf":
        return rrf(options["weights"], options["k_rrf"])
    return weighted(options["weights"], options["normalise"])


REFERENCE = (
    "bm25 (FtsIndex)",
    "vectors-minilm (MiniLM int8, cosine ≥ 0.3)",
    "hybrid (default recipe)",
    "Memory.recall (default recipe)",
)
"""Main rows also run beside the variants, on the same questions, as the reference."""


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
        System("vectors-minilm (MiniLM int8, cosine ≥ 0.3)", ("vec",)),
        System("hybrid (default recipe)", ("fts", "vec"), hybrid),
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
            "Memory.recall, every turn written at one time (recency equal)",
            own=porcelain(lambda: from_recipe(BUILTIN_RECIPES["hybrid"], embedder), same_time=True),
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
    ]
    return main + variants
