"""Governed policy proposals (seed 000 §23.5, §17): the one shape for an agent-initiated policy change.

A proposal names a target (a memory-policy element, or a Conventions/Steering rule), the
change in prose, the refs that support it, its expected benefit and its risk, and stays
``pending-review``: agent-memory has no code path that applies one. Repeated evidence makes
a change eligible, never authorised; a person decides and records that decision.

In a Home each proposal is a file ``proposals/mempolicy-YYYY-MM-DD-NNN.yaml``: a comment,
then one ``key: <compact JSON>`` line per field (every line valid YAML, readable without
the library). Files are created exclusively, never overwritten. Elsewhere (tests, an
in-memory Memory) proposals are held in memory.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_memory.errors import ProposalError, RecordError
from agent_memory.log.base import OperationLog
from agent_memory.records.wire import format_timestamp, parse_timestamp

__all__ = ["PROPOSAL_STATUS", "PolicyBox", "PolicyProposal", "proposals_folder"]

PROPOSAL_STATUS = "pending-review"
_FILE = re.compile(r"\Amempolicy-(\d{4}-\d{2}-\d{2})-(\d{3,})\.yaml\Z")
_HEADER = (
    "# Memory policy proposal (seed 000 §23.5). agent-memory never applies it by itself:\n"
    "# a person decides, and records that decision, before anything changes.\n"
)


@dataclass(frozen=True, slots=True)
class PolicyProposal:
    """A governed proposal to change memory policy; never applied by itself.

    Attributes:
        proposal_id: ``mempolicy-YYYY-MM-DD-NNN``.
        target: The policy element or rule concerned, one token
            (``retrieval-trigger:environment-state``).
        proposed_change: What should change, in prose.
        supporting_refs: The evidence: feedback events, records, archive anchors, statements.
        expected_benefit: Why, in prose.
        risk: What could go wrong, in prose.
        proposed_by: The actor who proposed it.
        proposed_at: When (aware UTC).
        status: Always ``pending-review`` when written.
    """

    proposal_id: str
    target: str
    proposed_change: str
    supporting_refs: tuple[str, ...]
    expected_benefit: str
    risk: str
    proposed_by: str
    proposed_at: datetime
    status: str = PROPOSAL_STATUS

    def to_json(self) -> dict[str, Any]:
        """Return the seed 000 §23.5 shape, plus who proposed it and when."""
        return {
            "proposal_id": self.proposal_id,
            "target": self.target,
            "proposed_change": self.proposed_change,
            "supporting_refs": list(self.supporting_refs),
            "expected_benefit": self.expected_benefit,
            "risk": self.risk,
            "status": self.status,
            "proposed_by": self.proposed_by,
            "proposed_at": format_timestamp(self.proposed_at),
        }

    def to_yaml(self) -> bytes:
        """Return the file bytes: the header comment, then ``key: <compact JSON>`` per field."""
        lines = [f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in self.to_json().items()]
        return (_HEADER + "\n".join(lines) + "\n").encode("utf-8")

    @classmethod
    def from_yaml(cls, data: bytes, *, path: str) -> PolicyProposal:
        """Read a file written by :meth:`to_yaml`.

        Raises:
            ProposalError: Not UTF-8, a line that is not ``key: <JSON>``, or a missing or
                malformed field (naming the file).
        """
        try:
            fields: dict[str, Any] = {}
            for line in data.decode("utf-8").splitlines():
                if line.strip() and not line.startswith("#"):
                    key, sep, value = line.partition(": ")
                    if not sep:
                        raise ValueError(f"not a 'key: value' line: {line[:60]!r}")
                    fields[key] = json.loads(value)
            refs = fields["supporting_refs"]
            if not isinstance(refs, list):
                raise ValueError("supporting_refs must be a list")
            return cls(
                proposal_id=_text(fields, "proposal_id"),
                target=_text(fields, "target"),
                proposed_change=_text(fields, "proposed_change"),
                supporting_refs=tuple(str(ref) for ref in refs),
                expected_benefit=_text(fields, "expected_benefit"),
                risk=_text(fields, "risk"),
                proposed_by=_text(fields, "proposed_by"),
                proposed_at=parse_timestamp(fields["proposed_at"], "proposed_at"),
                status=_text(fields, "status"),
            )
        except (UnicodeDecodeError, ValueError, KeyError, RecordError) as exc:
            raise ProposalError(f"not a policy proposal file: {exc}", path=path) from None


def _text(fields: dict[str, Any], name: str) -> str:
    value = fields[name]
    if not isinstance(value, str):
        raise ValueError(f"{name} must be text")
    return value


def proposals_folder(log: OperationLog) -> Path | None:
    """Return ``<home>/proposals`` for a Home's log (a ``JsonlLog`` over ``<home>/log``), else ``None``."""
    from agent_memory.log.jsonl import JsonlLog

    return log.folder.parent / "proposals" if isinstance(log, JsonlLog) else None


class PolicyBox:
    """Where proposals wait for review: files in a folder, or memory.

    Args:
        folder: ``<home>/proposals``, or ``None`` to hold proposals in memory.
    """

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self._held: dict[str, PolicyProposal] = {}

    def keep(self, proposal: PolicyProposal) -> None:
        """Store a new proposal; an existing one with that id is never overwritten.

        Raises:
            ProposalError: The id is taken, or the file cannot be written.
        """
        if self.folder is None:
            if proposal.proposal_id in self._held:
                raise ProposalError("a proposal with this id exists", record_id=proposal.proposal_id)
            self._held[proposal.proposal_id] = proposal
            return
        path = self.folder / f"{proposal.proposal_id}.yaml"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with path.open("xb") as handle:
                handle.write(proposal.to_yaml())
        except OSError as exc:
            raise ProposalError(f"cannot write the proposal: {exc}", path=str(path)) from None

    def list(self) -> list[PolicyProposal]:
        """Return every proposal, by id.

        Raises:
            ProposalError: A proposal file cannot be read (naming it).
        """
        if self.folder is None:
            return [self._held[k] for k in sorted(self._held)]
        if not self.folder.is_dir():
            return []
        files = sorted(p for p in self.folder.iterdir() if _FILE.match(p.name))
        return [PolicyProposal.from_yaml(p.read_bytes(), path=str(p)) for p in files]

    def highest_ordinal(self, day: str) -> int:
        """Return the highest ``NNN`` of the proposals of ``day`` (``YYYY-MM-DD``) held here, or 0."""
        if self.folder is None:
            names = [f"{k}.yaml" for k in self._held]
        else:
            names = [p.name for p in self.folder.glob(f"mempolicy-{day}-*.yaml")]
        ordinals = [int(m[2]) for m in map(_FILE.match, names) if m and m[1] == day]
        return max(ordinals, default=0)
