"""Render the generated views ``MEMORY.md``, ``index.md`` and ``topics/*.md`` (seed 000 §8-§11, 003).

What each view may show (DESIGN.md §3, §7, §9):

- every view: records the withdrawal gate exposes (:class:`agent_memory.governance.gate.Gate`)
  that are not erasure tombstones, through the one function :func:`exposed`;
- ``MEMORY.md`` (HOT): only :func:`autoloaded` records: active, untainted or approved by a
  review event (:class:`~agent_memory.governance.review_book.ReviewBook`), not rejected, not marked stale, not
  a flagged rule; filled in :func:`~agent_memory.jobs.pages.hot_order` (rules, procedures and
  preferences first, then state, then other knowledge; newest valid time first; id) with whole
  records while the bodies fit the token budget (4 characters per token, seed 001). A tainted,
  unreviewed record never reaches it;
- topic pages group records deterministically by :func:`~agent_memory.jobs.topics.topic_of`
  (first tag; else a state record's subject prefix, ``host:staging`` → ``host``; else the
  type); quarantined records appear there marked, superseded and archived ones as history.

Invariants: rendering reads only ``notes/``, the log and the ``archive/`` listing, never a
clock or a cache, so rendering twice gives identical bytes and every view can be deleted and
rebuilt. Each view ends with ``<!-- agent-memory:digest sha256=<hex> -->``, the SHA-256 of
the bytes before it; a view whose footer does not match (or that has none) was edited by
hand: :func:`check_views` reports it and :func:`render` leaves it as it is (writing every
other view) unless forced, naming it in :attr:`RenderResult.kept`. A topic page without any
footer that render no longer wants is never deleted. What a withdrawal or an erasure must
still take out of a view edited by hand is removed by :mod:`agent_memory.jobs.view_scrub`.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path
from typing import Any

from agent_memory.governance.gate import Gate, GateView
from agent_memory.governance.review_book import ReviewBook, ReviewState
from agent_memory.home import Home
from agent_memory.jobs.files import read_bytes, replace_bytes
from agent_memory.jobs.pages import (
    Entry,
    HotStats,
    category,
    hot_order,
    index_page,
    memory_page,
)
from agent_memory.jobs.topics import summarize, topic_of, topic_page
from agent_memory.recall.select import approx_tokens
from agent_memory.records.record import MemoryRecord, State
from agent_memory.stores.verified import read_verified

__all__ = [
    "DEFAULT_BUDGET_TOKENS",
    "FOOTER_LINE",
    "INDEX_MAX_LINES",
    "Entry",
    "RenderResult",
    "ViewProblem",
    "autoloaded",
    "build_views",
    "check_views",
    "exposed",
    "render",
    "render_held",
    "seal",
    "view_files",
]

DEFAULT_BUDGET_TOKENS = 1000
"""Default token budget of ``MEMORY.md`` (record bodies, 4 characters per token)."""
INDEX_MAX_LINES = 200
"""``index.md`` never exceeds this many lines before its footer (seed 000 §10)."""

FOOTER_LINE = re.compile(rb"^<!-- agent-memory:digest sha256=([0-9a-f]{64}) -->\n", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class ViewProblem:
    """A generated view that is not what render wrote.

    Attributes:
        path: Path relative to the Home root.
        detail: ``edited by hand…`` or ``not written by render…``.
    """

    path: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}: {self.detail}"


@dataclass(frozen=True, slots=True)
class RenderResult:
    """What :func:`render` did (or, with ``check``, would have to refuse).

    Attributes:
        written: Views whose bytes changed, relative paths in name order.
        unchanged: Views already identical to what render produced.
        removed: Topic pages no record maps to any more (render had written them).
        problems: Views edited by hand (overwritten only when forced), and hand-made topic
            pages render leaves alone.
        kept: Views edited by hand that render did not write (or remove) because it was
            not forced: every other view was written.
        shown: Records in ``MEMORY.md``.
        over_budget: Autoloadable records left out of ``MEMORY.md`` by the budget.
        used_tokens: Tokens of the bodies in ``MEMORY.md``.
        refused: Records left out of every view because their note does not parse or
            verify (:func:`~agent_memory.stores.verified.read_verified`), one line each.
    """

    written: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    problems: tuple[ViewProblem, ...] = ()
    kept: tuple[str, ...] = ()
    shown: int = 0
    over_budget: int = 0
    used_tokens: int = 0
    refused: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Return the CLI's ``--json`` shape."""
        return {
            "written": list(self.written),
            "unchanged": list(self.unchanged),
            "removed": list(self.removed),
            "problems": [str(problem) for problem in self.problems],
            "kept": list(self.kept),
            "memory": {"shown": self.shown, "over_budget": self.over_budget, "used_tokens": self.used_tokens},
            "refused": list(self.refused),
        }


