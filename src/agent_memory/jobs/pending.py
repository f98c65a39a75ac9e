"""Pending consolidation proposals: what a maintenance run asks a reviewer to accept, as JSON files.

A :class:`PendingProposal` is one reviewable change: a batch of
:class:`~agent_memory.write.proposals.Proposal` objects (a near-duplicate merge is two supersedes),
or the next version of a rule whose flag
is wrong (the proposal gate has no flag kind; a flag changes no state). It carries the
``basis``: the sha256 of the canonical bytes of every record version it was made from. The
review flow (issue 7 item 5) accepts one by calling :func:`revalidate` then writing the
versions it returns; a record that changed since the proposal was made makes it stale.

Files: ``proposals/pending-consolidation/<id>.json`` (UTF-8, sorted keys, format tag
:data:`FORMAT`). They hold record bodies (a merged record's), so erasure must scan them.

Where filed proposals wait is a :class:`ProposalShelf`: a Home's folder, or, for a Memory
without a Home (``Memory.in_memory()``), memory itself, so ``proposals``/``accept`` find what
``consolidate`` filed either way (the shelf lives as long as the Memory does).

The run's report (:class:`ConsolidationReport` of :class:`Action` and :class:`Rejection`)
lives here too: it is what a run hands to the review flow.

Invariant: :func:`revalidate` writes nothing; it raises :class:`ProposalError` naming the
record or file for a stale or illegal proposal, or returns the versions the gate would write.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_memory.errors import LifecycleError, ProposalError, RecordError, RecordNotFound, StoreError
from agent_memory.records.record import Kind, MemoryRecord, State
from agent_memory.records.wire import format_timestamp, parse_timestamp
from agent_memory.stores.base import RecordStore, check_next_version
from agent_memory.write.proposals import Proposal, ProposalKind, validate_proposals

__all__ = [
    "FORMAT",
    "PENDING_FOLDER",
    "PROPOSAL_ID_PATTERN",
    "Action",
    "ConsolidationReport",
    "PendingProposal",
    "ProposalShelf",
    "Rejection",
    "basis_of",
    "is_proposal_id",
    "load_pending",
    "revalidate",
]

FORMAT = "agent-memory-consolidation-proposal/1"
PENDING_FOLDER = Path("proposals") / "pending-consolidation"
PROPOSAL_ID_PATTERN = re.compile(r"\A(?:cons|dist)-[0-9a-f]{16}\Z")
"""A maintenance proposal id: ``cons-`` (consolidation) or ``dist-`` (distill) and 16 hex digits."""


def is_proposal_id(value: str) -> bool:
    """Return whether ``value`` is shaped like a maintenance proposal id (not a record id ``mem:…``)."""
    return bool(PROPOSAL_ID_PATTERN.match(value))


def basis_of(record: MemoryRecord) -> str:
    """Return the sha256 hex digest of a version's canonical bytes (what a proposal was made from)."""
    return hashlib.sha256(record.canonical_bytes()).hexdigest()


