"""Bring the views in line with the gate after a withdrawal or an erasure, hand edits included.

Withdrawal must fail closed on every exposure (seed 000 §12.2; DESIGN.md §4 and §9: one gate
for recall, export and views), and an erasure must leave no erased text in a view (DESIGN.md
§7). :func:`refresh_views` is the one code path both take, under the Home's writer lock:

1. every view not edited by hand is rendered again (:func:`~agent_memory.jobs.views.render_held`),
   so withdrawn and erased records simply leave it;
2. in every view edited by hand (render leaves those alone), the erased text (``needles``) is
   replaced by the erasure marker (:func:`~agent_memory.governance.erasure.sanitize.replace_text`),
   and every line that carries a withdrawn record's id or text is removed
   (:func:`withdrawn_marks`, :func:`drop_lines`); the person's other lines stay byte for byte.

Invariant: when :func:`refresh_views` returns, no line of any view (``MEMORY.md``,
``index.md``, ``topics/*.md``) contains the id of a record the gate withdraws, nor one of its
body lines of :data:`~agent_memory.governance.erasure.sanitize.MIN_TEXT_BYTES` bytes or more, nor is
any line (list marker aside) equal to a shorter body line of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_memory.governance.erasure.sanitize import MIN_TEXT_BYTES, replace_text
from agent_memory.governance.gate import Gate
from agent_memory.home import Home
from agent_memory.jobs.files import read_bytes, replace_bytes
from agent_memory.jobs.inert import view_forms
from agent_memory.jobs.views import RenderResult, check_views, render_held, view_files
from agent_memory.records.record import MemoryRecord

__all__ = ["ViewRefresh", "WithdrawnMarks", "drop_lines", "refresh_views", "withdrawn_marks"]


@dataclass(frozen=True, slots=True)
class WithdrawnMarks:
    """What identifies a withdrawn record's line in a view.

    Attributes:
        ids: Record ids (``mem:…``); a line containing one is dropped.
        texts: Body lines of at least ``MIN_TEXT_BYTES`` bytes (UTF-8), stripped, raw and as
            a view shows them (:func:`~agent_memory.jobs.inert.view_forms`); a line
            containing one is dropped.
        short: Shorter body lines, stripped; only a line that is exactly one of them (after
            a ``-``/``*`` list marker) is dropped, so short words elsewhere survive.
    """

    ids: frozenset[bytes] = frozenset()
    texts: frozenset[bytes] = frozenset()
    short: frozenset[bytes] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.ids or self.texts or self.short)


@dataclass(frozen=True, slots=True)
class ViewRefresh:
    """What :func:`refresh_views` did.

    Attributes:
        rendered: The render of the views not edited by hand, or ``None`` when the Home's
            views were never rendered (``render_views`` false).
        scrubbed: Views edited by hand that were rewritten (relative paths, name order).
        dropped_lines: Lines removed from them for withdrawn records.
        kept: Views edited by hand, left with the person's other edits.
    """

    rendered: RenderResult | None
    scrubbed: tuple[str, ...]
    dropped_lines: int
    kept: tuple[str, ...]

    def describe(self) -> str | None:
        """Return one sentence on the views edited by hand, or ``None`` when there were none."""
        if not self.kept and not self.scrubbed:
            return None
        written = self.rendered.written if self.rendered is not None else ()
        again = f"; re-rendered {', '.join(written)}" if written else ""
        if self.dropped_lines:
            where = ", ".join(self.scrubbed)
            took = f"removed {self.dropped_lines} line(s) showing withdrawn records from {where}"
        elif self.scrubbed:
            took = f"took erased text out of {', '.join(self.scrubbed)}"
        else:
            took = "none of them showed a withdrawn record"
        edited = ", ".join(sorted({*self.kept, *self.scrubbed}))
        return (
            f"views edited by hand ({edited}) were not re-rendered: {took}, keeping your other edits{again}"
        )


def withdrawn_marks(records: Iterable[MemoryRecord], gate: Gate) -> WithdrawnMarks:
    """Return the marks of every record the gate withdraws (erasure tombstones excepted).

    Raises:
        LogError: The log's withdrawal controls cannot be read (the caller must not proceed).
    """
    view = gate.view()
    ids: set[bytes] = set()
    texts: set[bytes] = set()
    short: set[bytes] = set()
    for record in records:
        if record.redacted or view.is_exposed(record):
            continue
        ids.add(record.id.encode("utf-8"))
        # A view shows the escaped form of a body line (jobs.inert): look for both.
        for line in [*record.body.splitlines(), *view_forms(record.body)]:
            text = line.strip().encode("utf-8")
            if len(text) >= MIN_TEXT_BYTES:
                texts.add(text)
            elif text:
                short.add(text)
    return WithdrawnMarks(frozenset(ids), frozenset(texts), frozenset(short))


def drop_lines(data: bytes, marks: WithdrawnMarks) -> tuple[bytes, int]:
    """Return ``data`` without the lines that carry a mark, and how many lines went."""
    kept: list[bytes] = []
    dropped = 0
    for line in data.splitlines(keepends=True):
        stripped = line.strip()
        item = stripped[1:].strip() if stripped[:1] in (b"-", b"*") else stripped
        if (
            any(needle in line for needle in marks.ids)
            or any(needle in line for needle in marks.texts)
            or (stripped and (stripped in marks.short or item in marks.short))
        ):
            dropped += 1
        else:
            kept.append(line)
    return b"".join(kept), dropped


def refresh_views(
    home: Home,
    *,
    needles: Sequence[bytes] = (),
    erasure_id: str | None = None,
    render_views: bool = True,
    held: bool = False,
) -> ViewRefresh:
    """Re-render the views and scrub those edited by hand (see the module docstring).

    Args:
        home: The Home.
        needles: Erased texts to replace by the marker of ``erasure_id`` in views edited by
            hand (an erasure); empty for a withdrawal.
        erasure_id: The erasure the marker names; required with ``needles``.
        render_views: Render first; false for a Home whose views were never rendered, or
            when rendering failed: then every view file is scrubbed (which breaks the digest
            of a rendered one: later renders take it for a hand edit).
        held: The caller already holds the writer lock (an erasure); else it is taken here.

    Raises:
        ValueError: ``needles`` without ``erasure_id``.
        StoreError: A note or view cannot be read, or a view cannot be written.
        LogError: The log cannot be read: nothing is rendered or scrubbed (fail closed: the
            caller reports the error).
    """
    if needles and erasure_id is None:
        raise ValueError("erasing text from the views needs the erasure id for its marker")
    if held:
        return _refresh(home, needles, erasure_id, render_views)
    with home.writer_lock():
        return _refresh(home, needles, erasure_id, render_views)


def _refresh(home: Home, needles: Sequence[bytes], erasure_id: str | None, render_views: bool) -> ViewRefresh:
    root = home.root
    store = home.store()
    marks = withdrawn_marks(store.list(), Gate(home.log(), store))
    rendered = render_held(home) if render_views else None
    if rendered is not None:
        # Views edited by hand, and hand-made topic pages render neither writes nor removes.
        edited = [problem.path for problem in rendered.problems]
    else:
        # Nothing rendered: any view file may show what is now withdrawn or erased.
        edited = [path.relative_to(root).as_posix() for path in view_files(root)]
    hand = {problem.path for problem in check_views(home)} if rendered is None else set(edited)
    scrubbed: list[str] = []
    dropped = 0
    for name in edited:
        path = root / name
        changed = bool(needles) and erasure_id is not None and replace_text(path, needles, erasure_id)
        lost = _drop_from(path, marks)
        dropped += lost
        if changed or lost:
            scrubbed.append(name)
    kept = tuple(name for name in edited if name not in scrubbed and name in hand)
    return ViewRefresh(rendered, tuple(scrubbed), dropped, kept)


def _drop_from(path: Path, marks: WithdrawnMarks) -> int:
    if not marks or not path.is_file():
        return 0
    data = read_bytes(path)
    new, dropped = drop_lines(data, marks)
    if dropped:
        replace_bytes(path, new)
    return dropped