def exposed(record: MemoryRecord, gate: GateView) -> bool:
    """Return whether ``record`` may appear in any generated view (DESIGN.md §7).

    The single exposure check of the views: not an erasure tombstone, and not withdrawn
    according to the withdrawal gate (seed 000 §12.2; a withdrawn scope is absent from views).
    """
    return not record.redacted and gate.is_exposed(record)


def autoloaded(entry: Entry) -> bool:
    """Return whether an (exposed) entry may be autoloaded into ``MEMORY.md``.

    Active, usable (:func:`~agent_memory.jobs.pages.category` ``current``: not quarantined,
    rejected, stale, disputed or a flagged rule) and a review state of ``none`` or
    ``approved``; so a tainted record needs an approval event first (DESIGN.md §2 "trust").
    """
    return (
        entry.record.state is State.ACTIVE
        and category(entry) == "current"
        and entry.review in ("none", "approved")
        and not entry.review.stale
    )


def build_views(
    records: Iterable[MemoryRecord],
    review_of: Callable[[MemoryRecord], ReviewState],
    is_exposed: Callable[[MemoryRecord], bool],
    *,
    zone: tzinfo,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    archive_files: Sequence[str] = (),
) -> tuple[dict[str, str], HotStats]:
    """Return every view's text (sealed with its digest footer) by relative path, and MEMORY.md's numbers.

    Args:
        records: The latest version of every record.
        review_of: The review state of a record.
        is_exposed: The view gate (:func:`exposed` bound to a gate view).
        zone: The Home's time zone (dates are local days).
        budget_tokens: ``MEMORY.md`` budget, ≥ 1 (tokens, 4 characters each).
        archive_files: Names of the files in ``archive/``, for the index.

    Raises:
        ValueError: ``budget_tokens`` below 1.
    """
    if budget_tokens < 1:
        raise ValueError(f"budget_tokens must be at least 1, got {budget_tokens}")
    entries = [
        Entry(record, review_of(record), topic_of(record))
        for record in sorted(records, key=lambda r: r.id)
        if is_exposed(record)
    ]
    chosen, used, over = [], 0, 0
    for entry in hot_order(e for e in entries if autoloaded(e)):
        cost = approx_tokens(entry.record)
        if used + cost <= budget_tokens:
            chosen.append(entry)
            used += cost
        else:
            over += 1
    stats = HotStats(
        shown=len(chosen),
        budget_tokens=budget_tokens,
        used_tokens=used,
        over_budget=over,
        cleanup=sum(1 for e in entries if category(e) == "cleanup"),
        review=sum(1 for e in entries if category(e) == "review"),
    )
    by_topic: dict[str, list[Entry]] = defaultdict(list)
    for entry in entries:
        by_topic[entry.topic].append(entry)
    summaries = [summarize(slug, by_topic[slug], zone) for slug in sorted(by_topic)]
    views = {"MEMORY.md": memory_page(chosen, stats, zone=zone)}
    views["index.md"] = index_page(
        entries, summaries, zone=zone, archive_files=sorted(archive_files), max_lines=INDEX_MAX_LINES
    )
    for summary in summaries:
        views[summary.path] = topic_page(summary, by_topic[summary.slug], zone=zone)
    return {path: seal(text) for path, text in sorted(views.items())}, stats


