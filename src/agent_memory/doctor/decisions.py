"""Seed 000 §21 items 9, 12, 14 and 15, judged from a Home: changes that wait for a decision.

Each verdict reads what the Home holds — its log, ``conventions.md``, the promotion proposals
under ``proposals/promotions/`` and the policy proposals ``proposals/mempolicy-*.yaml`` — and
fails, naming the file or log seq, where the Home shows the rule broken:

- §21.9: a cleanup the review applied (a record write naming a maintenance proposal, and the
  ``accepted`` verdict) comes after a run filed that proposal — the plan — and every
  erasure's receipt comes after its plan (``erase-intent``, the same scope);
- §21.12: every rule ``conventions.md`` attributes to a promotion names a proposal that is
  ``accepted``, with its decision logged, by an actor holding the ``promote`` grant, for
  that very rule (digest); no pending or rejected proposal's rule is there;
- §21.14: every policy proposal is still ``pending-review`` and byte for byte the file its
  ``policy-proposal`` event fixed (agent-memory has no path that applies one);
- §21.15: every policy proposal was emitted through the governed path (its event is in the
  log and its file in ``proposals/``), cites at least one ref, and every ref that can be
  checked here resolves (events in the log, records in ``notes/``, archive lines).

Invariant: read-only; an unreadable file is a ``fail`` reason, never an exception.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from agent_memory.doctor.facts import FAIL, PASS, HomeFacts, Verdict
from agent_memory.errors import AgentMemoryError
from agent_memory.governance.promotion import PROMOTION_ID_PATTERN, PromotionProposal
from agent_memory.log.base import LogEntry

__all__ = [
    "POINTER",
    "cleanup_plans",
    "conventions_decided",
    "policy_kept_pending",
    "policy_proposals_governed",
    "promotion_decisions",
]

POINTER = re.compile(r"\(promoted from (mem:[0-9a-f]{32}) by (mempromo-\d{4}-\d{2}-\d{2}-\d{3,})\)")
"""The pointer ``Promotions.accept`` appends to each rule it writes into ``conventions.md``."""

_EVENT_REF = re.compile(r"\A(memret|memout|memfb)-\d{4}-\d{2}-\d{2}-\d{3,}\Z")
_POLICY_REF = re.compile(r"\Amempolicy-\d{4}-\d{2}-\d{2}-\d{3,}\Z")
_ARCHIVE_REF = re.compile(r"\Aarchive/[^#]+\.md#(.+)\Z")


def cleanup_plans(f: HomeFacts) -> Verdict:
    """§21.9: review produces a cleanup plan before deletion (erasure) or any applied cleanup."""
    if f.log_error:
        return FAIL, f"the log cannot be read: {f.log_error}"
    filed: set[str] = set()
    intents: dict[str, LogEntry] = {}
    problems: list[str] = []
    applied = erased = 0
    for entry in f.entries:
        action, details = str(entry.action), entry.details
        if action == "consolidate":
            filed.update(str(p) for p in details.get("proposals") or ())
        elif action == "distill":
            filed.update(str(p) for p in details.get("proposed") or {})
        elif action == "erase-intent":
            intents[str(details.get("erasure_id"))] = entry
        elif action == "erase":
            erased += 1
            problems += _erasure_planned(entry, intents)
        elif details.get("job") == "review" and details.get("proposal_id"):
            applied += 1
            pid = str(details["proposal_id"])
            if pid not in filed:
                problems.append(
                    f"log seq {entry.seq}: {action} of {', '.join(entry.record_ids)} applies proposal {pid}, "
                    "which no maintenance run filed before it: a cleanup without a plan to review"
                )
        elif action == "review" and details.get("verdict") == "accepted":
            pid = str(details.get("proposal_id", ""))
            if pid not in filed:
                problems.append(
                    f"log seq {entry.seq}: proposal {pid} was accepted, but no run filed it before"
                )
    if problems:
        return FAIL, "; ".join(problems)
    return PASS, (
        f"{len(filed)} maintenance proposal(s) filed as the plan; each of {applied} cleanup write(s) the "
        f"review applied names one filed before it; each of {erased} erasure receipt(s) follows its plan "
        "(erase-intent, same scope) logged before the first tombstone"
    )


def _erasure_planned(entry: LogEntry, intents: dict[str, LogEntry]) -> list[str]:
    erasure_id = str(entry.details.get("erasure_id"))
    plan = intents.get(erasure_id)
    if plan is None:
        return [f"log seq {entry.seq}: erasure {erasure_id} has no plan (erase-intent) logged before it"]
    extra = sorted(set(entry.record_ids) - set(plan.record_ids))
    if extra:
        return [
            f"log seq {entry.seq}: erasure {erasure_id} erased {', '.join(extra)}, which its plan "
            f"(log seq {plan.seq}) did not name"
        ]
    return []


def _promotions(f: HomeFacts) -> tuple[dict[str, PromotionProposal], list[str]]:
    folder = f.root / "proposals" / "promotions"
    found: dict[str, PromotionProposal] = {}
    problems: list[str] = []
    for path in sorted(folder.glob("mempromo-*.md")) if folder.is_dir() else []:
        if not PROMOTION_ID_PATTERN.match(path.stem):
            continue
        try:
            proposal = PromotionProposal.from_bytes(path.read_bytes(), path=_rel(f, path))
        except (OSError, AgentMemoryError) as exc:
            problems.append(str(exc))
            continue
        if proposal.proposal_id != path.stem:
            problems.append(f"{_rel(f, path)}: holds id {proposal.proposal_id}, not its file name")
            continue
        found[proposal.proposal_id] = proposal
    return found, problems


def _rel(f: HomeFacts, path: Path) -> str:
    return path.relative_to(f.root).as_posix()


def promotion_decisions(f: HomeFacts) -> dict[str, list[LogEntry]]:
    """Return ``{proposal id: [its promotion-accepted / promotion-rejected review events]}``."""
    found: dict[str, list[LogEntry]] = {}
    for entry in f.entries:
        verdict = entry.details.get("verdict")
        if entry.action == "review" and verdict in ("promotion-accepted", "promotion-rejected"):
            found.setdefault(str(entry.details.get("proposal_id", "")), []).append(entry)
    return found


def conventions_decided(f: HomeFacts) -> Verdict:
    """§21.12: a Conventions change stays a proposal until an attributable human decision."""
    if f.log_error:
        return FAIL, f"the log cannot be read: {f.log_error}"
    proposals, problems = _promotions(f)
    decisions = promotion_decisions(f)
    actors = f.home.settings.actors
    pointed = 0
    for number, line in enumerate(f.conventions.splitlines(), 1):
        for source, pid in POINTER.findall(line):
            pointed += 1
            problems += _pointer_problems(f"conventions.md line {number}", source, pid, proposals, decisions)
    for pid, events in sorted(decisions.items()):
        for event in events:
            if not actors.may(event.actor, "promote"):
                problems.append(
                    f"log seq {event.seq}: {event.details.get('verdict')} of {pid} by {event.actor}, "
                    "who holds no promote grant: not an attributable human decision"
                )
    for pid, proposal in sorted(proposals.items()):
        verdicts = [str(e.details.get("verdict")) for e in decisions.get(pid, [])]
        if proposal.status == "accepted" and "promotion-accepted" not in verdicts:
            problems.append(
                f"proposals/promotions/{pid}.md is accepted, but no decision to accept it is logged"
            )
    if problems:
        return FAIL, "; ".join(problems)
    accepted = sum(1 for p in proposals.values() if p.status == "accepted")
    return PASS, (
        f"{len(proposals)} promotion proposal(s), {accepted} accepted; each of the {pointed} rule(s) "
        "conventions.md attributes to one has its decision logged, for that rule, by an actor holding "
        "the promote grant, and no pending or rejected proposal's rule is there"
    )


def _pointer_problems(
    where: str,
    source: str,
    pid: str,
    proposals: dict[str, PromotionProposal],
    decisions: dict[str, list[LogEntry]],
) -> list[str]:
    proposal = proposals.get(pid)
    if proposal is None:
        return [f"{where}: names {pid}, which is not in proposals/promotions/"]
    if proposal.status != "accepted":
        return [f"{where}: the rule of {pid} ({proposal.status}) was written without a decision to accept it"]
    if proposal.source_record != source:
        return [f"{where}: names {source}, but {pid} promotes {proposal.source_record}"]
    digest = hashlib.sha256(proposal.rule.encode("utf-8")).hexdigest()
    accepted = [e for e in decisions.get(pid, []) if e.details.get("verdict") == "promotion-accepted"]
    if not accepted:
        return [f"{where}: {pid} is marked accepted, but no decision to accept it is logged"]
    if all(e.details.get("rule_digest") != digest for e in accepted):
        return [f"{where}: the rule of {pid} is not the one its logged decision accepted (digest differs)"]
    return []


def _policy_events(f: HomeFacts) -> dict[str, LogEntry]:
    return {
        str(entry.record_ids[0]): entry
        for entry in f.entries
        if entry.action == "policy-proposal" and entry.record_ids
    }


def _policy_files(f: HomeFacts) -> tuple[dict[str, tuple[Path, bytes]], list[str]]:
    folder = f.root / "proposals"
    found: dict[str, tuple[Path, bytes]] = {}
    problems: list[str] = []
    for path in sorted(folder.glob("mempolicy-*.yaml")) if folder.is_dir() else []:
        try:
            found[path.stem] = (path, path.read_bytes())
        except OSError as exc:
            problems.append(f"proposals/{path.name}: cannot be read: {exc.strerror}")
    return found, problems


def policy_kept_pending(f: HomeFacts) -> Verdict:
    """§21.14: one outcome cannot change the memory constitution: no policy proposal applied itself."""
    from agent_memory.metamemory.policy import PROPOSAL_STATUS, PolicyProposal

    if f.log_error:
        return FAIL, f"the log cannot be read: {f.log_error}"
    files, problems = _policy_files(f)
    events = _policy_events(f)
    for pid, (path, data) in files.items():
        try:
            proposal = PolicyProposal.from_yaml(data, path=_rel(f, path))
        except AgentMemoryError as exc:
            problems.append(str(exc))
            continue
        if proposal.status != PROPOSAL_STATUS:
            problems.append(
                f"proposals/{path.name} reads {proposal.status!r}: agent-memory never applies a policy "
                "proposal, so something changed policy without a recorded decision"
            )
        event = events.get(pid)
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        if event is not None and event.details.get("file_digest") != digest:
            problems.append(
                f"proposals/{path.name} is not the file its policy-proposal event (log seq {event.seq}) fixed"
            )
    feedback = f.actions["feedback"] + f.actions["outcome"]
    if problems:
        return FAIL, "; ".join(problems)
    return PASS, (
        f"{len(files)} policy proposal(s), each still pending-review and as its event fixed it, after "
        f"{feedback} outcome/feedback event(s): none changed policy by itself (Conventions changes are "
        "judged by §21.12; memory.toml is the owner's and keeps no history here to judge)"
    )


def policy_proposals_governed(f: HomeFacts) -> Verdict:
    """§21.15: policy changes are emitted as reviewable proposals with supporting references."""
    from agent_memory.metamemory.policy import PolicyProposal

    if f.log_error:
        return FAIL, f"the log cannot be read: {f.log_error}"
    files, problems = _policy_files(f)
    events = _policy_events(f)
    known = {str(e.record_ids[0]) for e in f.entries if e.record_ids and _EVENT_REF.match(e.record_ids[0])}
    held = {r.id for r in f.records} | set(f.refused)
    lines = {item.id for item in f.captured}
    unchecked = 0
    for pid, (path, data) in files.items():
        try:
            proposal = PolicyProposal.from_yaml(data, path=_rel(f, path))
        except AgentMemoryError as exc:
            problems.append(str(exc))
            continue
        name = f"proposals/{path.name}"
        if pid not in events:
            problems.append(
                f"{name} has no policy-proposal event in the log: not emitted through the review path"
            )
        if not proposal.supporting_refs:
            problems.append(f"{name} cites no supporting ref")
        for ref in proposal.supporting_refs:
            missing = _missing_ref(ref, known, held, lines, set(files))
            if missing is None:
                unchecked += 1
            elif missing:
                problems.append(f"{name} cites {ref}, {missing}")
    lost = sorted(set(events) - set(files))
    problems += [
        f"{pid} (log seq {events[pid].seq}) has no file in proposals/: it cannot be reviewed" for pid in lost
    ]
    if problems:
        return FAIL, "; ".join(problems)
    return PASS, (
        f"{len(files)} policy proposal(s), each emitted with its log event and waiting in proposals/ for "
        f"review, citing refs that resolve here ({unchecked} ref(s) outside the Home taken as given)"
    )


def _missing_ref(
    ref: str, events: set[str], held: set[str], lines: set[str], policies: set[str]
) -> str | None:
    """Return why ``ref`` does not resolve, ``""`` when it does, ``None`` when it cannot be checked here."""
    if _EVENT_REF.match(ref):
        return "" if ref in events else "which is no event in the log"
    if _POLICY_REF.match(ref):
        return "" if ref in policies else "which is no proposal in proposals/"
    if ref.startswith("mem:"):
        return "" if ref.split("#", 1)[0] in held else "which is no record in notes/"
    anchor = _ARCHIVE_REF.match(ref)
    if anchor:
        return "" if anchor[1] in lines else "which is no line of the archive"
    return None
