"""The origin's text heuristics, pinned to the examples of origin-notes §1.11."""

from __future__ import annotations

import sys

import pytest

from agent_memory.jobs.text import (
    NEGATORS,
    STOPWORDS,
    content_terms,
    infer_slots,
    jaccard,
    normalize_phrase,
    stem,
    trigram_jaccard,
    trigrams,
)


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("staging", "stag"),
        ("database", "databas"),
        ("Postgres", "postgr"),
        ("require", "requir"),
        ("required", "requir"),
        ("requires", "requir"),
        ("sing", "sing"),  # "ing" would leave fewer than 3 characters
        ("bed", "bed"),
        ("uses", "use"),  # "es" would leave 2 characters, so "s" is tried; "use" is too short to lose its "e"
    ],
)
def test_stem_follows_the_origin_suffix_rules(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_there_are_62_stopwords_and_18_negators() -> None:
    assert len(STOPWORDS) == 62
    assert len(NEGATORS) == 18
    assert not STOPWORDS & NEGATORS


def test_content_terms_drop_stopwords_negators_and_polarity_frames() -> None:
    terms, negative = content_terms("The staging DB isn't required for the release")
    assert negative is True
    assert terms == frozenset({"stag", "db", "releas"})


def test_content_terms_of_a_positive_sentence_are_not_negative() -> None:
    terms, negative = content_terms("Ada uses Postgres on staging")
    assert negative is False
    assert terms == frozenset({"ada", "use", "postgr", "stag"})


def test_normalize_phrase_keeps_every_word_in_order_as_stems() -> None:
    assert normalize_phrase("The  Staging-Database, is") == "the stag databas is"


def test_infer_slots_splits_at_the_first_copula() -> None:
    assert infer_slots("The staging database is Postgres 16") == {"the stag databas": "postgr 16"}


@pytest.mark.parametrize(
    "body",
    [
        "The staging database is not Postgres 16",  # negated
        "Database is Postgres 16",  # subject of one word
        "The staging database is slow",  # value without a capital or a digit
        "The staging database is",  # empty value
        "Staging databases run Postgres 16",  # no copula
    ],
)
def test_infer_slots_finds_nothing_where_the_origin_finds_nothing(body: str) -> None:
    assert infer_slots(body) == {}


def test_trigrams_lowercase_and_collapse_whitespace() -> None:
    assert trigrams("Ab  C") == frozenset({"ab ", "b c"})
    assert trigrams("ab") == frozenset({"ab"})
    assert trigrams("   ") == frozenset()


def test_jaccard_is_zero_when_a_side_is_empty() -> None:
    assert jaccard(frozenset(), frozenset({"a"})) == 0.0
    assert trigram_jaccard("same text", "same text") == 1.0
    assert 0.6 <= trigram_jaccard("Ada prefers green tea with lemon", "Ada prefers green tea with honey") < 1


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Ada prefers green tea with lemon", "Ada prefers green tea with honey"),
        ("Invoice 1041 was paid on March 3.", "Invoice 1047 was paid on March 3."),
        ("same text", "same text"),
        ("ab", "abc"),
        ("!!", "anything"),  # shorter than 3 characters: its own single trigram
        ("aaaa aaaa", "aaa"),  # repeated trigrams count once on both sides
    ],
)
def test_a_runs_kept_trigrams_give_the_jaccard_of_the_two_sets(a: str, b: str) -> None:
    from jobkit import make

    from agent_memory.jobs.operators import Terms

    ta, tb = Terms.of(make(a)), Terms.of(make(b))
    expected = trigram_jaccard(a, b)
    assert ta.similarity(tb) == expected == tb.similarity(ta)
    assert all(t is sys.intern(t) for t in ta.trigrams)  # shared across the run's records