def seal(text: str) -> str:
    """Return ``text`` (ending in a newline) followed by its digest footer line."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"{text}<!-- agent-memory:digest sha256={digest} -->\n"


def check_views(home: Home) -> list[ViewProblem]:
    """Report every view in the Home that render did not write as it stands (read-only).

    A fresh Home's placeholder ``MEMORY.md`` counts as written by render.
    """
    problems = []
    for path in view_files(home.root):
        problem = _problem(home.root, path)
        if problem is not None:
            problems.append(problem)
    return problems


def render(
    home: Home, *, force: bool = False, budget_tokens: int = DEFAULT_BUDGET_TOKENS, check: bool = False
) -> RenderResult:
    """Write the views of the Home from its notes and log (seed 000 §8-§11; DESIGN.md §5 "Views").

    Every view not edited by hand is written (or, for an obsolete topic page, removed); a
    view edited by hand is left as it is, unless ``force``, and named in
    :attr:`RenderResult.kept` and :attr:`RenderResult.problems`. Takes the writer lock.

    Args:
        home: The Home.
        force: Overwrite (or remove) views edited by hand too; their edits are lost.
        budget_tokens: ``MEMORY.md`` budget (tokens, 4 characters each), ≥ 1.
        check: Write nothing; report what differs and which views were edited.

    Raises:
        StoreError: A note file or a view cannot be read, or a write failed.
        LogError: The log (review events, withdrawal controls) cannot be read; the gate
            fails closed and nothing is written.
        ValueError: ``budget_tokens`` below 1.
    """
    with home.writer_lock():
        return render_held(home, force=force, budget_tokens=budget_tokens, check=check)


def render_held(
    home: Home, *, force: bool = False, budget_tokens: int = DEFAULT_BUDGET_TOKENS, check: bool = False
) -> RenderResult:
    """:func:`render` for a caller that already holds the Home's writer lock (same arguments and errors)."""
    root = home.root
    store = home.store()
    # A log cut below its signed checkpoint exposes nothing: views are autoloaded (issue 19).
    view = Gate(home.log(), store, witness=home.witness()).view()
    reviews = ReviewBook(home.log())
    archive = root / "archive"
    files = sorted(p.name for p in archive.glob("*.md")) if archive.is_dir() else []
    reading = read_verified(store, home_signer=home.signer(), trusted=home.settings.trusted_signers)
    views, stats = build_views(
        reading.records,
        reviews.state_of,
        lambda record: exposed(record, view),
        zone=home.settings.zone,
        budget_tokens=budget_tokens,
        archive_files=files,
    )
    existing = {str(p.relative_to(root)): p for p in view_files(root)}
    obsolete = sorted(name for name in existing if name.startswith("topics/") and name not in views)
    problems = [p for p in (_problem(root, existing[name]) for name in sorted(existing)) if p is not None]
    blocking = {
        p.path for p in problems if p.path in views or (p.path in obsolete and _sealed(existing[p.path]))
    }
    kept = set() if force or check else blocking
    written, unchanged = [], []
    for name, text in views.items():
        data = text.encode("utf-8")
        if name in existing and read_bytes(existing[name]) == data:
            unchanged.append(name)
            continue
        if name in kept:
            continue
        written.append(name)
        if not check:
            replace_bytes(root / name, data)
    removed = [
        name
        for name in obsolete
        if _problem(root, existing[name]) is None or (force and _sealed(existing[name]))
    ]
    if not check:
        for name in removed:
            existing[name].unlink(missing_ok=True)
    return RenderResult(
        written=tuple(written),
        unchanged=tuple(unchanged),
        removed=tuple(removed),
        problems=tuple(_left(p) if p.path in kept else p for p in problems),
        kept=tuple(sorted(kept)),
        shown=stats.shown,
        over_budget=stats.over_budget,
        used_tokens=stats.used_tokens,
        refused=tuple(str(refusal) for refusal in reading.refused),
    )


def _left(problem: ViewProblem) -> ViewProblem:
    return ViewProblem(
        problem.path, f"{problem.detail}; left as it is (render --force overwrites it, losing the edit)"
    )


def view_files(root: Path) -> list[Path]:
    """Return the view files present under ``root``: ``MEMORY.md``, ``index.md``, ``topics/*.md``."""
    paths = [root / "MEMORY.md", root / "index.md"]
    topics = root / "topics"
    if topics.is_dir():
        paths += sorted(topics.glob("*.md"))
    return [p for p in paths if p.is_file()]


def _problem(root: Path, path: Path) -> ViewProblem | None:
    name = str(path.relative_to(root))
    data = read_bytes(path)
    if name == "MEMORY.md" and data == _placeholder():
        return None
    footers = list(FOOTER_LINE.finditer(data))
    if not footers:
        return ViewProblem(name, "not written by render (no digest footer): a hand-made file or a hand edit")
    last = footers[-1]
    if last.end() != len(data):
        return ViewProblem(name, "edited by hand: text after the digest footer")
    if hashlib.sha256(data[: last.start()]).hexdigest() != last[1].decode("ascii"):
        return ViewProblem(name, "edited by hand since render wrote it (the digest footer no longer matches)")
    return None


def _sealed(path: Path) -> bool:
    """Whether render wrote this file at some time (it has a footer line, matching or not)."""
    return FOOTER_LINE.search(read_bytes(path)) is not None


def _placeholder() -> bytes:
    # The MEMORY.md `agent-memory init` writes before the first render: generated, not hand-made.
    from agent_memory.home import MEMORY_MD_PLACEHOLDER

    return MEMORY_MD_PLACEHOLDER.encode("utf-8")
