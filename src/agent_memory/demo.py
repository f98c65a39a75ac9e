"""The demo: the whole lifecycle of a Home, run on real input (issue 9 item 1; DESIGN.md §5).

:func:`run_demo` builds a fresh Home from a git repository (its latest commits and its
documentation) or from a LongMemEval / LoCoMo file, then walks the paths of DESIGN.md §5 in
order — capture and archive the inbox, consolidate, render the views, answer questions with
recall, a state supersede, a dispute and its resolution, a withdrawal and its reinstatement,
``doctor`` — printing what each step did, the equivalent command, and what it found.

Invariants: the input is bounded (at most :data:`MAX_COMMITS` commits, :data:`MAX_SESSIONS`
sessions per conversation, :data:`MAX_ITEMS` items) and the bound is printed; a step that does
not exist yet is announced as skipped, never imitated; every question printed with an
expected source is checked against the ranking actually returned.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_memory.errors import ConfigError
from agent_memory.home import Home
from agent_memory.importers import ImportReport, import_path
from agent_memory.jobs.views import render as render_views
from agent_memory.memory import Memory

__all__ = ["MAX_COMMITS", "MAX_ITEMS", "MAX_SESSIONS", "DemoResult", "Question", "detect_format", "run_demo"]

MAX_COMMITS = 200
"""Latest commits a repository demo imports."""
MAX_SESSIONS = 3
"""First sessions of each conversation (LoCoMo) or question haystack (LongMemEval) a dataset demo reads."""
MAX_ITEMS = 400
"""Items any demo imports at most (in input order), so it finishes well within a minute."""
TOP = 3
"""Records shown per question."""


@dataclass(frozen=True, slots=True)
class Question:
    """A question the demo asks, and the source anchor(s) a good answer comes from, if known."""

    text: str
    expected: tuple[str, ...] = ()


@dataclass(slots=True)
class DemoResult:
    """What a demo run did, for tests and ``--json``-like checks.

    Attributes:
        home: The Home built.
        imported: The import report.
        questions: Each question with the sources of its top records, in rank order.
        found: Questions whose expected source was among the top records.
        steps: Names of the steps run, in order; skipped ones read ``"<name>: skipped"``.
        seconds: Wall time of the run.
    """

    home: Path
    imported: ImportReport
    questions: list[tuple[Question, list[str]]] = field(default_factory=list)
    found: int = 0
    steps: list[str] = field(default_factory=list)
    seconds: float = 0.0


def detect_format(path: str) -> str:
    """Return ``locomo`` or ``longmemeval`` for a dataset file, judged by its first entry.

    Raises:
        ConfigError: The file is not a JSON list whose first entry has ``conversation``
            (LoCoMo) or ``haystack_sessions`` (LongMemEval).
    """
    from agent_memory.importers import load_json

    data = load_json(path)
    first = data[0] if isinstance(data, list) and data else None
    if isinstance(first, dict) and "conversation" in first:
        return "locomo"
    if isinstance(first, dict) and "haystack_sessions" in first:
        return "longmemeval"
    raise ConfigError("not a LoCoMo or LongMemEval file", path=path, hint="pass --dataset locomo.json")


def run_demo(
    home: str | os.PathLike[str] | None = None,
    *,
    repo: str | None = None,
    dataset: str | None = None,
    echo: Callable[[str], None] = print,
    on_step: Callable[[str], None] | None = None,
) -> DemoResult:
    """Build a Home from real input and walk its whole lifecycle, printing as it goes.

    The output ends with three lines: what was built (records, input, seconds, doctor's
    verdict), where it is (and its signing key), and the next three commands to try on it.

    Args:
        home: A new or empty folder for the Home (its key goes where ``init`` puts one:
            the user's config folder). When None, a scratch Home in a fresh temporary
            folder ``agent-memory-demo-…/home``, with its signing key beside it in that
            folder (``signing.key``), so removing the folder removes both and nothing is
            left in the config folder; it is kept so you can look at it, unless the input
            could not be read (then it is removed at once).
        repo: The git repository to import (default: the current directory) unless ``dataset``.
        dataset: A LoCoMo or LongMemEval JSON file to import instead of a repository.
        echo: Where each output line goes.
        on_step: Called with each step's title as it starts (the CLI's progress display).

    Returns:
        What was done (see :class:`DemoResult`).

    Raises:
        ConfigError: ``home`` is not empty, or ``dataset`` is not a known format.
        RecordError: The input cannot be read (not a git repository, not JSON).
    """
    started = time.perf_counter()
    fmt = detect_format(dataset) if dataset else "git"
    source = dataset if dataset else os.path.abspath(repo or ".")
    if home is not None:
        return _walk(Path(home), fmt, source, echo, started, on_step=on_step)
    scratch = Path(tempfile.mkdtemp(prefix="agent-memory-demo-"))
    try:
        result = _walk(
            scratch / "home", fmt, source, echo, started, key_file=scratch / "signing.key", on_step=on_step
        )
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    if result.imported.error is not None:
        shutil.rmtree(scratch, ignore_errors=True)  # a temporary Home with nothing in it
    return result


def _walk(
    root: Path,
    fmt: str,
    source: str,
    echo: Callable[[str], None],
    started: float,
    *,
    key_file: Path | None = None,
    on_step: Callable[[str], None] | None = None,
) -> DemoResult:
    """The steps of :func:`run_demo` in the Home folder ``root`` (same errors)."""
    step = _Steps(echo, on_step)
    step("Make a Home", f"agent-memory init {root}" + (f" --key-file {key_file}" if key_file else ""))
    _bm25_only(Home.init(root, key_file=key_file))
    opened = Home.open(root)
    echo(f"  a Home is a git repository of plain files: {', '.join(sorted(p.name for p in root.iterdir()))}")
    echo(f"  its signing key: {opened.settings.key_file} (outside the Home's git tree, never committed)")
    echo('  search: BM25 full-text (memory.toml [search] recipes = ["bm25"]), no model to load')
    with Memory.open(root, source_kind="import") as memory:
        result = DemoResult(home=root, imported=_import(step, memory, fmt, source))
        if result.imported.error is not None:
            return result
        memory.source_kind = "cli"
        _capture(step, opened)
        _distill(step, memory)
        _consolidate(step, memory)
        _render(step, opened)
        questions = _questions(memory, fmt, source, result.imported)
        _ask(step, memory, result, questions)
        _golden(step, opened, memory, questions, result.imported)
        _supersede_and_dispute(step, memory)
        _withdraw(step, memory, result)
        # Later steps changed records: bring the views up to date before the health check.
        render_views(opened)
    health = _doctor(step, root)
    result.steps = step.names
    result.seconds = time.perf_counter() - started
    echo("")
    for line in _closing(result, fmt, source, opened.settings.key_file, key_file is not None, health):
        echo(line)
    return result


def _closing(result: DemoResult, fmt: str, source: str, key: Path, scratch: bool, health: str) -> list[str]:
    """The demo's last three lines: what it built, where, and the next three commands to try."""
    root = result.home
    records = sum(1 for p in (root / "notes").iterdir() if p.is_dir())
    what = "the repository" if fmt == "git" else f"the {fmt} file"
    built = (
        f"Built a Home of {records} records from {what} {source} in {result.seconds:.1f} s; doctor: {health}."
    )
    if scratch:
        where = (
            f"It is in {root}, its signing key beside it in {key}; "
            f"rm -rf {root.parent} removes both (nothing is kept in your config folder)."
        )
    else:
        where = f"It is in {root}; its signing key is {key} (outside the Home, never committed)."
    question = result.questions[0][0].text if result.questions else "what do you know?"
    quoted = shlex.quote(question)
    try_it = (
        f"Try: export AGENT_MEMORY_HOME={root}; agent-memory recall {quoted}; "
        "agent-memory status; agent-memory ui"
    )
    return [built, where, try_it]


