"""Text heuristics of consolidation: negators, stopwords, a tiny stemmer, slots, trigram similarity.

These are the origin library's ``text.py`` rules, kept exactly (origin-notes §1.11) so that
consolidation decides what the origin decided on the same records: which records share a
content term (blocking), which disagree on a slot (contradiction), which negate one another.
Everything here is a pure function of its arguments: no model, no clock, no I/O.

Invariant: the same text always gives the same terms, slots and trigrams; nothing here
depends on dictionaries, locale or the environment (lower-casing is Python's ``str.lower``).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

__all__ = [
    "NEGATORS",
    "POLARITY_FRAME_STEMS",
    "STOPWORDS",
    "Facts",
    "content_terms",
    "differing_facts",
    "fact_difference",
    "infer_slots",
    "jaccard",
    "normalize_phrase",
    "stem",
    "trigram_jaccard",
    "trigrams",
]

NEGATORS: frozenset[str] = frozenset(
    {
        *("not", "no", "never", "n't", "none", "neither", "nor", "without", "isnt", "arent"),
        *("dont", "doesnt", "didnt", "cant", "cannot", "wont", "wasnt", "werent"),
    }
)

STOPWORDS: frozenset[str] = frozenset(
    {
        *("the", "a", "an", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does"),
        *("did", "done", "has", "have", "had", "having", "will", "would", "can", "could", "shall"),
        *("should", "may", "might", "must", "to", "of", "in", "on", "at", "by", "for", "from"),
        *("with", "and", "or", "but", "it", "its", "this", "that", "these", "those", "there"),
        *("here", "as", "so", "if", "then", "than", "after", "before", "when", "any", "some"),
        *("still", "now", "also", "just"),
    }
)

# Words that frame a statement's polarity ("X is required" / "X is not needed") rather than
# carry its content; leaving them out lets the two sides of a negation share their terms.
POLARITY_FRAME_STEMS: frozenset[str] = frozenset({"need", "requir", "necessari", "necessar"})

_SUFFIXES = ("ing", "ed", "es", "s")
_NON_ALNUM = re.compile(r"[^0-9a-z]")
_COPULA = re.compile(r"\b(is|are|was|were)\b", re.IGNORECASE)
_UPPER_OR_DIGIT = re.compile(r"[A-Z0-9]")
_SPACES = re.compile(r"\s+")


def stem(token: str) -> str:
    """Return the origin's crude stem of one token (origin-notes §1.11).

    Lower-cases, strips the first of ``ing``, ``ed``, ``es``, ``s`` that ends the token when
    at least 3 characters remain, then one trailing ``e`` when at least 4 characters remain
    before stripping it: ``staging``→``stag``, ``database``→``databas``, ``Postgres``→``postgr``,
    ``require``/``required``/``requires``→``requir``.
    """
    word = token.lower()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) >= 4 and word.endswith("e"):
        word = word[:-1]
    return word


def _tokens(text: str) -> list[str]:
    cleaned = text.lower().replace("n't", " not ")
    return _NON_ALNUM.sub(" ", cleaned).split()


def content_terms(body: str) -> tuple[frozenset[str], bool]:
    """Return the stemmed content terms of ``body`` and whether it is negative (origin-notes §1.11).

    Lower-case; ``n't`` becomes `` not ``; every character other than ``[0-9a-z]`` becomes a
    space; split. The text is negative when any token is in :data:`NEGATORS`. Terms are the
    stems of the tokens that are neither negators nor :data:`STOPWORDS`, less
    :data:`POLARITY_FRAME_STEMS`.

    Returns:
        ``(terms, negative)``.
    """
    tokens = _tokens(body)
    negative = any(token in NEGATORS for token in tokens)
    # Interned: a consolidation run keeps the terms of every record, and most are shared.
    terms = {sys.intern(stem(t)) for t in tokens if t not in NEGATORS and t not in STOPWORDS}
    return frozenset(terms - POLARITY_FRAME_STEMS), negative


def normalize_phrase(text: str) -> str:
    """Return the stems of ``text``'s tokens in order, joined by single spaces (same cleaning as above).

    Stopwords and negators are kept: a phrase keeps its words, only their endings go.
    """
    return " ".join(stem(token) for token in _tokens(text))


def infer_slots(body: str) -> dict[str, str]:
    """Infer one ``{subject: value}`` slot from a copular sentence, or ``{}`` (origin-notes §1.11).

    ``{}`` when the body is negative (see :func:`content_terms`). Otherwise the first
    word-bounded ``is|are|was|were`` (any case) splits it; subject and value are the
    :func:`normalize_phrase` of the text before and after. The slot is kept only when the
    value is non-empty, the subject has at least 2 words, and the raw value holds an
    upper-case letter or a digit (a name, a version, a host: something that can disagree).
    Example: ``"The staging database is Postgres 16"`` → ``{"the stag databas": "postgr 16"}``.
    """
    if content_terms(body)[1]:
        return {}
    match = _COPULA.search(body)
    if match is None:
        return {}
    subject = normalize_phrase(body[: match.start()])
    raw_value = body[match.end() :]
    value = normalize_phrase(raw_value)
    if not value or len(subject.split()) < 2 or not _UPPER_OR_DIGIT.search(raw_value):
        return {}
    return {subject: value}


def trigrams(text: str) -> frozenset[str]:
    """Return the character trigrams of ``text`` lower-cased with whitespace runs as one space.

    Every 3-character window; a string shorter than 3 characters is its own single "trigram"
    (the empty string gives the empty set). The trigrams are interned strings: a consolidation
    run keeps the set of every record it compares, and the same few thousand trigrams make up
    all of them (20,000 notes: 17,368 distinct, against 157 MB as separate strings).
    """
    cleaned = _SPACES.sub(" ", text.lower()).strip()
    if not cleaned:
        return frozenset()
    if len(cleaned) < 3:
        return frozenset({sys.intern(cleaned)})
    return frozenset(map(sys.intern, [cleaned[i : i + 3] for i in range(len(cleaned) - 2)]))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Return ``|a ∩ b| / |a ∪ b|`` in [0, 1]; 0 when either set is empty."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def trigram_jaccard(a: str, b: str) -> float:
    """Return the Jaccard similarity in [0, 1] of the trigram sets of two texts (origin-notes §1.12)."""
    return jaccard(trigrams(a), trigrams(b))


# Tokens that carry a fact rather than its wording (issue 21): anything holding a digit (numbers,
# amounts, versions, times, identifiers such as INV-1041, db-3, 10.0.0.1), month and weekday
# names, and capitalised words (names; a sentence's first word only when it is not a stopword).
# Two texts that differ in one of these state different facts, however alike their trigrams.
_FACT_TOKEN = re.compile(r"[A-Za-z_]*\d[\w.:/@#-]*\w|\d")
_WORD = re.compile(r"[A-Za-z][\w'-]*")
_CALENDAR: frozenset[str] = frozenset(
    {
        *("january", "february", "march", "april", "may", "june", "july", "august", "september"),
        *("october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep"),
        *("sept", "oct", "nov", "dec", "monday", "tuesday", "wednesday", "thursday", "friday"),
        *("saturday", "sunday", "today", "yesterday", "tomorrow"),
    }
)
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*)([A-Za-z][\w'-]*)")


@dataclass(frozen=True, slots=True)
class Facts:
    """What :func:`differing_facts` compares of one text, every word lower-cased.

    Attributes:
        numbers: Tokens holding a digit (numbers, identifiers).
        calendar: Month and weekday names, today/yesterday/tomorrow.
        names: Capitalised words that may be names (a sentence's first word unless a stopword).
        words: Every word.
    """

    numbers: frozenset[str]
    calendar: frozenset[str]
    names: frozenset[str]
    words: frozenset[str]

    @classmethod
    def of(cls, text: str) -> Facts:
        """Read the facts of ``text``. Pure; never raises."""
        words = frozenset(w.lower() for w in _WORD.findall(text))
        starts = {m.start(1) for m in _SENTENCE_START.finditer(text)}
        names = frozenset(
            word
            for m in _WORD.finditer(text)
            if m.group(0)[0].isupper()
            and (word := m.group(0).lower()) not in _CALENDAR
            and not (m.start() in starts and word in STOPWORDS)
        )
        numbers = frozenset(token.lower() for token in _FACT_TOKEN.findall(text))
        return cls(numbers, words & _CALENDAR, names, words)


def fact_difference(a: str, b: str) -> str | None:
    """Return why two texts state different facts (numbers, identifiers, dates, names), or ``None``.

    A number or identifier (a token holding a digit) or a month or weekday name in one text and
    not the other is a difference; so is a capitalised word of one text (a name; a sentence's
    first word unless it is a stopword) whose lower-case form the other text does not hold at
    all, so "the API" and "the api" do not differ but "Alice paid" and "Bob paid" do. Pure;
    never raises.

    Returns:
        e.g. ``"numbers or identifiers differ: 1041 vs 1047"``, or ``None`` when none differ.
    """
    return differing_facts(Facts.of(a), Facts.of(b))


def differing_facts(a: Facts, b: Facts) -> str | None:
    """Return :func:`fact_difference` of two texts from their facts, each read once.

    Consolidation compares a text with many others; reading its facts again for every pair
    was most of its time (issue 23).
    """
    if a.numbers != b.numbers:
        first, second = _listed(a.numbers - b.numbers), _listed(b.numbers - a.numbers)
        return f"numbers or identifiers differ: {first} vs {second}"
    if a.calendar != b.calendar:
        return f"dates differ: {_listed(a.calendar - b.calendar)} vs {_listed(b.calendar - a.calendar)}"
    only_a, only_b = a.names - b.words, b.names - a.words
    if only_a or only_b:
        return f"names differ: {_listed(only_a)} vs {_listed(only_b)}"
    return None


def _listed(tokens: frozenset[str]) -> str:
    return ", ".join(sorted(tokens)) or "none"
