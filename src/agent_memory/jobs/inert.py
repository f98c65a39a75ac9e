r"""Note text in generated views is inert Markdown: it can never change a view's structure (issue 20 item 6).

A record body is testimony, often from outside (``--taint external``), and the views
(``MEMORY.md``, ``index.md``, ``topics/*.md``, the rules appended to ``conventions.md``) are
read by people in a Markdown renderer and by agents as plain text. So every piece of note text
a view shows — bodies, subjects, sources, topic triggers, promoted rule text — goes through
:func:`inert_lines` (or :func:`inert_inline` for one-line places), one escaping applied the
same way everywhere (CommonMark backslash escapes, which a renderer shows as the plain
character and an agent reads past):

- ``<`` becomes ``\<``: no HTML block or inline HTML (``<script>…</script>``, ``<!-- … -->``,
  which could also fake a view's digest footer), no autolink;
- a backslash before ASCII punctuation is doubled, so text can never undo an escape;
- the first non-blank character of every line, when it is punctuation that can open a block
  (``#`` heading, ``>`` quote, ``-`` ``+`` ``*`` list or thematic break, ``=``/``-`` setext
  underline, ````` ``` ````` ``~~~`` fence, ``[`` link reference definition, ``|`` table, ``---``
  frontmatter), gets a backslash, and an ordered-list marker (``1.``, ``2)``) has its ``.``/``)``
  escaped;
- the lines after the first are indented under their row by the caller, so none starts a row
  of the view's own.

Everything else stays as written (words, punctuation mid-line, code spans, emphasis), so the
views stay readable. :func:`view_forms` gives the escaped form of a body's lines, which the
withdrawal scrub and doctor's leak check look for besides the raw text.

Invariant: the escaping only adds backslashes; removing every backslash this module added gives
back the text (the tests check each construct).
"""

from __future__ import annotations

import re

__all__ = ["inert_code", "inert_inline", "inert_lines", "view_forms"]

_PUNCT_AFTER_BACKSLASH = re.compile(r"\\(?=[!-/:-@\[-`{-~])")
_BLOCK_OPENERS = frozenset("#>-+*=`~[|_")
_ORDERED = re.compile(r"\A(\s*\d{1,9})([.)])")


def _line(text: str) -> str:
    escaped = _PUNCT_AFTER_BACKSLASH.sub(r"\\\\", text).replace("<", "\\<")
    ordered = _ORDERED.match(escaped)
    if ordered:
        return f"{ordered[1]}\\{ordered[2]}{escaped[ordered.end() :]}"
    stripped = escaped.lstrip()
    if stripped[:1] in _BLOCK_OPENERS:
        cut = len(escaped) - len(stripped)
        return f"{escaped[:cut]}\\{stripped}"
    return escaped


def inert_lines(text: str) -> list[str]:
    r"""Return ``text``'s lines, each escaped so no Markdown block or HTML can start in it.

    Lines are split on ``\n`` only (bodies are NFC text with no other line breaks); a blank
    line stays blank. See the module docstring for the rules.
    """
    return [_line(line) for line in text.split("\n")]


def inert_inline(text: str) -> str:
    """Return ``text`` on one line (whitespace runs folded to one space), escaped like a body line."""
    return _line(" ".join(text.split()))


def inert_code(text: str) -> str:
    """Return ``text`` on one line as a code span whose fence no backtick run in it can close.

    Inside a code span nothing is Markdown or HTML; the fence is one backtick longer than the
    longest run in ``text``, padded with a space where ``text`` starts or ends with a backtick.
    """
    folded = " ".join(text.split())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", folded)), default=0) + 1)
    pad = " " if folded.startswith("`") or folded.endswith("`") else ""
    return f"{fence}{pad}{folded}{pad}{fence}"


def view_forms(body: str) -> list[str]:
    """Return the escaped form of each line of ``body`` that differs from the raw line, stripped.

    A view shows the escaped form; scrubs and leak checks that look for a record's text in a
    view look for these as well as the raw lines.
    """
    forms = []
    for raw, shown in zip(body.split("\n"), inert_lines(body), strict=True):
        if shown != raw and shown.strip():
            forms.append(shown.strip())
    return forms
