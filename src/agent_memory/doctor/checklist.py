"""Seed 000 §21's checklist and seed 003's MUSTs, each judged from a Home (for ``agent-memory doctor``).

:class:`~agent_memory.doctor.facts.HomeFacts` reads the Home once (notes, log, views, inbox,
archive, conventions); each verdict function turns those facts into ``pass``, ``fail`` or
``not-applicable`` with a reason. Items 9, 12, 14 and 15 are judged in :mod:`.decisions`,
13, 17, 18 and 20 in :mod:`.influence`; every item is judged from what the Home holds. Where
part of an item is a property of the code that no Home can show (the words of a forget
receipt, a migration's target), its reason says so and names the test that verifies it.

Invariant: read-only; damage (an unreadable note, a broken log) becomes a ``fail`` reason,
never an exception.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from agent_memory.doctor.decisions import (
    cleanup_plans,
    conventions_decided,
    policy_kept_pending,
    policy_proposals_governed,
)
from agent_memory.doctor.facts import FAIL, NA, PASS, HomeFacts, Verdict, read_text
from agent_memory.doctor.influence import (
    controls_travel,
    no_copies_to_withdraw,
    outcomes_beside_records,
    promoted_rules_traced,
)
from agent_memory.errors import AgentMemoryError
from agent_memory.records.record import Kind, MemoryRecord, State

__all__ = [
    "FAIL",
    "NA",
    "PASS",
    "HomeFacts",
    "Item",
    "checklist",
    "golden_count",
    "musts",
    "withdrawn_in_views",
]

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TOPIC_LINK = re.compile(r"^- (topics/[^\s]+\.md) — Read when: \S", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Item:
    """One checklist item or MUST and its verdict.

    Attributes:
        ref: Where it comes from: ``000 §21.11`` or ``003 MUST 3``.
        text: The requirement, shortened.
        status: ``pass``, ``fail`` or ``not-applicable``.
        reason: Why, from what was found (or the test module that verifies code behaviour).
    """

    ref: str
    text: str
    status: str
    reason: str

    def to_json(self) -> dict[str, str]:
        """Return ``{"ref", "text", "status", "reason"}``."""
        return {"ref": self.ref, "text": self.text, "status": self.status, "reason": self.reason}


def golden_count(f: HomeFacts) -> int:
    """Return how many questions ``golden.yaml`` holds (0 when it is missing or invalid)."""
    from agent_memory.doctor.golden import load_golden

    try:
        return len(load_golden(f.root / "golden.yaml"))
    except AgentMemoryError:
        return 0


def _verdict(ok: bool, yes: str, no: str) -> Verdict:
    return (PASS, yes) if ok else (FAIL, no)


def checklist(f: HomeFacts) -> list[Item]:
    """Judge seed 000 §21 items 1-21 from ``f`` (before any level applicability is applied)."""
    texts = (
        "a fresh session can locate the memory root",
        "the agent knows when to read index.md",
        "the agent can write a distilled note to the inbox (the seed's memory.md: inbox.md here)",
        "archive preserves what is distilled",
        "autodream does not delete existing knowledge",
        "index.md links to topics with clear triggers",
        "a topic page has source dates",
        "raw archive is not loaded by default",
        "review produces a cleanup plan before deletion",
        "a known high-risk rule still works in a fresh session",
        "every captured item has date, id, kind and Source; every state item a subject",
        "an agent-initiated Conventions change stays a proposal until a human decision",
        "an outcome is recorded without rewriting the source",
        "one outcome cannot change the memory constitution",
        "policy changes are reviewable proposals with references",
        "transient traces of other protocols are not persisted wholesale",
        "a bounded forget gives a §12.1 receipt",
        "an exploration that never entered Memory stays non-admitted",
        "a WithdrawalRecord excludes its scope until reinstated",
        "backup, export and migration keep withdrawal controls or fail closed",
        "an erasure reports every holder; lineage keeps no erased content",
    )
    verdicts = [
        _verdict(
            (f.root / "memory.toml").is_file(),
            f"memory.toml at {f.root}; found by --home, $AGENT_MEMORY_HOME or ./memory",
            "no memory.toml",
        ),
        _verdict(
            "index.md" in f.hot, "MEMORY.md tells when to read index.md", "MEMORY.md never mentions index.md"
        ),
        _inbox_writable(f),
        _archive_anchors(f),
        _nothing_deleted(f),
        _topic_links(f),
        _topic_dates(f),
        _archive_not_hot(f),
        cleanup_plans(f),
        _golden(f),
        _captured_schema(f),
        conventions_decided(f),
        outcomes_beside_records(f),
        policy_kept_pending(f),
        policy_proposals_governed(f),
        (NA, "agent-memory has no import path for other protocols' transient traces"),
        promoted_rules_traced(f),
        no_copies_to_withdraw(f),
        _withdrawals(f),
        controls_travel(f),
        _erasures(f),
    ]
    return [
        Item(f"000 §21.{n}", t, s, r) for n, (t, (s, r)) in enumerate(zip(texts, verdicts, strict=True), 1)
    ]


def _inbox_writable(f: HomeFacts) -> Verdict:
    # Seed 000 §21.3 means the capture inbox (the seed's memory.md, DESIGN.md §3's inbox.md),
    # not the generated MEMORY.md: an item can be appended and the inbox still parses.
    inbox = f.root / "inbox.md"
    if not inbox.is_file():
        return FAIL, "inbox.md (the seed's memory.md) is missing: capture has nowhere to append"
    if not os.access(inbox, os.W_OK):
        return FAIL, "inbox.md (the seed's memory.md) is not writable: capture cannot append to it"
    problems = [p for p in f.capture_errors if p.startswith("inbox.md")]
    if problems:
        return FAIL, "inbox.md does not parse, so a captured note would not be read: " + "; ".join(problems)
    return PASS, (
        "inbox.md (the seed's memory.md) is writable and parses; agent-memory capture appends a note "
        "to it in the §9 line format"
    )


def _archive_anchors(f: HomeFacts) -> Verdict:
    ids = {item.id for item in f.captured}
    refs = {r.id: r.provenance.ref or "" for r in f.records}
    cited = {rid: ref for rid, ref in refs.items() if ref.startswith("archive/")}
    lost = [f"{rid} cites {ref}" for rid, ref in cited.items() if ref.rsplit("#", 1)[-1] not in ids]
    if f.archive_problems or lost:
        return FAIL, "; ".join(f.archive_problems + lost)
    return PASS, f"archive/ matches its logged digests; {len(cited)} record(s) cite archive lines that exist"


def _nothing_deleted(f: HomeFacts) -> Verdict:
    if f.log_error:
        return FAIL, f"the log cannot be read: {f.log_error}"
    known = {r.id for r in f.records} | {p.record_id for p in f.store_problems if p.record_id}
    named = {rid for e in f.entries if e.action in ("put", "supersede", "archive") for rid in e.record_ids}
    gone = sorted(rid for rid in named if rid.startswith("mem:") and rid not in known)
    if gone:
        return FAIL, f"records named in the log are missing from notes/: {', '.join(gone)}"
    return PASS, f"every one of {len(named)} record(s) the log names is still in notes/"


def _topic_links(f: HomeFacts) -> Verdict:
    if not f.index:
        return FAIL, "index.md is missing: run agent-memory render"
    linked = set(_TOPIC_LINK.findall(f.index))
    pages = {f"topics/{name}" for name in f.topics}
    unlinked, dangling = sorted(pages - linked), sorted(linked - pages)
    if unlinked or dangling:
        return FAIL, f"topics not linked from index.md: {unlinked}; links to missing pages: {dangling}"
    return PASS, f"index.md links all {len(pages)} topic page(s), each with a 'Read when:' trigger"


def _topic_dates(f: HomeFacts) -> Verdict:
    if not f.topics:
        return NA, "no topic pages yet"
    undated = sorted(name for name, text in f.topics.items() if not _DATE.search(text.split("# ", 1)[-1]))
    if undated:
        return FAIL, f"topic pages without dated items: {', '.join(undated)}"
    return PASS, f"all {len(f.topics)} topic page(s) carry dated items"


def _archive_not_hot(f: HomeFacts) -> Verdict:
    leaked = [item.id for item in f.captured if item.raw and item.raw in f.hot]
    if leaked:
        return FAIL, f"MEMORY.md holds raw archive lines: {', '.join(leaked)}"
    return PASS, f"none of {len(f.captured)} captured line(s) appears verbatim in MEMORY.md"


def _golden(f: HomeFacts) -> Verdict:
    count = golden_count(f)
    if count:
        return (
            PASS,
            f"golden.yaml holds {count} question(s); `agent-memory golden` runs them in a fresh process",
        )
    return FAIL, "golden.yaml holds no question (or cannot be read)"


def _captured_schema(f: HomeFacts) -> Verdict:
    bad = list(f.capture_errors)
    # A tombstone of an authorized erasure keeps only its id and birth digest (seed 001, seed 000
    # §12.3): its source went with the content, and §21.21 judges it through its erasure receipt.
    erased = [r for r in f.records if r.redacted]
    held = [r for r in f.records if not r.redacted]
    bad += [f"{r.id}: no provenance source" for r in held if not (r.provenance.ref or r.sources)]
    bad += [
        f"{r.id}: state without subject" for r in held if r.effective_kind is Kind.STATE and not r.subject
    ]
    if bad:
        return FAIL, "; ".join(bad)
    tombstones = (
        f"; {len(erased)} erased record(s) are tombstones whose source was erased with them (see §21.21)"
        if erased
        else ""
    )
    return PASS, (
        f"{len(f.captured)} inbox/archive line(s) parse with date, id, kind and Source; "
        f"{len(held)} record(s) have a source and every state record a subject{tombstones}"
    )


def _withdrawals(f: HomeFacts) -> Verdict:
    from agent_memory.governance.gate import Gate

    if f.log_error:
        return FAIL, f"the withdrawal controls cannot be read: {f.log_error}"
    view = Gate(f.home.log(), f.home.store()).view()
    hidden = [r for r in f.records if not view.is_exposed(r)]
    leaked = withdrawn_in_views(hidden, f.view_texts())
    if leaked:
        return FAIL, f"withdrawn records appear in the views: {'; '.join(leaked)}"
    return PASS, (
        f"{len(view.in_force)} withdrawal(s) in force hide {len(hidden)} record(s), none in the views "
        f"(MEMORY.md, index.md, {len(f.topics)} topic page(s)); recall, export and consolidate "
        "consult the same gate, verified by the test suite: tests/governance/test_withdrawal.py"
    )


def _shown_forms(body: str) -> list[str]:
    """Return a body as written and as the views show it (escaped by :mod:`agent_memory.jobs.inert`)."""
    from agent_memory.jobs.inert import inert_inline, inert_lines

    return [body, " ".join(inert_lines(body)), inert_inline(body)]


def withdrawn_in_views(hidden: list[MemoryRecord], shown: str) -> list[str]:
    """Return one line per withdrawn record whose content or own item row is in ``shown``.

    Seed 000 §12.2 withdraws a scope's *influence*: its content must not be surfaced, while
    an id is a content-free stable identifier (the ``WithdrawalRecord`` itself names ids).
    So a record appears when its body text (whitespace folded; the first 60 characters,
    as long bodies are summarised; as written or escaped as the views show it) is in the
    views, or when a line carries its id other than as another record's ``superseded by
    <id>`` pointer (its own item row ends ``· <id>``; review rows start with it). The
    pointer of an exposed predecessor to a
    withdrawn successor is history of the predecessor, not the successor's content.

    Args:
        hidden: The records the withdrawal gate hides.
        shown: The text of every generated view joined.

    Returns:
        ``"<id>: its text"`` or ``"<id>: line N"`` (line number in ``shown``) per leak, in
        ``hidden`` order; empty when none appears.
    """
    folded = " ".join(shown.split())
    lines = shown.splitlines()
    leaks: list[str] = []
    for record in hidden:
        texts = {" ".join(form.split())[:60].rstrip() for form in _shown_forms(record.body)}
        if any(t and re.search(rf"(?<![\w]){re.escape(t)}", folded) for t in texts):
            leaks.append(f"{record.id}: its text")
            continue
        pointer = re.compile(rf"superseded by {re.escape(record.id)}(?![\w])")
        for number, line in enumerate(lines, 1):
            if record.id in pointer.sub("", line):
                leaks.append(f"{record.id}: line {number}")
                break
    return leaks


def _erasures(f: HomeFacts) -> Verdict:
    from agent_memory.governance.erasure.receipt import RESULTS

    if f.log_error:
        return FAIL, f"the erasure receipts cannot be read: {f.log_error}"
    events = [e for e in f.entries if e.action == "erase"]
    if not events:
        return (
            NA,
            "no erasure has been made here "
            "(its receipts are verified by the test suite: tests/governance/test_erasure.py)",
        )
    latest = {r.id: r for r in f.records}
    bad = []
    for event in events:
        holders = event.details.get("holders") or []
        if not holders or any(h.get("result") not in RESULTS for h in holders):
            bad.append(f"log seq {event.seq}: holders missing or with a result outside {RESULTS}")
        for rid in event.details.get("scope_refs") or []:
            record = latest.get(rid)
            if record is not None and not record.redacted:
                bad.append(f"{rid}: erased (log seq {event.seq}) but its latest version is not a tombstone")
    if bad:
        return FAIL, "; ".join(bad)
    return PASS, f"{len(events)} erasure receipt(s) list every holder; erased records are tombstones"


_RECORD_WRITES = frozenset({"put", "supersede", "transition", "archive", "intent"})
_MAINTENANCE_JOBS = frozenset({"consolidate", "distill", "decay"})


def job_writes(f: HomeFacts) -> list[str]:
    """Return every sign in the log that a maintenance job changed records on the live Home.

    Seed 003 MUST 5 and DESIGN.md §9 "What jobs may apply on their own: nothing": a job files
    proposals, and only ``accept`` (a ``review`` job) writes them. Read from what happened, not
    from configuration: a record write (``put``, ``supersede``, ``transition``, ``archive``, or
    an ``intent``) whose ``details.job`` names a maintenance job, and a ``consolidate`` event
    that counts an applied action (anything but decay's ``protect``). Each reason names the
    log seq.
    """
    found: list[str] = []
    for entry in f.entries:
        action, details = str(entry.action), entry.details
        job = str(details.get("job", ""))
        if action in _RECORD_WRITES and job in _MAINTENANCE_JOBS:
            found.append(f"log seq {entry.seq}: the {job} job wrote {action} on the live Home")
        elif action == "consolidate" and isinstance(details.get("actions"), dict):
            applied = sorted(k for k in details["actions"] if not str(k).endswith(":protect"))
            if applied:
                found.append(f"log seq {entry.seq}: consolidate applied {', '.join(applied)} without review")
    return found


def _jobs_only_propose(f: HomeFacts) -> Verdict:
    from agent_memory.jobs.branches import BRANCH_PREFIX, current_branch

    problems = job_writes(f) + f.archive_problems
    branch = current_branch(f.root)
    if branch is not None and branch.startswith(BRANCH_PREFIX):
        problems.append(f"the live Home is checked out on {branch}; maintenance branches are for review only")
    runs = f.actions["consolidate"] + f.actions["distill"]
    return _verdict(
        not problems,
        f"{runs} maintenance run(s) in the log changed no record on the live Home (each change a "
        "proposal that accept applied); archive/ matches its logged digests",
        "; ".join(problems),
    )


def _disposable_cache(f: HomeFacts) -> Verdict:
    # Behaviour, not configuration: what would deleting .cache/ lose? Only derived data may live
    # there; touch counts are state (what recall did) and a rebuild cannot make them again.
    if ".cache/" not in read_text(f.root / ".gitignore"):
        return FAIL, ".cache/ is not git-ignored: its indexes would be committed as if they were truth"
    stray = f.root / ".cache" / "salience.json"
    if stray.exists():
        return FAIL, (
            ".cache/salience.json holds touch counts, which a rebuild cannot make again: deleting .cache/ "
            "would change recall (the next open moves it to .state/)"
        )
    return PASS, (
        "indexes live in the git-ignored .cache/ with recipe and input digest, rebuilt by reindex or "
        "doctor --fix, and nothing there is state (touch counts are in .state/), so deleting .cache/ "
        "changes no recall result (tests/recall/test_cache_independence.py); views carry a digest footer"
    )


def musts(f: HomeFacts) -> list[Item]:
    """Judge seed 003's five MUSTs and its golden-tests SHOULD ("What the specification asks for")."""
    from agent_memory.governance.review_book import ReviewBook

    book = ReviewBook(f.home.log()) if not f.log_error else None
    tainted = [r for r in f.records if r.taint and (book is None or book.state_of(r) != "approved")]
    hot_leaks = [r.id for r in tainted if r.id in f.hot]
    ids = {r.id: r for r in f.records}
    old = [r for r in f.records if r.state is State.SUPERSEDED]
    # A resolved dispute retires the loser without the winner naming it: superseded_by is the link.
    broken = [r.id for r in old if r.superseded_by not in ids]
    texts = (
        "notes are readable without the Memory layer",
        "every derivative carries its recipe and inputs; an index is disposable",
        "tainted notes are not autoloaded before review",
        "a new fact replaces an old one with supersedes",
        "maintenance jobs only propose and never delete the raw journal",
        "every Home carries golden recall tests",
    )
    verdicts = [
        _verdict(
            not f.store_problems,
            f"{len(f.records)} note(s) are plain Markdown files in notes/",
            f"{len(f.store_problems)} unreadable note file(s)",
        ),
        _disposable_cache(f),
        _verdict(
            not hot_leaks,
            f"{len(tainted)} unreviewed tainted record(s), none in MEMORY.md",
            f"unreviewed tainted records in MEMORY.md: {', '.join(hot_leaks)}",
        ),
        _verdict(
            not broken,
            f"{len(old)} superseded record(s) kept, each naming its successor in superseded_by",
            f"superseded without a linked successor: {', '.join(broken)}",
        ),
        _jobs_only_propose(f),
        _golden(f),
    ]
    refs = [f"003 MUST {n}" for n in range(1, 6)] + ["003 SHOULD 1"]
    return [Item(ref, t, s, r) for ref, t, (s, r) in zip(refs, texts, verdicts, strict=True)]
