"""Recipes in memory.toml: strict parsing, the template, splicing, recipe files and availability."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from agent_memory.errors import ConfigError
from agent_memory.search.recipes import (
    BUILTIN_RECIPES,
    RecipeSpec,
    SearchSettings,
    load_recipe_file,
    splice_search,
)
from agent_memory.settings import HOME_FORMAT, Settings

BASE = f'format = "{HOME_FORMAT}"\nhome_id = "abc"\n[identity]\nkey_file = "/k"\n'
LOCAL = (
    '{name = "local", kind = "vector", embedder = "openai", base_url = "http://h:8080/v1", model = "m",'
    ' api_key_env = "EMBED_KEY", dimensions = 768}'
)
CUSTOM = (
    """
[search]
recipes = ["fused"]

[search.recipe.words]
kind = "bm25"
mode = "or"

[search.recipe.fused]
kind = "hybrid"
parts = ["words", """
    + LOCAL
    + """]
fusion = "weighted"
weights = [2, 1.5]
normalise = "minmax"
"""
)


def parse(text: str) -> SearchSettings:
    return SearchSettings.from_toml(tomllib.loads(text).get("search", {}), "memory.toml")


def test_an_absent_search_table_means_the_default_choice() -> None:
    assert parse("") == SearchSettings(recipes=None, defined=())


def test_own_recipes_are_read_with_every_default_filled_in() -> None:
    search = parse(CUSTOM)
    assert search.recipes == ("fused",)
    words, fused = search.defined
    assert words == RecipeSpec("words", "bm25", {"mode": "or", "context": 2})
    assert fused.options == {"fusion": "weighted", "weights": [2.0, 1.5], "normalise": "minmax"}
    assert [p.name for p in fused.parts] == ["words", "local"]
    assert fused.parts[1].options == {
        "embedder": "openai",
        "base_url": "http://h:8080/v1",
        "model": "m",
        "api_key_env": "EMBED_KEY",
        "dimensions": 768,
    }
    assert search.recipe("hybrid") == BUILTIN_RECIPES["hybrid"]
    assert search.recipe("words") is words


def test_the_template_documents_the_section_and_reads_back_to_the_same_settings(tmp_path: Path) -> None:
    for search in (SearchSettings(), parse(CUSTOM)):
        settings = Settings(home_id="abc", key_file=Path("/k"), search=search)
        text = settings.to_toml()
        assert "[search]" in text and "golden.yaml" in text and "api_key_env" in text
        path = tmp_path / "memory.toml"
        path.write_text(text, encoding="utf-8")
        assert Settings.load(path) == settings


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ('[search]\ncolour = "red"', "search.colour", "unknown settings"),
        ("[search]\nrecipes = []", "search.recipes", "non-empty list"),
        ('[search]\nrecipes = ["bm25", "bm25"]', "search.recipes", "distinct"),
        ('[search]\nrecipes = "bm25"', "search.recipes", "list"),
        ('[search]\nrecipes = ["nope"]', "search.recipes", "no recipe named 'nope'"),
        ('[search.recipe.x]\nkind = "graph"', "search.recipe.x.kind", "bm25, vector or hybrid"),
        ('[search.recipe.x]\nkind = "vector"\nembedder = "bert"', "search.recipe.x.embedder", "hash, minilm"),
        ('[search.recipe.x]\nkind = "bm25"\nmode = "fuzzy"', "search.recipe.x.mode", "invalid value"),
        ('[search.recipe.x]\nkind = "bm25"\nfields = ["body"]', "search.recipe.x.fields", "unknown options"),
        ('[search.recipe.x]\nkind = "bm25"\ncontext = 9', "search.recipe.x.context", "invalid value 9"),
        ('[search.recipe.x]\nkind = "bm25"\ncontext = true', "search.recipe.x.context", "invalid value True"),
        (
            '[search.recipe.x]\nkind = "vector"\nembedder = "hash"\ndimensions = 0',
            "search.recipe.x.dimensions",
            "invalid value 0",
        ),
        (
            '[search.recipe.x]\nkind = "vector"\nembedder = "hash"\ndimensions = true',
            "search.recipe.x.dimensions",
            "invalid value True",
        ),
        (
            '[search.recipe.x]\nkind = "vector"\nembedder = "minilm"\nmax_tokens = 1024',
            "search.recipe.x.max_tokens",
            "invalid value 1024",
        ),
        (
            '[search.recipe.x]\nkind = "vector"\nembedder = "openai"\nmodel = "m"',
            "search.recipe.x.base_url",
            "needs base_url and model",
        ),
        (
            '[search.recipe.x]\nkind = "vector"\nembedder = "openai"\nbase_url = "ftp://h"\nmodel = "m"',
            "search.recipe.x.base_url",
            "invalid value 'ftp://h'",
        ),
        (
            '[search.recipe.x]\nkind = "vector"\nembedder = "openai"\nbase_url = "http://h"\nmodel = "m"\n'
            'api_key = "sk-123"',
            "search.recipe.x.api_key",
            "does not belong",
        ),
        ('[search.recipe.x]\nkind = "hybrid"', "search.recipe.x.parts", "needs parts"),
        (
            '[search.recipe.x]\nkind = "hybrid"\nparts = ["ghost"]',
            "search.recipe.x.parts[0]",
            "no recipe named",
        ),
        (
            '[search.recipe.x]\nkind = "hybrid"\nparts = ["hybrid"]',
            "search.recipe.x.parts[0]",
            "not a hybrid",
        ),
        ('[search.recipe.x]\nkind = "hybrid"\nparts = ["bm25", "bm25"]', "search.recipe.x.parts[1]", "twice"),
        (
            '[search.recipe.x]\nkind = "hybrid"\nparts = [{name = "bm25", kind = "bm25", mode = "or"}]',
            "search.recipe.x.parts[0]",
            "already named",
        ),
        (
            '[search.recipe.x]\nkind = "hybrid"\nparts = ["bm25"]\nweights = [0]',
            "search.recipe.x.weights",
            "one non-negative number per part",
        ),
        (
            '[search.recipe.x]\nkind = "hybrid"\nparts = ["bm25"]\nweights = [1, 1]',
            "search.recipe.x.weights",
            "one non-negative number per part",
        ),
        (
            '[search.recipe.x]\nkind = "hybrid"\nparts = ["bm25"]\nnormalise = "max"',
            "search.recipe.x.normalise",
            "weighted fusion only",
        ),
        ('[search.recipe."Bad Name"]\nkind = "bm25"', "search.recipe.Bad Name", "recipe name must match"),
        (
            '[search.recipe.x]\nkind = "vector"\nembedder = "hash"\nfloor = "most"',
            "search.recipe.x.floor",
            "invalid value",
        ),
        (
            '[search.recipe.x]\nkind = "vector"\nembedder = "hash"\nthread_weight = -0.5',
            "search.recipe.x.thread_weight",
            "invalid value",
        ),
        (
            '[search.recipe.x]\nkind = "bm25"\nthread_weight = 0.5',
            "search.recipe.x.thread_weight",
            "unknown options",
        ),
    ],
)
def test_bad_search_settings_name_the_file_and_the_field(text: str, field: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse(text)
    assert info.value.field == field
    assert info.value.path == "memory.toml"


def test_a_bad_search_table_in_memory_toml_is_refused_on_load(tmp_path: Path) -> None:
    path = tmp_path / "memory.toml"
    path.write_text(BASE + '[search]\nrecipes = ["nope"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="no recipe named") as info:
        Settings.load(path)
    assert info.value.path == str(path)


def test_splicing_replaces_only_the_search_tables() -> None:
    text = BASE + '# a comment of the owner\'s\n[actors]\nowner = "ada"\n' + CUSTOM + "\n[trust]\n# kept\n"
    spliced = splice_search(text, SearchSettings(("bm25",)))
    assert spliced.startswith(BASE + '# a comment of the owner\'s\n[actors]\nowner = "ada"\n')
    assert "[trust]\n# kept" in spliced and "words" not in spliced
    data = tomllib.loads(spliced)
    assert data["search"]["recipes"] == ["bm25"] and data["actors"] == {"owner": "ada"}


def test_activating_a_recipe_defines_it_unless_it_is_built_in() -> None:
    search = parse(CUSTOM)
    own = RecipeSpec("wide", "bm25", {"mode": "or", "context": 2})
    assert search.activating(own).recipes == ("wide",)
    assert search.activating(own).defined[-1] == own
    assert search.activating(BUILTIN_RECIPES["bm25"]).defined == search.defined
    again = parse(splice_search(BASE, search.activating(own)))
    assert again.recipe("wide") == own and again.recipe("fused") == search.recipe("fused")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "recipe.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_recipe_file_may_name_the_homes_recipes_as_parts(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "mix"\nkind = "hybrid"\nparts = ["words", "vectors-hash"]\nk_rrf = 10\n')
    spec = load_recipe_file(path, parse(CUSTOM))
    assert [p.name for p in spec.parts] == ["words", "vectors-hash"]
    assert spec.options == {"fusion": "rrf", "weights": [1.0, 1.0], "k_rrf": 10}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('kind = "bm25"\n', "needs a name"),
        ('name = "x"\nkind = "bm25\n', "not valid TOML"),
        ('name = "x"\nkind = "bm25"\nmode = 3\n', "invalid value"),
    ],
)
def test_a_bad_recipe_file_is_named_in_the_error(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=message) as info:
        load_recipe_file(path, SearchSettings())
    assert info.value.path == str(path)


def test_a_missing_recipe_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_recipe_file(tmp_path / "absent.toml", SearchSettings())


def test_vector_scoring_options_are_read_and_reach_the_index() -> None:
    from agent_memory.search.embedders import HashEmbedder
    from agent_memory.search.vectors import VectorIndex, scoring_options

    search = parse(
        '[search.recipe.v]\nkind = "vector"\nembedder = "hash"\nfloor = "best"\nthread_weight = 1\n'
        "min_similarity = 0.25"
    )
    (spec,) = search.defined
    assert spec.options == {
        "embedder": "hash",
        "min_similarity": 0.25,
        "floor": "best",
        "thread_weight": 1.0,
        "dimensions": 256,
    }
    index = VectorIndex(":memory:", HashEmbedder(), **scoring_options(spec.options))
    assert (index.min_similarity, index.floor, index.thread_weight) == (0.25, "best", 1.0)
    plain = VectorIndex(
        ":memory:", HashEmbedder(), **scoring_options(BUILTIN_RECIPES["vectors-hash"].options)
    )
    assert (plain.min_similarity, plain.floor, plain.thread_weight) == (0.0, "each", 0.0)
    assert parse(f"[search]\n[search.recipe.w]\n{spec.to_toml_table()}").defined[0].options == spec.options
