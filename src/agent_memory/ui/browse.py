"""What the browse page and a record's page show: filtered, paged lists, recall, and one record in full.

Reads only, through the porcelain: the latest version of every readable record
(:meth:`~agent_memory.search.catalog.IndexCatalog.readable_records`, the reader recall and the
views use), the withdrawal gate's view, review states from the log
(:class:`~agent_memory.governance.review_book.ReviewBook`) and :meth:`Memory.recall
<agent_memory.recall.service.Recall.recall>` itself for the search box, so the page
ranks exactly as ``agent-memory recall`` does and shows the same scores and reasons.

Invariants: a filter value outside its vocabulary is refused by :class:`Filters` naming the
field (as click refuses a bad ``--state``); a search from the page does not touch salience (a
person looking is not the agent using a memory); withdrawn records are listed but marked, as
``agent-memory list`` marks them.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, overload

from agent_memory.errors import RecordError
from agent_memory.governance.review_book import REVIEW_STATES
from agent_memory.log.fold import log_head, one_pass
from agent_memory.records.record import Kind, MemoryRecord, RecordType, State
from agent_memory.ui.trust import Trust, trust_of

if TYPE_CHECKING:
    from agent_memory.governance.gate import GateView
    from agent_memory.governance.review_book import ReviewBook
    from agent_memory.log.base import LogEntry
    from agent_memory.memory import Memory
    from agent_memory.ui.latest import LatestRecords

__all__ = [
    "INDEX_BEHIND",
    "NOTE_CHANGED",
    "PAGE_SIZE",
    "Dispute",
    "Filters",
    "Listing",
    "RecordPage",
    "Row",
    "Version",
    "browse",
    "disputes",
    "record_page",
    "version_diff",
    "wire_lines",
]

PAGE_SIZE = 50
"""Rows per page."""
NOTE_CHANGED = (
    "its note changed on disk after the page read it (edited by hand, or by a tool that "
    "does not log); run agent-memory sync to make the edit a new version, then reload"
)
"""A listed record read from the page's list, older than its note (:meth:`LatestRecords.stale`)."""
INDEX_BEHIND = (
    "the search index is older than its note (the note changed or appeared after the index last "
    "read it), so search ranks it by its old text or misses it; run agent-memory sync if it was "
    "edited by hand, and the next search brings the index up to date"
)
"""A record the search index holds at an older version, or not yet (:meth:`IndexCatalog.behind`)."""
SEARCH_LIMIT = 50
"""At most this many records from one search (``recall --k``)."""
SEARCH_BUDGET_TOKENS = 100_000
"""The search box's token budget: large, so the page shows the ranking rather than a prompt's cut."""

_CHOICES: dict[str, tuple[str, ...]] = {
    "kind": tuple(k.value for k in Kind),
    "type": tuple(t.value for t in RecordType),
    "state": tuple(s.value for s in State),
    "review": REVIEW_STATES,
}


@dataclass(frozen=True, slots=True)
class Filters:
    """The browse page's filters; every field ``""`` means "any".

    Attributes:
        q: The recall query (search); empty lists records newest first.
        kind: ``state`` or ``knowledge``.
        type: ``fact``, ``episode``, ``procedure`` or ``rule``.
        state: ``active``, ``transitional``, ``superseded`` or ``archived``.
        namespace: Exact namespace (``default``, ``user:…``).
        tag: A tag the record carries.
        taint: A taint label the record carries; ``none`` for untainted records.
        review: A review state word (``quarantined``, ``approved``, …).
        page: 1-based page number.
    """

    q: str = ""
    kind: str = ""
    type: str = ""
    state: str = ""
    namespace: str = ""
    tag: str = ""
    taint: str = ""
    review: str = ""
    page: int = 1

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> Filters:
        """Read the filters from query parameters.

        Raises:
            RecordError: A value outside its field's vocabulary or a page that is not a
                positive number (``field`` names the parameter).
        """
        values = {name: params.get(name, "").strip() for name in ("q", *_TEXT_FIELDS)}
        for name, allowed in _CHOICES.items():
            if values[name] and values[name] not in allowed:
                raise RecordError(f"must be one of {', '.join(allowed)}, got {values[name]!r}", field=name)
        raw_page = params.get("page", "1").strip() or "1"
        if not raw_page.isdigit() or int(raw_page) < 1:
            raise RecordError(f"must be a positive whole number, got {raw_page!r}", field="page")
        return cls(page=int(raw_page), **values)

    def query(self, **changes: Any) -> str:
        """Return these filters as a query string (``changes`` replace fields), without empty ones."""
        from urllib.parse import urlencode

        values = {name: getattr(self, name) for name in ("q", *_TEXT_FIELDS, "page")}
        values.update(changes)
        return urlencode({k: v for k, v in values.items() if v not in ("", 1, None)})

    @property
    def any(self) -> bool:
        """Whether any filter but ``q`` is set."""
        return any(getattr(self, name) for name in _TEXT_FIELDS)

    def matches(self, record: MemoryRecord, review: Callable[[MemoryRecord], str]) -> bool:
        """Return whether ``record`` passes every filter but ``q``; ``review`` gives its review state."""
        taint = record.taint or ()
        return (
            (not self.kind or record.effective_kind.value == self.kind)
            and (not self.type or record.type.value == self.type)
            and (not self.state or record.state.value == self.state)
            and (not self.namespace or record.effective_namespace == self.namespace)
            and (not self.tag or self.tag in record.tags)
            and (not self.taint or (not taint if self.taint == "none" else self.taint in taint))
            and (not self.review or review(record) == self.review)
        )