def _bm25_only(home: Home) -> None:
    # BM25 alone is the default without the embeddings extra; fixing it here makes the demo
    # equally quick everywhere (a model would embed every imported item).
    from agent_memory.search.recipes import BUILTIN_RECIPES, splice_search

    path = home.root / "memory.toml"
    text = splice_search(
        path.read_text(encoding="utf-8"), home.settings.search.activating(BUILTIN_RECIPES["bm25"])
    )
    path.write_text(text, encoding="utf-8")


class _Steps:
    def __init__(self, echo: Callable[[str], None], on_step: Callable[[str], None] | None = None) -> None:
        self.echo = echo
        self.on_step = on_step
        self.names: list[str] = []

    def __call__(self, title: str, command: str | None) -> None:
        self.names.append(title)
        if self.on_step is not None:
            self.on_step(f"demo step {len(self.names)}: {title}")
        self.echo("")
        self.echo(f"== {len(self.names)}. {title}")
        if command:
            self.echo(f"   $ {command}")

    def skipped(self) -> None:
        self.names[-1] += ": skipped"


def _import(step: _Steps, memory: Memory, fmt: str, source: str) -> ImportReport:
    if fmt == "git":
        # The user's own repository: vouched for (--trust), so its documentation may reach MEMORY.md.
        command = f"agent-memory import --from git {source} --limit {MAX_COMMITS} --trust"
        step("Import the repository", command)
        report = import_path(memory, "git", source, limit=MAX_COMMITS, max_items=MAX_ITEMS, trust=True)
    else:
        step(f"Import the {fmt} file", f"agent-memory import --from {fmt} {source} --limit {MAX_SESSIONS}")
        report = import_path(memory, fmt, source, limit=MAX_SESSIONS, max_items=MAX_ITEMS)
    echo = step.echo
    if report.error is not None:
        echo(f"  cannot import: {report.error}")
        echo("  run the demo inside a git repository, or pass --repo PATH or --dataset FILE")
        return report
    bound = (
        f"the latest {MAX_COMMITS} commits plus README and docs/*.md"
        if fmt == "git"
        else f"the first {MAX_SESSIONS} sessions of each conversation"
        if fmt == "locomo"
        else f"the first {MAX_SESSIONS} sessions of each question's haystack"
    )
    echo(f"  bounded to {bound}, at most {MAX_ITEMS} items, so the demo stays under a minute")
    echo(f"  {report.summary()}")
    for problem in report.errors[:3]:
        echo(f"  refused {problem}")
    for record_id in report.added[:2]:
        record = memory.get(record_id)
        when = record.occurred_at.date().isoformat() if record.occurred_at else "undated"
        echo(f"  e.g. {record_id} [{when}] source {record.provenance.ref}")
        echo(f"       {_short(record.body)}")
    return report


