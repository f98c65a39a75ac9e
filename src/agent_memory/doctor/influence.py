"""Seed 000 §21 items 13, 17, 18 and 20, judged from a Home: where influence goes, and where it may not.

Each verdict reads what the Home holds and fails, naming the record, file or log seq, where
the Home shows the rule broken:

- §21.13: every retrieval, outcome and feedback event is a log entry beside the records it
  names, and each of those records still verifies as written, its Source anchor intact: the
  outcome was recorded without rewriting the source;
- §21.17: the Home keeps what a forget receipt's "Promoted / derived artifacts" surface needs
  — every rule an accepted promotion wrote into ``conventions.md`` still names its source
  record — and names, for each withdrawal in force, the promoted rules that still stand. The
  receipt itself is the command's answer and is not kept in a Home: its wording and its
  five surfaces are a property of the code (``tests/governance/test_forget.py``);
- §21.18: no withdrawal names a record written by the same operation that withdrew it (a
  copy made merely to withdraw it); non-admission itself writes nothing, so a Home shows it
  only as the absence of such copies;
- §21.20: every MemoryFile the log says was exported, still at its place, holds no record
  this Home withdraws without the control that withdraws it; an import's controls are in
  the log before its records. Migrations' targets are not read here.

Invariant: read-only; an unreadable file is a ``fail`` reason, never an exception.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from agent_memory.doctor.decisions import POINTER, promotion_decisions
from agent_memory.doctor.facts import FAIL, NA, PASS, HomeFacts, Verdict
from agent_memory.errors import AgentMemoryError
from agent_memory.log.base import LogEntry
from agent_memory.records.record import MemoryRecord

__all__ = ["controls_travel", "no_copies_to_withdraw", "outcomes_beside_records", "promoted_rules_traced"]

_METAMEMORY = ("retrieval", "outcome", "feedback")


def outcomes_beside_records(f: HomeFacts) -> Verdict:
    """§21.13: a retrieved item's later outcome is recorded without rewriting the original source."""
    from agent_memory.metamemory.events import feedback_from, outcome_from, retrieval_from

    if f.log_error:
        return FAIL, f"the log cannot be read: {f.log_error}"
    readers = {"retrieval": retrieval_from, "outcome": outcome_from, "feedback": feedback_from}
    events = [e for e in f.entries if e.action in _METAMEMORY]
    if not events:
        return NA, "no retrieval, outcome or feedback is recorded here yet"
    records = {r.id: r for r in f.records}
    lines = {item.id for item in f.captured}
    seen: set[str] = set()
    named: set[str] = set()
    problems: list[str] = []
    for entry in events:
        event_id = entry.record_ids[0] if entry.record_ids else f"log seq {entry.seq}"
        try:
            event = readers[str(entry.action)](entry)
        except (AgentMemoryError, KeyError, TypeError, ValueError) as exc:
            problems.append(f"log seq {entry.seq}: {entry.action} {event_id} cannot be read ({exc!r})")
            continue
        for ref in (getattr(event, "retrieval_ref", None), getattr(event, "outcome_ref", None)):
            if ref is not None and ref not in seen:
                problems.append(f"{event_id} refers to {ref}, which no earlier event of the log is")
        seen.add(event_id)
        for record_id in getattr(event, "memory_item_ids", ()):
            named.add(record_id)
            problems += _source_problems(event_id, record_id, records, f.refused, lines)
    if problems:
        return FAIL, "; ".join(dict.fromkeys(problems))
    counts = Counter(str(e.action) for e in events)
    kinds = ", ".join(f"{action} x{counts[action]}" for action in _METAMEMORY if counts[action])
    return PASS, (
        f"{len(events)} event(s) ({kinds}) are log entries beside the {len(named)} record(s) they name; "
        "each record still verifies as written and its Source anchor holds: no outcome rewrote a source"
    )