_TEXT_FIELDS = ("kind", "type", "state", "namespace", "tag", "taint", "review")


@dataclass(frozen=True, slots=True)
class Row:
    """One listed record.

    Attributes:
        record: Its latest version.
        review: Its review state word.
        withdrawn: Why the withdrawal gate hides it, or ``""`` when it is exposed.
        score: Its recall score (searches only).
        reasons: Why recall included it (searches only).
        trust: Why it is believed or not (:func:`agent_memory.ui.trust.trust_of`).
        stale: Why what is shown is older than its note, and what to run; ``""`` when current.
    """

    record: MemoryRecord
    review: str
    withdrawn: str = ""
    score: float | None = None
    reasons: tuple[str, ...] = ()
    trust: Trust | None = None
    stale: str = ""


@dataclass(frozen=True, slots=True)
class Listing:
    """One page of the browse list.

    Attributes:
        rows: The records of this page.
        total: How many records matched (all pages).
        filters: The filters asked for.
        pages: How many pages there are (at least 1).
        notes: Recall's notes for a search (e.g. why nothing matched).
        namespaces: Every namespace seen, for the filter's choices.
        tags: Every tag seen (up to 200, most used first).
        taints: Every taint label seen.
    """

    rows: tuple[Row, ...]
    total: int
    filters: Filters
    pages: int
    notes: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    taints: tuple[str, ...] = ()


def browse(
    memory: Memory,
    reviews: ReviewBook,
    filters: Filters,
    latest: LatestRecords,
    *,
    page_size: int = PAGE_SIZE,
) -> Listing:
    """Return the page of records ``filters`` asks for: recall's ranking for a query, else newest first.

    The list comes from ``latest`` (kept in step without reading every note again). A search
    asks :meth:`Memory.recall <agent_memory.recall.service.Recall.recall>` for up to
    :data:`SEARCH_LIMIT` records (history and archived records too when the state filter asks
    for them), without touching salience, then applies the other filters.

    Raises:
        LogError: The log (review events, withdrawal controls) cannot be read.
        SearchError: The query cannot be searched (as ``recall`` would report).
    """
    with one_pass():  # every review state from one reading of the log's head
        return _browse(memory, reviews, filters, latest, page_size)