def _capture(step: _Steps, home: Home) -> None:
    from agent_memory.jobs.archive import archive_inbox
    from agent_memory.jobs.inbox import capture

    step("Capture into the inbox, then archive it", "agent-memory capture TEXT --source REF; archive-inbox")
    lines = [
        ("We decided to keep the demo Home's notes as plain Markdown files", "knowledge", None),
        ("The team reviews memory proposals on Mondays", "state", "demo:review-day"),
        ("Thanks, see you tomorrow!", "knowledge", None),
    ]
    items = [
        capture(home, text, kind=kind, subject=subject, source="demo:session")
        for text, kind, subject in lines
    ]
    for item in items:
        step.echo(f"  captured {item.id}: {item.text}")
    archived = archive_inbox(home)
    files = ", ".join(segment.file for segment in archived.segments)
    step.echo(f"  archived {len(archived.item_ids)} item(s) into {files} (append-only; the evidence floor)")


def _distill(step: _Steps, memory: Memory) -> None:

    step("Distill the archive into proposals, then accept them", "agent-memory distill; accept ID…")
    report = memory.maintenance.distill()
    for pending in report.proposals:
        record = pending.proposals[0].record if pending.proposals else None
        body = _short(record.body, 70) if record is not None else pending.reason
        step.echo(f"  proposed {pending.id} {pending.action}: {body} (source {', '.join(pending.anchors)})")
    for anchor, reason in list(report.skipped.items())[:2]:
        step.echo(f"  skipped {anchor}: {reason}")
    where = f"on branch {report.branch}" if report.branch else "under proposals/"
    step.echo(
        f"  {len(report.proposals)} proposal(s) filed {where}; nothing is applied until a person accepts"
    )
    outcome = memory.proposals.accept([p.id for p in report.proposals])
    step.echo(f"  $ agent-memory accept {' '.join(outcome.done)}")
    step.echo(f"  accepted {len(outcome.done)}: the records now cite their archive lines as source")