def _source_problems(
    event_id: str, record_id: str, records: dict[str, MemoryRecord], refused: dict[str, str], lines: set[str]
) -> list[str]:
    if record_id in refused:
        return [f"{event_id} names {record_id}, whose note no longer verifies ({refused[record_id]})"]
    record = records.get(record_id)
    if record is None:
        return [f"{event_id} names {record_id}, which is no longer in notes/"]
    ref = record.provenance.ref or ""
    if ref.startswith("archive/") and "#" in ref and ref.rsplit("#", 1)[-1] not in lines:
        return [f"{event_id} names {record_id}, whose Source {ref} is no longer in the archive"]
    return []


def promoted_rules_traced(f: HomeFacts) -> Verdict:
    """§21.17: a bounded forget's receipt can name the promoted rules of its scope (seed 000 §12.1)."""
    from agent_memory.governance.gate import Gate
    from agent_memory.jobs.inert import inert_inline

    if f.log_error:
        return FAIL, f"the log cannot be read: {f.log_error}"
    code = (
        "the receipt itself is the forget command's answer, not kept in a Home: its five surfaces and "
        "its never claiming erasure are a property of the code, verified by tests/governance/test_forget.py"
    )
    folder = f.root / "proposals" / "promotions"
    accepted = {
        pid: events
        for pid, events in promotion_decisions(f).items()
        if any(e.details.get("verdict") == "promotion-accepted" for e in events)
    }
    problems: list[str] = []
    sources: dict[str, str] = {}
    for pid in sorted(accepted):
        rule, source = _accepted_rule(folder / f"{pid}.md")
        if rule is None:
            continue  # the proposal file is judged by §21.12
        sources[pid] = source
        for number, line in enumerate(f.conventions.splitlines(), 1):
            # A line holding the rule and no pointer at all (one with another proposal's pointer
            # is that proposal's line: the same rule promoted twice).
            if inert_inline(rule) in line and not POINTER.search(line):
                problems.append(
                    f"conventions.md line {number}: the rule {pid} promoted from {source} no longer names "
                    "its source, so a forget of that record's scope could not report it as still standing"
                )
    if problems:
        return FAIL, "; ".join(problems)
    try:
        view = Gate(f.home.log(), f.home.store()).view()
    except AgentMemoryError as exc:
        return FAIL, f"the withdrawal controls cannot be read: {exc}"
    hidden = {r.id for r in f.records if not view.is_exposed(r)}
    standing = sorted(
        f"{pid} (from {source})"
        for pid, source in sources.items()
        if source in hidden and f"by {pid})" in f.conventions
    )
    partial = (
        f"; withdrawn records whose promoted rules still stand (a forget reports them partial): "
        f"{', '.join(standing)}"
        if standing
        else ""
    )
    return PASS, (
        f"each of {len(sources)} accepted promotion rule(s) in conventions.md names its source record, so "
        f"a forget's Promoted / derived surface can report it{partial}; {code}"
    )


def _accepted_rule(path: Path) -> tuple[str | None, str]:
    from agent_memory.governance.promotion import PromotionProposal

    try:
        proposal = PromotionProposal.from_bytes(path.read_bytes(), path=str(path))
    except (OSError, AgentMemoryError):
        return None, ""
    return (proposal.rule, proposal.source_record) if proposal.status == "accepted" else (None, "")


def no_copies_to_withdraw(f: HomeFacts) -> Verdict:
    """§21.18: what never entered Memory stays non-admitted; nothing is copied in merely to be withdrawn."""
    from agent_memory.governance.gate import log_controls

    if f.log_error:
        return FAIL, f"the log cannot be read: {f.log_error}"
    try:
        controls = log_controls(f.home.log())
    except AgentMemoryError as exc:
        return FAIL, f"the withdrawal controls cannot be read: {exc}"
    first_put: dict[str, int] = {}
    for index, entry in enumerate(f.entries):
        if entry.action == "put":
            for record_id in entry.record_ids:
                first_put.setdefault(record_id, index)
    where = {entry.seq: index for index, entry in enumerate(f.entries)}
    problems: list[str] = []
    named = 0
    for entry, control in controls:
        if control.action != "withdraw" or "origin" in entry.details:
            continue  # an imported control was decided where the record was written
        for record_id in control.scope.memory_item_ids:
            named += 1
            put, withdrawn = first_put.get(record_id), where.get(entry.seq)
            if put is None or withdrawn is None:
                continue  # imported, or appended since the facts were read
            if _same_operation(f.entries, put, withdrawn, record_id):
                problems.append(
                    f"log seq {entry.seq}: {control.withdrawal_id} withdraws {record_id}, written at log seq "
                    f"{f.entries[put].seq} by the same operation ({entry.actor}, {entry.to_wire()['time']}): "
                    "a copy made merely to withdraw it; non-admission writes nothing"
                )
    if problems:
        return FAIL, "; ".join(problems)
    return PASS, (
        f"{len(controls)} control(s) name {named} record(s), each written by an earlier operation than "
        "its withdrawal: nothing was captured merely to be withdrawn; a forget of a scope that never "
        "entered Memory writes nothing (non-admission, tests/governance/test_forget.py)"
    )


