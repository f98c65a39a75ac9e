"""The structured results of the maintenance and governance tools: reports, controls and receipts.

One closed model per result (:class:`~agent_memory.mcp.results.Out`), built from the
porcelain's own wire forms so the MCP tools, the CLI's ``--json`` and the log never drift
apart: the consolidation report (origin-notes §1.18 keys first: ``actions`` of ``{pass,
action, records, reason}`` and ``rejections`` as a count), the ``erasure-tombstone-v1``
receipt (seed 000 §12.3) behind the origin's ``redact`` keys (``record_id``, ``redacted``,
``reason``), ``withdrawal-control-v1`` records (seed 000 §12.2) and the five-line forget
surface receipt (seed 000 §12.1). Every array declares ``items``; every time is RFC 3339
with an offset; no result holds erased content.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import Field

from agent_memory.governance.controls import SELECTORS, WithdrawalControl
from agent_memory.governance.erasure.receipt import ErasureReceipt
from agent_memory.governance.forget import SURFACES, ForgetReceipt
from agent_memory.jobs.consolidate import ConsolidationReport
from agent_memory.mcp.results import Out, RecordId, StateName, Timestamp

__all__ = [
    "ConsolidateOut",
    "ControlOut",
    "ForgetOut",
    "RedactOut",
    "ReinstateOut",
]

WithdrawalId = Annotated[
    str, Field(pattern=r"^memwd-\d{4}-\d{2}-\d{2}-\d{3,}$", description="memwd-YYYY-MM-DD-NNN.")
]
Surface = Literal[
    "Context / Workspace",
    "Original project",
    "Temporary exploration workspace",
    "Promoted / derived artifacts",
    "Memory",
]


class ActionOut(Out):
    """A change a pass applied (supersede, transition) or a record it protected (protect)."""

    pass_: str = Field(alias="pass", description="The pass: dedup.exact, contradiction, decay…")
    action: str
    records: list[RecordId] = Field(description="The records it concerns.")
    before: list[StateName] = Field(description="Their states before, in the order of records.")
    after: list[StateName] = Field(description="Their states after.")
    reason: str


class ProposalOut(Out):
    """A change left pending for a person's review (agent-memory accept or reject)."""

    id: str = Field(pattern=r"^(?:cons|dist)-[0-9a-f]{16}$", description="The proposal id (cons-…).")
    pass_: str = Field(alias="pass")
    action: str = Field(description="merge, supersede, create-rule, flag, unflag or archive.")
    records: list[RecordId]
    reason: str


class RejectionOut(Out):
    """A change the proposal gate refused or a pass deferred; nothing was written for it."""

    pass_: str = Field(alias="pass")
    detail: str
    records: list[RecordId]


class ConsolidateOut(Out):
    """What one consolidation pass proposed and refused (origin keys first); it applies nothing.

    ``actions`` holds only the records decay left alone (``protect``): every change is a proposal.
    """

    actions: list[ActionOut]
    rejections: int = Field(description="How many changes were refused or deferred (the origin's count).")
    proposals: list[ProposalOut] = Field(description="Pending changes; never applied by this tool.")
    rejected: list[RejectionOut] = Field(description="The refused or deferred changes, each with why.")
    stats: dict[str, int] = Field(description="Counts: records read, withdrawn skipped, pairs compared…")
    dry_run: bool = Field(description="True when nothing was written, filed or logged.")
    filed_in: str | None = Field(description="Where the proposals were filed, relative to the Home.")
    branch: str | None = Field(
        description="The maintenance/<stamp> git branch they were committed on, if any."
    )

    @classmethod
    def of(cls, report: ConsolidationReport, *, dry_run: bool, filed_in: str | None) -> ConsolidateOut:
        """Build the tool result from the porcelain's report."""
        data = report.to_json()
        return cls.model_validate(
            {
                "actions": [_records(a) for a in data["actions"]],
                "rejections": len(data["rejections"]),
                "proposals": [_records(p) for p in data["proposals"]],
                "rejected": [_records(r) for r in data["rejections"]],
                "stats": data["stats"],
                "dry_run": dry_run,
                "filed_in": None if dry_run else filed_in,
                "branch": data.get("branch"),
            }
        )


def _records(item: dict[str, Any]) -> dict[str, Any]:
    """The report's ``record_ids`` under the origin's key ``records``."""
    rest = {k: v for k, v in item.items() if k != "record_ids"}
    return {**rest, "records": item.get("record_ids", [])}