def _consolidate(step: _Steps, memory: Memory) -> None:
    step("Consolidate", "agent-memory consolidate")
    report = memory.maintenance.consolidate()
    stats = report.stats
    step.echo(
        f"  {stats['records']} records read, {stats['pairs']} candidate pairs: nothing applied, "
        f"{len(report.proposals)} proposals filed for review, {len(report.rejections)} rejected"
    )
    for pending in report.proposals[:4]:
        step.echo(
            f"  proposed {pending.id} {pending.pass_name} {pending.action} {' '.join(pending.record_ids)}"
        )
        step.echo(f"           {_short(pending.reason)}")
    for rejection in report.rejections[:2]:
        step.echo(f"  rejected {rejection.pass_name}: {_short(rejection.detail)}")
    if not report.proposals:
        return
    step.echo("  proposals wait under proposals/pending-consolidation/; nothing was changed by them")
    from agent_memory.jobs.review_flow import review_stats

    step.echo("  $ agent-memory accept --all   (a person's review; each is re-validated first)")
    outcome = memory.proposals.accept(everything=True)
    step.echo(
        f"  accepted {len(outcome.done)}, refused {len(outcome.refused)}; "
        f"{len(outcome.written)} versions written (superseding, never deleting)"
    )
    for proposal_id, reason in outcome.refused[:2]:
        step.echo(f"  refused {proposal_id}: {_short(reason)}")
    merges = [p.id for p in report.proposals if p.pass_name.startswith("dedup.near") and p.id in outcome.done]
    if merges:
        # A second look: a near-duplicate merge keeps one text; when the two said different
        # things, the person reverts it (compensating versions; nothing is deleted).
        step.echo(f"  $ agent-memory revert {merges[0]} --reason 'the two texts said different things'")
        memory.proposals.revert(merges[0], reason="the two texts said different things")
        rate = review_stats(memory.log)["regret_rate"]
        step.echo(f"  reverted: both texts are back as active correction records; regret rate {rate:.2f}")
        step.echo("  (regret rate = reverted / accepted proposals; `agent-memory status` shows it)")


def _render(step: _Steps, home: Home) -> None:
    step("Render the views", "agent-memory render")
    result = render_views(home)
    step.echo(f"  wrote {', '.join(result.written) or 'nothing new'}")
    step.echo(
        f"  MEMORY.md (autoloaded at session start): {result.shown} records, {result.used_tokens} tokens"
    )


def _questions(memory: Memory, fmt: str, source: str, report: ImportReport) -> list[Question]:
    held = set(report.held)
    if fmt == "git":
        # Questions formed from what was imported: the newest commit's subject, a documented section.
        commits = [s for s in report.held if s.startswith("git:")]
        docs = [s for s in report.held if "#L" in s]
        questions = [Question("How do I install it and run the tests?")]
        if commits:
            subject = memory.get(report.held[commits[0]]).body.split("committed: ", 1)[-1].split("\n")[0]
            questions.append(Question(f"Who changed this, and when: {subject}?", (commits[0],)))
        headings = {
            s: memory.get(report.held[s]).body.split("\n", 1)[0].lstrip("# ").strip()
            for s in docs[1:12]
            if memory.get(report.held[s]).body.startswith("#")
        }
        if headings:
            # The most specific (longest) heading among the first sections makes the clearest question.
            anchor = max(headings, key=lambda s: (len(headings[s]), s))
            questions.append(
                Question(f"What does the documentation say about {headings[anchor]}?", (anchor,))
            )
        return questions
    from agent_memory.importers import load_json

    data = load_json(source)
    name = os.path.basename(source)
    picked: list[Question] = []
    for index, entry in enumerate(data):
        for text, expected in _dataset_questions(fmt, name, index, entry):
            # Ask only what the imported part can answer: some of its evidence was imported.
            present = tuple(anchor for anchor in expected if anchor in held)
            if present and len(picked) < 3:
                picked.append(Question(text, present))
    return picked


def _dataset_questions(fmt: str, name: str, index: int, entry: Any) -> list[tuple[str, tuple[str, ...]]]:
    # Questions and their evidence are read here only to ask and to check; they are never stored.
    if fmt == "locomo":
        out = []
        for qa in entry.get("qa", []):
            evidence = tuple(f"{name}#{entry['sample_id']}/{e}" for e in qa.get("evidence", []))
            if qa.get("category") in (1, 2, 4) and evidence:
                out.append((str(qa["question"]), evidence))
        return out
    expected = tuple(
        f"{name}#/{index}/haystack_sessions/{s}/{t}"
        for s, session in enumerate(entry.get("haystack_sessions", []))
        for t, turn in enumerate(session)
        if turn.get("has_answer") and turn.get("role") == "user" and str(turn.get("content", "")).strip()
    )
    return [(str(entry.get("question", "")), expected)]


def _ask(step: _Steps, memory: Memory, result: DemoResult, questions: list[Question]) -> None:
    step("Answer questions with recall", 'agent-memory recall "QUESTION" --k 3')
    if not questions:
        step.echo("  no question could be formed from the imported items")
    for question in questions:
        recalled = memory.recall(question.text, k=TOP)
        sources = [r.record.provenance.ref or "" for r in recalled.records]
        result.questions.append((question, sources))
        step.echo(f"  Q: {question.text}")
        for rank, hit in enumerate(recalled.records, start=1):
            record = hit.record
            when = (record.occurred_at or record.created_at).date().isoformat()
            step.echo(f"    {rank}. score {hit.score:.3f} [{when}] {record.provenance.ref}")
            step.echo(f"       {_short(record.body)}")
            step.echo(f"       why: {'; '.join(hit.reasons)}")
        if question.expected:
            hit_expected = any(s in question.expected for s in sources)
            result.found += hit_expected
            shown = ", ".join(question.expected[:3])
            step.echo(f"    expected source {shown}: {'in' if hit_expected else 'NOT in'} the top {TOP}")