def _browse(
    memory: Memory, reviews: ReviewBook, filters: Filters, latest: LatestRecords, page_size: int
) -> Listing:
    view = memory.gate.view()
    records = latest.current()
    notes: tuple[str, ...] = ()
    if filters.q:
        result = memory.recall(
            filters.q,
            budget_tokens=SEARCH_BUDGET_TOKENS,
            k=SEARCH_LIMIT,
            include_history=filters.state == State.SUPERSEDED.value,
            include_archived=filters.state == State.ARCHIVED.value,
            namespace=filters.namespace or None,
            touch=False,
        )
        notes = result.notes
        review_of = {item.record.id: item.review for item in result.records}
        matched = [item for item in result.records if filters.matches(item.record, lambda r: review_of[r.id])]
        total = len(matched)
        pages = max(1, -(-total // page_size))
        start = (min(filters.page, pages) - 1) * page_size
        shown = matched[start : start + page_size]
        behind = memory.catalog.behind(item.record.id for item in shown)
        found = [
            _row(memory, view, item.record, item.review, INDEX_BEHIND if item.record.id in behind else "")
            for item in shown
        ]
        found = [
            replace(row, score=item.score, reasons=item.reasons)
            for row, item in zip(found, shown, strict=True)
        ]
    else:
        chosen = _selection(memory, reviews, filters, latest)
        total = len(chosen)
        pages = max(1, -(-total // page_size))
        start = (min(filters.page, pages) - 1) * page_size
        page_of = chosen[start : start + page_size]
        changed = latest.stale(r.id for r in page_of)
        found = [
            _row(memory, view, r, reviews.state_of(r), NOTE_CHANGED if r.id in changed else "")
            for r in page_of
        ]
    namespaces, tags, taints = latest.derived(("vocabulary",), lambda: _words(records))
    return Listing(tuple(found), total, filters, pages, notes, namespaces, tags, taints)


def _selection(
    memory: Memory, reviews: ReviewBook, filters: Filters, latest: LatestRecords
) -> Sequence[MemoryRecord]:
    """Return the records passing ``filters`` (but ``q``), newest first, worked out once per change.

    Paging through one filtered list must not test every record on every page (at 100k
    records a review filter is a review-state lookup per record: most of a second), so the
    list is kept by ``latest`` until its records change, per log head (review states move
    only with the log) and filter combination.
    """
    records = latest.current()
    if not filters.any:
        return _Newest(records)
    head = log_head(memory.log)
    key = ("selection", head.seq if head is not None else 0, *(getattr(filters, n) for n in _TEXT_FIELDS))

    def select() -> list[MemoryRecord]:
        # Only a tainted record can be quarantined: the cheap test first.
        candidates = (r for r in records if r.taint) if filters.review == "quarantined" else iter(records)
        found = [r for r in candidates if filters.matches(r, reviews.state_of)]
        found.reverse()
        return found

    return latest.derived(key, select)


class _Newest(Sequence[MemoryRecord]):
    """``records`` newest first, without copying them (a page slices 50 of 100k)."""

    def __init__(self, records: Sequence[MemoryRecord]) -> None:
        self._records = records

    def __len__(self) -> int:
        return len(self._records)

    @overload
    def __getitem__(self, index: int) -> MemoryRecord: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[MemoryRecord]: ...
    def __getitem__(self, index: int | slice) -> MemoryRecord | Sequence[MemoryRecord]:
        if isinstance(index, slice):
            return [self._records[-1 - i] for i in range(*index.indices(len(self._records)))]
        return self._records[-1 - index]


def _row(memory: Memory, view: GateView, record: MemoryRecord, review: str, stale: str) -> Row:
    withdrawn = _withdrawn(view, record)
    trust = trust_of(record, review, withdrawn, signers=memory.catalog.signers)
    return Row(record, str(review), withdrawn, trust=trust, stale=stale)


def _withdrawn(view: GateView, record: MemoryRecord) -> str:
    exposure = view.check(record)
    return "" if exposure.exposed else exposure.reason


def _words(records: Sequence[MemoryRecord]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    namespaces: set[str] = set()
    tags: dict[str, int] = {}
    taints: set[str] = set()
    for record in records:
        namespaces.add(record.effective_namespace)
        for tag in record.tags:
            tags[tag] = tags.get(tag, 0) + 1
        taints.update(record.taint or ())
    common = sorted(tags, key=lambda t: (-tags[t], t))[:200]
    return tuple(sorted(namespaces)), tuple(sorted(common)), tuple(sorted(taints))


# ---------------------------------------------------------------------- one record


@dataclass(frozen=True, slots=True)
class Version:
    """One version of a record and the diff from the version before it.

    Attributes:
        number: 1-based version number.
        record: The version.
        diff: Unified diff lines (``field: JSON value``) from the previous version; the
            first version's is empty.
    """

    number: int
    record: MemoryRecord
    diff: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RecordPage:
    """Everything a record's page shows.

    Attributes:
        record: The latest version.
        review: Its review state word (``quarantined``, ``approved``, …).
        exposure: Why the withdrawal gate hides it (``""`` when exposed).
        versions: Every version, oldest first, with diffs.
        partners: ``(relation, record id)``: what it supersedes, what supersedes it, the
            other side of its dispute.
        controls: Withdrawals and reinstatements whose scope names it, its namespace or a
            source of it, oldest first, each with ``in_force``.
        events: Every log entry naming it, oldest first (reviews, supersedes, erasures…).
        receipts: The erasure receipts (log details of ``erase`` events) naming it.
        salience: ``{"count", "last", "boost"}``: recall touches, the last one (``None``
            when never), and the recall multiplier in [1, 2) they give.
        pending: True for a record waiting in ``proposals/pending`` (not stored yet).
        trust: Why it is believed or not (:func:`agent_memory.ui.trust.trust_of`).
        stale: Why the search index is older than its note, and what to run; ``""`` when
            the index holds this version (:data:`INDEX_BEHIND`).
    """

    record: MemoryRecord
    review: str
    exposure: str
    versions: tuple[Version, ...]
    partners: tuple[tuple[str, str], ...]
    controls: tuple[dict[str, Any], ...]
    events: tuple[LogEntry, ...]
    receipts: tuple[dict[str, Any], ...]
    salience: dict[str, Any] = field(default_factory=dict)
    pending: bool = False
    trust: Trust | None = None
    stale: str = ""


def wire_lines(record: MemoryRecord) -> list[str]:
    """Return ``record``'s wire fields as ``field: JSON value`` lines, sorted (as proposals' diffs are)."""
    wire = record.to_wire()
    return [f"{key}: {json.dumps(wire[key], ensure_ascii=False, sort_keys=True)}" for key in sorted(wire)]


def version_diff(before: MemoryRecord | None, after: MemoryRecord) -> tuple[str, ...]:
    """Return the unified diff lines from ``before`` (or nothing) to ``after``, header lines dropped."""
    lines = difflib.unified_diff(wire_lines(before) if before else [], wire_lines(after), lineterm="", n=0)
    return tuple(line for line in lines if not line.startswith(("---", "+++")))


def record_page(memory: Memory, reviews: ReviewBook, record_id: str) -> RecordPage:
    """Return what the page of ``record_id`` shows; a pending record is shown as it waits.

    Raises:
        RecordNotFound: Neither a stored nor a pending record has that id.
        StoreError: Its notes cannot be read (the message names the file).
        LogError: The log cannot be read.
    """
    from agent_memory.errors import RecordNotFound

    try:
        history = memory.history(record_id)
    except RecordNotFound:
        held = memory.pending.find(record_id)
        if held is None:
            raise
        trust = trust_of(held, "pending", signers=memory.catalog.signers)
        return RecordPage(held, "pending", "", (Version(1, held, ()),), (), (), (), (), {}, True, trust)
    versions = tuple(
        Version(n, v, version_diff(history[n - 2] if n > 1 else None, v)) for n, v in enumerate(history, 1)
    )
    record = history[-1]
    partners: list[tuple[str, str]] = []
    for version in history:
        if version.supersedes and ("supersedes", version.supersedes) not in partners:
            partners.append(("supersedes", version.supersedes))
    if record.superseded_by:
        partners.append(("superseded by", record.superseded_by))
    if record.transition is not None:
        partners += [("disputed with", side) for side in record.transition.sides if side != record.id]
    events = tuple(e for e in memory.log.entries() if record.id in e.record_ids)
    receipts = tuple(dict(e.details) for e in events if str(e.action) == "erase")
    touch = memory.salience.get(record.id)
    salience: dict[str, Any] = {"count": 0, "last": None, "boost": 1.0}
    if touch is not None:
        salience = {
            "count": touch.touches,
            "last": touch.last_touched,
            "boost": memory.salience.boost(record.id),
        }
    view = memory.gate.view()
    review, withdrawn = reviews.state_of(record), _withdrawn(view, record)
    return RecordPage(
        record,
        str(review),
        withdrawn,
        versions,
        tuple(partners),
        _controls_of(memory, record),
        events,
        receipts,
        salience,
        trust=trust_of(record, review, withdrawn, signers=memory.catalog.signers),
        stale=INDEX_BEHIND if memory.catalog.behind([record.id]) else "",
    )


def _controls_of(memory: Memory, record: MemoryRecord) -> tuple[dict[str, Any], ...]:
    from agent_memory.governance.controls import covers

    state = memory.gate.state()
    in_force = {c.withdrawal_id for c in state.in_force()}
    refs = [r for r in (record.provenance.ref, *(record.sources or ())) if r]
    found: list[dict[str, Any]] = []
    for control in state.controls:
        scope = control.scope
        if (
            record.id in scope.memory_item_ids
            or record.effective_namespace in scope.namespaces
            or any(covers(s, r) for s in (*scope.source_or_run_refs, *scope.archive_refs) for r in refs)
        ):
            found.append(
                {
                    "control": control,
                    "in_force": control.action == "withdraw" and control.withdrawal_id in in_force,
                }
            )
    return tuple(found)


@dataclass(frozen=True, slots=True)
class Dispute:
    """One open dispute: two records sharing a transition block.

    Attributes:
        sides: The two records, in the block's order.
        reason: The block's reason.
        reviews: The review state word of each side, in the same order.
    """

    sides: tuple[MemoryRecord, ...]
    reason: str
    reviews: tuple[str, ...] = field(default=())


def disputes(records: Iterable[MemoryRecord], reviews: ReviewBook) -> list[Dispute]:
    """Return the open disputes among ``records`` (both sides ``transitional``), by their first side's id."""
    by_pair: dict[tuple[str, str], list[MemoryRecord]] = {}
    for record in records:
        if record.transition is not None and record.state is State.TRANSITIONAL:
            by_pair.setdefault(record.transition.sides, []).append(record)
    found = []
    for pair, records in sorted(by_pair.items()):
        ordered = tuple(sorted(records, key=lambda r: pair.index(r.id) if r.id in pair else 2))
        found.append(
            Dispute(
                ordered,
                ordered[0].transition.reason if ordered[0].transition else "",
                tuple(str(reviews.state_of(r)) for r in ordered),
            )
        )
    return found