class HolderOut(Out):
    """One holder of the erased records and what the erasure achieved there."""

    holder_ref: str = Field(description="A path in the Home, record:mem:…, or a name (git-history).")
    result: Literal["completed", "partially-completed", "unevaluated"]
    limitation_ref: str | None = Field(description="Why it is not completed (a fixed word), if so.")


class LineageOut(Out):
    """An archive file the erasure rewrote: its old and new identities (the full lineage is logged)."""

    file: str
    old_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    new_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    items: list[str] = Field(description="The archive items (anchors) removed from it.")


class ReceiptOut(Out):
    """The erasure-tombstone-v1 receipt (seed 000 §12.3); it never quotes erased content."""

    erasure_id: str = Field(pattern=r"^memerase-\d{4}-\d{2}-\d{2}-\d{3,}$", description="memerase-…")
    record_type: Literal["erasure-tombstone-v1"]
    scope_refs: list[RecordId] = Field(description="Every record erased (the one named and the cascade).")
    authority_ref: str = Field(description="Who or what authorized it.")
    decided_by: str = Field(description="The actor who executed it (holds the erase grant).")
    reason: str
    decided_at: Timestamp
    executed_at: Timestamp
    holders: list[HolderOut]
    sanitized_replacement_refs: list[str] = Field(description="Files rewritten without the content.")
    removed_refs: list[str] = Field(description="Files deleted because they held it.")
    archive_lineage: list[LineageOut] = Field(description="Archive files given new identities.")


class RedactOut(Out):
    """An erased record (the origin's redact keys) and the erasure receipt."""

    record_id: RecordId
    redacted: Literal[True]
    reason: str
    complete: bool = Field(description="True when every holder is completed.")
    receipt: ReceiptOut

    @classmethod
    def of(cls, record_id: str, receipt: ErasureReceipt) -> RedactOut:
        """Build the tool result from the porcelain's receipt."""
        return cls.model_validate(
            {
                "record_id": record_id,
                "redacted": True,
                "reason": receipt.reason,
                "complete": receipt.complete,
                "receipt": receipt.to_wire(),
            }
        )


class ScopeOut(Out):
    """A withdrawal scope: the union of its selectors (empty lists select nothing)."""

    memory_item_ids: list[RecordId]
    archive_refs: list[str]
    source_or_run_refs: list[str]
    namespaces: list[str]


class ControlOut(Out):
    """A withdrawal-control-v1 record that was appended to the log (seed 000 §12.2)."""

    withdrawal_id: WithdrawalId
    record_type: Literal["withdrawal-control-v1"]
    action: Literal["withdraw", "reinstate"]
    scope: ScopeOut
    reason: str
    decided_by: str
    decided_at: Timestamp
    effect: Literal["exclude-from-influence", "restore-eligibility"]
    supersedes: WithdrawalId | None = Field(description="The withdrawal a reinstatement lifts.")

    @classmethod
    def of(cls, control: WithdrawalControl, **more: Any) -> Self:
        """Build the tool result from a control record (every selector listed, empty or not)."""
        wire = control.to_wire()
        scope = {name: list(getattr(control.scope, name)) for name in SELECTORS}
        return cls.model_validate({**wire, "scope": scope, **more})


class ReinstateOut(ControlOut):
    """A reinstatement, and the withdrawals that still keep the same scope out (fail closed)."""

    still_withdrawn_by: list[WithdrawalId] = Field(
        description="Other withdrawals in force on this exact scope; it stays excluded until they are lifted."
    )


class SurfaceOut(Out):
    """One line of the forget receipt."""

    surface: Surface
    text: str = Field(description="What was done there, or honestly what was not.")


class ForgetOut(Out):
    """The seed 000 §12.1 surface receipt: what a forget request did on each of five surfaces."""

    receipt: str = Field(description="The five lines, 'Surface: text', newline-terminated.")
    surfaces: list[SurfaceOut] = Field(min_length=5, max_length=5, description="The five lines, in order.")
    withdrawal_id: WithdrawalId | None = Field(description="The withdrawal written; null if nothing entered.")
    covered: list[RecordId] = Field(
        description="Records newly excluded (the scope and what derives from it)."
    )
    promoted: list[str] = Field(description="Promoted artifacts that still carry rules from this scope.")
    erased: Literal[False] = Field(description="Always false: forget withdraws (reversibly), never erases.")

    @classmethod
    def of(cls, receipt: ForgetReceipt) -> ForgetOut:
        """Build the tool result from the router's receipt."""
        data = receipt.to_json()
        return cls.model_validate(
            {
                **data,
                "receipt": receipt.render(),
                "surfaces": [{"surface": s, "text": data["surfaces"][s]} for s in SURFACES],
            }
        )