def _golden(
    step: _Steps, home: Home, memory: Memory, questions: list[Question], report: ImportReport
) -> None:
    from agent_memory.doctor.golden import load_golden, run_golden

    step("Keep the questions as golden recall tests", "agent-memory golden")
    entries = [
        {"query": q.text, "expect": report.held[q.expected[0]], "k": TOP}
        for q in questions
        if q.expected and q.expected[0] in report.held
    ]
    if not entries:
        step.echo("  no question has a known answer record: golden.yaml stays empty")
        return
    path = home.root / "golden.yaml"
    path.write_text(
        "# This Home's golden recall questions (written by the demo): query -> expected record.\n"
        + _yaml(entries),
        encoding="utf-8",
    )
    outcome = run_golden(memory, load_golden(path))
    step.echo(f"  wrote {len(entries)} question(s) to golden.yaml; {outcome.summary()}")
    step.echo("  a new index recipe replaces the current one only if it scores at least as well on these")


def _yaml(entries: list[dict[str, Any]]) -> str:
    # safe_dump quotes any string that would read back as another type (yes, 1.0, dates).
    import yaml

    return str(yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, width=1000))


def _supersede_and_dispute(step: _Steps, memory: Memory) -> None:
    step("Supersede a state", "agent-memory remember TEXT --kind state --subject demo:review-day")
    newer = memory.remember(
        "The team reviews memory proposals on Thursdays",
        source="demo:session",
        kind="state",
        subject="demo:review-day",
    )
    step.echo(f"  new value {newer.record_id} superseded {newer.superseded} (same subject, newer, untainted)")
    history = memory.recall("when does the team review memory proposals", k=8, include_history=True)
    for hit in (h for h in history.records if h.record.subject == "demo:review-day"):
        step.echo(f"    {hit.record.state.value:<11} {_short(hit.record.body)}")
    step(
        "A dispute and its resolution",
        "agent-memory remember TEXT --kind state --subject demo:review-day --taint external",
    )
    claim = memory.remember(
        "The team reviews memory proposals on Fridays",
        source="demo:external-page",
        kind="state",
        subject="demo:review-day",
        taint=["external"],
    )
    step.echo(
        f"  a tainted value {claim.record_id} disputes {claim.disputed_with}: both are now transitional"
    )
    if claim.disputed_with is not None:
        memory.resolve(claim.disputed_with, claim.record_id, "the team calendar says Thursdays")
        step.echo(f"  $ agent-memory resolve {claim.disputed_with} {claim.record_id} --reason ...")
        step.echo(f"  resolved: {claim.disputed_with} active again, {claim.record_id} superseded")


def _withdraw(step: _Steps, memory: Memory, result: DemoResult) -> None:
    step(
        "Withdraw and reinstate", "agent-memory withdraw --record ID --reason ...; reinstate WD --reason ..."
    )
    if not result.questions or not result.questions[0][1]:
        step.echo("  nothing recalled to withdraw")
        return
    question = result.questions[0][0].text
    top = memory.recall(question, k=1).records[0].record
    control = memory.withdraw(memory_item_ids=[top.id], reason="demo: hide it for now")
    after = [r.record.id for r in memory.recall(question, k=TOP).records]
    gone = "absent" if top.id not in after else "PRESENT"
    step.echo(f"  withdrew {top.id} ({control.withdrawal_id}); recalled again: {gone}")
    memory.reinstate(control.withdrawal_id, "demo: it may be used again")
    back = [r.record.id for r in memory.recall(question, k=TOP).records]
    step.echo(f"  reinstated; recalled again: {'back' if top.id in back else 'STILL ABSENT'}")


def _doctor(step: _Steps, root: Path) -> str:
    """Run doctor on the demo Home, print its short verdict and problems; return the verdict's head."""
    from agent_memory.cli.doctor import report_lines
    from agent_memory.doctor.diagnose import doctor

    step("Doctor", f"agent-memory doctor --home {root}")
    report = doctor(Home.open(root))
    lines = report_lines(report)
    for line in lines:
        step.echo(f"  {line}")
    level = report.conformance.label if report.conformance is not None else "no level"
    return f"{'healthy' if report.healthy else 'problems found'}, {level}"


def _short(text: str, width: int = 110) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