def _same_operation(entries: list[LogEntry], put: int, withdraw: int, record_id: str) -> bool:
    """Whether the put and the withdrawal are one operation: same actor and time, nothing else between."""
    first, last = entries[put], entries[withdraw]
    if put >= withdraw or first.actor != last.actor or first.time != last.time:
        return False
    between = entries[put + 1 : withdraw]
    return all(e.action in ("intent", "intent-done") or record_id in e.record_ids for e in between)


def controls_travel(f: HomeFacts) -> Verdict:
    """§21.20: backup, export and migration keep withdrawal controls with retained content, or fail closed."""
    from agent_memory.governance.controls import resolve
    from agent_memory.governance.gate import Gate, GateView
    from agent_memory.governance.portability import read_file_controls
    from agent_memory.records.memory_file import MemoryFile

    if f.log_error:
        return FAIL, f"the log cannot be read: {f.log_error}"
    try:
        view = Gate(f.home.log(), f.home.store()).view()
    except AgentMemoryError as exc:
        return FAIL, f"the withdrawal controls cannot be read: {exc}"
    problems: list[str] = []
    notes: list[str] = []
    places = _export_places(f)
    carried = 0
    for text, path in places.items():
        if path is None:
            notes.append(f"export {text} was made by another Home: not evaluated here")
            continue
        try:
            memory_file = MemoryFile.loads(path.read_bytes(), path=text)
            controls = read_file_controls(memory_file, path=text)
        except FileNotFoundError:
            notes.append(f"export {text} is no longer there: unevaluated")
            continue
        except (OSError, AgentMemoryError) as exc:
            problems.append(f"export {text} cannot be read to check it: {exc}")
            continue
        carried += bool(controls)
        own = GateView(resolve(controls).in_force(), f.home.store().get)
        for record in memory_file.records:
            if record.redacted or view.is_exposed(record) or not own.is_exposed(record):
                continue
            problems.append(
                f"export {text} holds {record.id}, withdrawn here ({view.check(record).reason}), without the "
                "control that withdraws it: an import elsewhere would expose it (export again, or delete it)"
            )
    imported = sum(1 for e in f.entries if e.action == "withdraw" and "origin" in e.details)
    migrations = f.actions["migrate"]
    if problems:
        return FAIL, "; ".join(problems + notes)
    said = f"; {'; '.join(notes)}" if notes else ""
    return PASS, (
        f"{len(places)} export(s) in the log: none still here holds a record withdrawn here without its "
        f"control ({carried} carry controls){said}; {imported} imported control(s) are in the log; "
        f"{migrations} migration(s): their targets are not read here (tests/test_migrate.py checks that "
        "migrate carries every control before any record)"
    )


def _export_places(f: HomeFacts) -> dict[str, Path | None]:
    """Return ``{logged path: the file here, or None for another Home's export}`` (newest event wins)."""
    here = Path(os.path.abspath(f.root))
    places: dict[str, Path | None] = {}
    for entry in f.entries:
        text = entry.details.get("path") if entry.action == "export" else None
        if not isinstance(text, str):
            continue
        path = Path(text)
        if not path.is_absolute():
            places[text] = here / path
            continue
        made_in = entry.details.get("home")
        same = isinstance(made_in, str) and Path(made_in).resolve() == here.resolve()
        places[text] = path if same else None
    return places