@dataclass(frozen=True, slots=True)
class PendingProposal:
    """One change waiting for review.

    Attributes:
        pass_name: The consolidation pass (``dedup.near``, ``state``, ``promotion``,
            ``rule-flags``, ``decay``).
        action: ``merge``, ``supersede``, ``create-rule``, ``flag``, ``unflag`` or ``archive``.
        reason: Why, in the origin's words.
        record_ids: The records it concerns (sorted).
        basis: ``{record id: sha256 of the version read}`` for every record it was made from.
        made_at: The pass time (aware UTC).
        proposals: The gate proposals, applied together in order (empty for a flag).
        flag: The rule's next version, for ``flag``/``unflag``.
        id: ``cons-<16 hex>`` (derived from pass, action and basis when not given) or, for
            distill, ``dist-<16 hex>``.
        anchors: The archive lines a distill proposal was made from (``archive/…#mem-…``).
    """

    pass_name: str
    action: str
    reason: str
    record_ids: tuple[str, ...]
    basis: Mapping[str, str]
    made_at: datetime
    proposals: tuple[Proposal, ...] = ()
    flag: MemoryRecord | None = None
    id: str = field(default="")
    anchors: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.id:
            key = json.dumps([self.pass_name, self.action, sorted(self.basis.items())], sort_keys=True)
            object.__setattr__(self, "id", "cons-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16])

    def to_json(self) -> dict[str, Any]:
        """Return the file's JSON object (records in their wire form)."""
        return {
            "format": FORMAT,
            "id": self.id,
            "pass_name": self.pass_name,
            "action": self.action,
            "reason": self.reason,
            "record_ids": list(self.record_ids),
            "basis": dict(sorted(self.basis.items())),
            "made_at": format_timestamp(self.made_at),
            "proposals": [_proposal_json(p) for p in self.proposals],
            "flag": self.flag.to_wire() if self.flag is not None else None,
            "anchors": list(self.anchors),
        }

    @classmethod
    def from_json(cls, data: Any, *, path: str | None = None) -> PendingProposal:
        """Parse :meth:`to_json`'s shape.

        Raises:
            ProposalError: Wrong format tag, a missing or mistyped field, or a record that
                does not parse (the message names ``path`` and the field).
        """
        where = f"{path}: " if path else ""
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise ProposalError(f"{where}not a {FORMAT} object", field="format")
        try:
            flag = data.get("flag")
            return cls(
                pass_name=str(data["pass_name"]),
                action=str(data["action"]),
                reason=str(data["reason"]),
                record_ids=tuple(str(i) for i in data["record_ids"]),
                basis={str(k): str(v) for k, v in dict(data["basis"]).items()},
                made_at=parse_timestamp(data["made_at"], "made_at"),
                proposals=tuple(_proposal_from(p) for p in data["proposals"]),
                flag=MemoryRecord.from_wire(flag) if flag is not None else None,
                id=str(data["id"]),
                anchors=tuple(str(a) for a in data.get("anchors", ())),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ProposalError(f"{where}malformed proposal: {exc!r}") from None
        except RecordError as exc:
            raise ProposalError(f"{where}{exc}", record_id=exc.record_id, field=exc.field) from None

    def write(self, folder: Path) -> Path:
        """Write ``<folder>/<id>.json`` atomically (temp file + replace); return its path."""
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{self.id}.json"
        temp = folder / f".{self.id}.{uuid.uuid4().hex}.tmp"
        try:
            temp.write_text(json.dumps(self.to_json(), sort_keys=True, indent=2) + "\n", encoding="utf-8")
            os.replace(temp, target)
        finally:
            temp.unlink(missing_ok=True)
        return target


def _proposal_json(proposal: Proposal) -> dict[str, Any]:
    return {
        "kind": proposal.kind.value,
        "record": proposal.record.to_wire() if proposal.record is not None else None,
        "target_id": proposal.target_id,
        "other_id": proposal.other_id,
        "reason": proposal.reason,
    }


def _proposal_from(data: Any) -> Proposal:
    record = data.get("record")
    return Proposal(
        ProposalKind(data["kind"]),
        record=MemoryRecord.from_wire(record) if record is not None else None,
        target_id=data.get("target_id"),
        other_id=data.get("other_id"),
        reason=str(data.get("reason", "")),
    )


def load_pending(folder: Path) -> list[PendingProposal]:
    """Return every pending proposal under ``folder``, by file name; ``[]`` when it does not exist.

    Raises:
        ProposalError: A file that is not valid JSON or not a pending proposal (naming it).
    """
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ProposalError(f"{path}: unreadable proposal file: {exc}") from None
        found.append(PendingProposal.from_json(data, path=str(path)))
    return found


class ProposalShelf:
    """Where filed maintenance proposals wait for review: a folder of JSON files, or memory.

    Args:
        folder: The Home's ``proposals/pending-consolidation/``; ``None`` keeps the filed
            proposals in this object (a Memory without a Home).
    """

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self._kept: dict[str, PendingProposal] = {}

    def file(self, pending: PendingProposal) -> None:
        """File ``pending``: write ``<folder>/<id>.json`` (atomically), or keep it in memory.

        Raises:
            OSError: The file cannot be written.
        """
        if self.folder is not None:
            pending.write(self.folder)
        else:
            self._kept[pending.id] = pending

    def filed(self) -> list[PendingProposal]:
        """Return every filed proposal, by id (decided ones too: the log says which are decided).

        Raises:
            ProposalError: A file that is not valid JSON or not a pending proposal (naming it).
        """
        if self.folder is not None:
            return load_pending(self.folder)
        return [self._kept[i] for i in sorted(self._kept)]


def revalidate(
    store: RecordStore, pending: PendingProposal, *, now: datetime | None = None
) -> list[MemoryRecord]:
    """Check a pending proposal against the current records; return the versions accepting it would write.

    Writes nothing. Every record in ``basis`` must still be exactly the version read (else
    the proposal is stale), then the gate validates the batch (:func:`validate_proposals`),
    or, for a flag, the store's version rules (:func:`check_next_version`). Last, a
    ``state`` subject the versions touch must keep at most one active record (DESIGN.md §7):
    a value written for it since the proposal was made makes the proposal stale.

    Raises:
        ProposalError: Stale (``record … changed since the proposal was made``, naming it; or
            a subject that would hold two active values), a record gone, or a proposal the
            gate refuses.
        LifecycleError: The gate's lifecycle guards refuse it.
    """
    for record_id, digest in sorted(pending.basis.items()):
        try:
            current = store.get(record_id)
        except RecordNotFound:
            raise ProposalError(
                f"stale proposal {pending.id}: the record is gone", record_id=record_id
            ) from None
        if basis_of(current) != digest:
            raise ProposalError(
                f"stale proposal {pending.id}: the record changed since the proposal was made",
                record_id=record_id,
            )
    if pending.flag is not None:
        try:
            check_next_version(store.get(pending.flag.id), pending.flag)
        except (RecordError, StoreError, LifecycleError) as exc:
            raise ProposalError(
                f"refused as the next version: {exc.detail}", record_id=pending.flag.id, field=exc.field
            ) from None
        return [pending.flag]
    versions = validate_proposals(store, pending.proposals, now=now)
    _one_active_value(store, versions, pending.id)
    return versions


def _subject(record: MemoryRecord) -> tuple[str, str] | None:
    if record.effective_kind is not Kind.STATE or not record.subject:
        return None
    return (record.effective_namespace, record.subject)


def _one_active_value(store: RecordStore, versions: list[MemoryRecord], proposal_id: str) -> None:
    after = {v.id: v for v in versions}
    for key in sorted({k for k in map(_subject, after.values()) if k is not None}):
        namespace, subject = key
        found = {r.id: r for r in store.list(kind=Kind.STATE, subject=subject, namespace=namespace)}
        found.update((i, v) for i, v in after.items() if _subject(v) == key)
        active = sorted(i for i, r in found.items() if r.state is State.ACTIVE and not r.redacted)
        if len(active) > 1:
            raise ProposalError(
                f"stale proposal {proposal_id}: subject {subject} would have {len(active)} active "
                f"values ({', '.join(active)})",
                field="subject",
            )


@dataclass(frozen=True, slots=True)
class Action:
    """Something a pass did (applied) or decided to leave alone (``protect``); states before/after."""

    pass_name: str
    action: str
    record_ids: tuple[str, ...]
    before: tuple[str, ...]
    after: tuple[str, ...]
    reason: str

    def to_json(self) -> dict[str, Any]:
        """Return the report's JSON shape."""
        return {
            "pass": self.pass_name,
            "action": self.action,
            "record_ids": list(self.record_ids),
            "before": list(self.before),
            "after": list(self.after),
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class Rejection:
    """A change a pass wanted that the gate refused, or that was deferred; nothing was written."""

    pass_name: str
    detail: str
    record_ids: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Return the report's JSON shape."""
        return {"pass": self.pass_name, "detail": self.detail, "record_ids": list(self.record_ids)}


@dataclass(slots=True)
class ConsolidationReport:
    """Everything one run did, proposed and refused, each with its reason.

    Attributes:
        actions: Applied changes (``supersede``, ``transition``) and protections (``protect``).
        proposals: Pending proposals for review, never applied here.
        rejections: Refused or deferred changes (nothing written for them).
        stats: Counts: ``records`` read, ``skipped_withdrawn``, ``pairs`` compared,
            ``blocks``, ``blocks_skipped``.
        branch: The ``maintenance/<stamp>`` branch the proposals were committed on (a git
            Home), else ``None``.
    """

    actions: list[Action] = field(default_factory=list)
    proposals: list[PendingProposal] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)
    branch: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Return ``{"actions", "proposals", "rejections", "stats", "branch"}`` (proposals as summaries)."""
        return {
            "actions": [a.to_json() for a in self.actions],
            "proposals": [
                {
                    "id": p.id,
                    "pass": p.pass_name,
                    "action": p.action,
                    "record_ids": list(p.record_ids),
                    "reason": p.reason,
                }
                for p in self.proposals
            ],
            "rejections": [r.to_json() for r in self.rejections],
            "stats": dict(self.stats),
            "branch": self.branch,
        }
