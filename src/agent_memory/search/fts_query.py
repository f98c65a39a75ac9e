"""Text preparation and MATCH expressions for the FTS5 index (:mod:`agent_memory.search.fts`).

Invariant: user text never reaches FTS5 as syntax. A query is cut into the tokens that the
index's own tokenizer produces (:class:`~agent_memory.search.fts.FtsIndex` asks SQLite for
them), and every MATCH expression is built here from those tokens, each one a double-quoted
FTS5 string with inner quotes doubled. ``AND``, ``OR``, ``NOT``, ``NEAR``, ``*``, ``^``,
``:``, parentheses and quotes in the text are therefore plain characters (seed 001 §indexes,
issue 4 item 2).

Both sides of the index go through the same preparation:

- NFKC normalisation (full-width letters and digits, ligatures such as ``ﬁ``, circled
  digits) and lone surrogates replaced, so any Python string can be stored and searched.
- Runs of characters from scripts written without spaces (Han, Hiragana, Katakana,
  Hangul, Thai, Lao, Khmer, Myanmar, Bopomofo) are cut into overlapping character bigrams;
  documents also keep each character as a unigram, so a query of one character is found
  through the index too. A query run of two or more characters is searched as its bigrams.

Stopwords (:data:`STOPWORDS`, recipe name ``origin-62+questions``) are the 62 function words
of the origin's ``text.py`` (origin-notes §1.11), 26 question words and pronouns (``what``,
``who``, ``how``, ``i``, ``my``, ``her``, ``about``, …) and the contraction fragments ``s``,
``t``, ``d``, ``ll``, ``m``, ``re``, ``ve`` that the tokenizer cuts from ``Caroline's`` or
``didn't``. They are dropped from a query only when something else remains, and ``may`` is
kept next to a number (``May 7``).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "STOPWORDS",
    "STOPWORDS_NAME",
    "Term",
    "and_expression",
    "content_flags",
    "content_terms",
    "or_expression",
    "or_terms",
    "prepare_document",
    "prepare_query",
    "quote",
]

# origin-notes §1.11: the origin's STOPWORDS, in its order (62 words).
_ORIGIN_STOPWORDS = (
    "the",
    "a",
    "an",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "am",
    "do",
    "does",
    "did",
    "done",
    "has",
    "have",
    "had",
    "having",
    "will",
    "would",
    "can",
    "could",
    "shall",
    "should",
    "may",
    "might",
    "must",
    "to",
    "of",
    "in",
    "on",
    "at",
    "by",
    "for",
    "from",
    "with",
    "and",
    "or",
    "but",
    "it",
    "its",
    "this",
    "that",
    "these",
    "those",
    "there",
    "here",
    "as",
    "so",
    "if",
    "then",
    "than",
    "after",
    "before",
    "when",
    "any",
    "some",
    "still",
    "now",
    "also",
    "just",
)
# Question words and pronouns: +0.03 LoCoMo evidence recall@10 over the origin's list alone
# (bench/search.py; docs/benchmarks.md, Search).
_QUESTION_WORDS = (
    "what",
    "who",
    "whom",
    "whose",
    "which",
    "where",
    "why",
    "how",
    "i",
    "me",
    "my",
    "you",
    "your",
    "we",
    "our",
    "us",
    "he",
    "him",
    "his",
    "she",
    "her",
    "they",
    "them",
    "their",
    "about",
    "into",
)
_CONTRACTION_FRAGMENTS = ("s", "t", "d", "ll", "m", "re", "ve")
STOPWORDS: frozenset[str] = frozenset((*_ORIGIN_STOPWORDS, *_QUESTION_WORDS, *_CONTRACTION_FRAGMENTS))
STOPWORDS_NAME = "origin-62+questions"
_MONTHS_IN_STOPWORDS = frozenset({"may"})

# Scripts written without spaces between words, as (first, last) code points, sorted.
_UNSEGMENTED_RANGES: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x1780, 0x17FF),  # Khmer
    (0x3005, 0x3007),  # 々 〆 〇
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x312F),  # Bopomofo
    (0x3130, 0x318F),  # Hangul compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x3134F),  # CJK extensions B-G
)
_RANGE_STARTS = [first for first, _ in _UNSEGMENTED_RANGES]
_UNSEGMENTED_ANY = re.compile(
    "[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in _UNSEGMENTED_RANGES) + "]"
)


@dataclass(frozen=True, slots=True)
class Term:
    """One query token as the index's tokenizer produced it.

    Attributes:
        token: The folded, lower-cased token before stemming; what goes into MATCH.
        stem: Its Porter stem, as stored in the index (the key of document frequencies).
    """

    token: str
    stem: str


def _clean(text: str) -> str:
    """Return NFKC text that encodes as UTF-8 (lone surrogates become U+FFFD)."""
    if not text.isascii():
        text = text.encode("utf-8", "replace").decode("utf-8")
        text = unicodedata.normalize("NFKC", text)
    return text


def _is_unsegmented(char: str) -> bool:
    point = ord(char)
    at = bisect.bisect_right(_RANGE_STARTS, point) - 1
    if at < 0 or point > _UNSEGMENTED_RANGES[at][1]:
        return False
    # Punctuation inside these blocks (・, ๏, ។) stays a separator.
    return unicodedata.category(char)[0] in "LMN"


def _split_runs(text: str, expand: Callable[[str], list[str]]) -> str:
    if not _UNSEGMENTED_ANY.search(text):
        return text
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            out.append(" " + " ".join(expand("".join(run))) + " ")
            run.clear()

    for char in text:
        if _is_unsegmented(char):
            run.append(char)
        else:
            flush()
            out.append(char)
    flush()
    return "".join(out)


def _bigrams(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)] or [run]


def _unigrams_and_bigrams(run: str) -> list[str]:
    return [*run, *_bigrams(run)] if len(run) > 1 else [run]


def prepare_document(text: str) -> str:
    """Return the text the index stores for a document (NFKC; unspaced runs as 1- and 2-grams)."""
    return _split_runs(_clean(text), _unigrams_and_bigrams)


def prepare_query(text: str) -> str:
    """Return query text prepared like documents, with unspaced runs of 2+ characters as bigrams."""
    return _split_runs(_clean(text), _bigrams)


def content_flags(tokens: Sequence[str]) -> list[bool]:
    """Return, per query token, whether it is a content word: not a stopword, or a month by a number.

    ``may`` next to a token of digits is a month (``May 7``, ``7 May 2023``). The rule
    :func:`content_terms` applies, for an index that chooses its terms on the server
    (:class:`~agent_memory.search.postgres.PgTextIndex`).
    """
    flags = []
    for at, token in enumerate(tokens):
        month = token in _MONTHS_IN_STOPWORDS and any(
            0 <= j < len(tokens) and tokens[j].isdigit() for j in (at - 1, at + 1)
        )
        flags.append(month or token not in STOPWORDS)
    return flags


def content_terms(terms: Sequence[Term]) -> list[Term]:
    """Drop repeated stems and stopwords, unless only stopwords are left.

    ``may`` next to a token of digits is a month (``May 7``, ``7 May 2023``) and is kept.
    Order of first appearance is kept.

    Args:
        terms: Query tokens in text order.

    Returns:
        The terms to search for; empty only when ``terms`` is.
    """
    unique: list[Term] = []
    seen: set[str] = set()
    for term in terms:
        if term.stem not in seen:
            seen.add(term.stem)
            unique.append(term)
    flags = content_flags([term.token for term in terms])
    kept = [term for term, flag in zip(terms, flags, strict=True) if flag]
    if not kept:
        return unique
    chosen = {term.stem for term in kept}
    return [term for term in unique if term.stem in chosen]


SMALL_INDEX = 1000
"""Below this many documents an OR query keeps its common terms (they cost nothing there)."""


def or_terms(
    terms: Sequence[Term], df: dict[str, int], total: int, *, cap: int, max_share: float = 0.5
) -> list[Term]:
    """Choose the terms of an OR query: present ones, rarest first, at most ``cap``.

    FTS5 scores every row an OR query matches, so a very common term makes it slow
    (dependencies.md, SQLite) while adding little to the ranking: BM25 gives a term in many
    documents a small IDF. Terms in more than ``max_share`` of the documents are dropped
    when a rarer one remains, and of the rest the ``cap`` rarest are kept. Below
    :data:`SMALL_INDEX` documents nothing is slow, and a term common in a small Home (its
    main topic) still decides which notes answer: there no term is dropped by share.

    Args:
        terms: Content terms of the query.
        df: Documents containing each stem (missing stems count as 0).
        total: Documents in the index.
        cap: Largest number of terms to keep (≥ 1).
        max_share: Largest fraction of documents, in [0, 1], a kept term may be found in.

    Returns:
        Up to ``cap`` terms, in the order of ``terms``; empty when none is present.
    """
    present = [t for t in terms if df.get(t.stem, 0) > 0]
    if total < SMALL_INDEX:
        rare = present
    else:
        rare = [t for t in present if df[t.stem] <= max_share * total] or present
    keep = {t.stem for t in sorted(rare, key=lambda t: (df[t.stem], t.stem))[:cap]}
    return [t for t in rare if t.stem in keep]


def quote(token: str) -> str:
    """Return ``token`` as an FTS5 string literal: double-quoted, inner quotes doubled."""
    return '"' + token.replace('"', '""') + '"'


def and_expression(terms: Iterable[Term]) -> str:
    """Return a MATCH expression that needs every term (FTS5's implicit AND)."""
    return " ".join(quote(t.token) for t in terms)


def or_expression(terms: Iterable[Term]) -> str:
    """Return a MATCH expression that needs any of the terms."""
    return " OR ".join(quote(t.token) for t in terms)
