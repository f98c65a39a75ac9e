"""Words, ``tsvector`` and ``tsquery`` literals for the PostgreSQL full-text index.

:class:`~agent_memory.search.postgres.PgTextIndex` never hands user text to PostgreSQL's
parser (``to_tsvector``, ``websearch_to_tsquery``): that parser reads ``-x`` as negation, ``or``
as an operator, drops stopwords (``the``, ``to be or not to be`` become an empty query) and,
under most server locales, drops emoji. Instead both sides of the index are cut into words
here, in Python, and only lexemes reach the server, each one quoted, so no user text is ever
read as syntax and the query side cannot disagree with the document side (issue 4 items 2, 8).

How text becomes words (:func:`words`), the same for documents and queries:

- The text is prepared like the FTS5 index's (:mod:`agent_memory.search.fts_query`): NFKC,
  lone surrogates replaced, and runs of scripts written without spaces (Chinese, Japanese,
  Korean, Thai, …) cut into two-character pieces (documents also keep single characters).
- Lower-cased, and Latin, Greek and Cyrillic accents removed (``Café`` → ``cafe``).
- A word is a run of letters, digits and combining marks (categories L, N, M, Co), at most
  :data:`MAX_WORD` characters; every other character separates words, except symbols of
  category So (emoji, ``©``), each of which is a word of its own. ``e-mail`` is ``e`` +
  ``mail``; ``C++`` is ``c``; ``^``, ``*`` and ``:`` are nothing.

The server's ``english_stem`` Snowball dictionary then stems each word; a word it reports as
a stopword stays as it is, so stopwords are searchable (the index decides when to ignore them).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from agent_memory.search.fts_query import prepare_document, prepare_query

__all__ = [
    "MAX_POSITION",
    "MAX_WORD",
    "and_query",
    "document_words",
    "or_query",
    "query_words",
    "quote_lexeme",
    "tsvector_literal",
    "words",
]

MAX_WORD = 200  # characters; longer words are cut, on both sides, well under the 2,047-byte lexeme limit
MAX_POSITION = 16383  # PostgreSQL's largest tsvector position; later words share it
_MAX_POSITIONS_PER_LEXEME = 255  # PostgreSQL keeps at most 256 positions per lexeme
_MAX_VECTOR_BYTES = 900_000  # PostgreSQL refuses a tsvector over 1 MiB; distinct words past this are dropped
_ASCII_WORD = re.compile(r"[a-z0-9]+")
_ACCENTS = re.compile("[\u0300-\u036f]")  # combining diacritical marks (Latin, Greek, Cyrillic accents)


def _fold(text: str) -> str:
    """Return ``text`` lower-cased, with the accents of the combining diacritical block removed."""
    text = text.lower()
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", _ACCENTS.sub("", unicodedata.normalize("NFKD", text)))


def words(prepared: str) -> list[str]:
    """Return the words of already prepared text, in order (see the module docstring).

    Args:
        prepared: Text from :func:`~agent_memory.search.fts_query.prepare_document` or
            :func:`~agent_memory.search.fts_query.prepare_query`.

    Returns:
        Lower-case words of 1 to :data:`MAX_WORD` characters; empty when the text has no
        letter, digit or symbol.
    """
    folded = _fold(prepared)
    if folded.isascii():
        return [word[:MAX_WORD] for word in _ASCII_WORD.findall(folded)]
    out: list[str] = []
    run: list[str] = []
    for char in folded:
        category = unicodedata.category(char)
        if category[0] in "LN" or category == "Co" or (category[0] == "M" and run):
            run.append(char)
            continue
        if run:
            out.append("".join(run[:MAX_WORD]))
            run.clear()
        if category == "So":
            out.append(char)
    if run:
        out.append("".join(run[:MAX_WORD]))
    return out


def document_words(text: str) -> list[str]:
    """Return the words a document is indexed by (unspaced scripts as 1- and 2-character pieces)."""
    return words(prepare_document(text))


def query_words(text: str) -> list[str]:
    """Return the words of a query (unspaced scripts of 2+ characters as 2-character pieces)."""
    return words(prepare_query(text))


def quote_lexeme(lexeme: str) -> str:
    r"""Return ``lexeme`` quoted for ``tsvector`` and ``tsquery`` input (``'`` doubled, ``\`` escaped)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(lexemes: Sequence[str]) -> str:
    """Return the ``tsvector`` input text for a document's lexemes, in text order, with positions.

    Positions start at 1 and stop growing at :data:`MAX_POSITION`; a lexeme keeps its first
    255 positions. Once the literal nears PostgreSQL's 1 MiB limit, further *new* lexemes are
    left out (a note that long is a document, not a memory).

    Args:
        lexemes: Stemmed words in the order they occur.

    Returns:
        Text such as ``'cat':1,4 'sat':2``; empty for no lexemes.
    """
    positions: dict[str, list[int]] = {}
    size = 0
    for at, lexeme in enumerate(lexemes, start=1):
        held = positions.get(lexeme)
        if held is None:
            size += len(lexeme.encode("utf-8")) + 8
            if size > _MAX_VECTOR_BYTES:
                continue
            held = positions[lexeme] = []
        if len(held) < _MAX_POSITIONS_PER_LEXEME:
            held.append(min(at, MAX_POSITION))
    return " ".join(
        f"{quote_lexeme(lexeme)}:{','.join(map(str, sorted(set(at))))}" for lexeme, at in positions.items()
    )


def and_query(lexemes: Iterable[str]) -> str:
    """Return ``tsquery`` input that needs every lexeme: ``'a' & 'b'``."""
    return " & ".join(quote_lexeme(lexeme) for lexeme in lexemes)


def or_query(lexemes: Iterable[str]) -> str:
    """Return ``tsquery`` input that needs any of the lexemes: ``'a' | 'b'``."""
    return " | ".join(quote_lexeme(lexeme) for lexeme in lexemes)
