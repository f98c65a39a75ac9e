"""Helpers for the jobs tests: a fixed clock in Tokyo (local days and UTC days differ), records, reviews."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from agent_memory.governance.controls import WithdrawalScope, plan_withdrawal
from agent_memory.governance.gate import Gate
from agent_memory.governance.portability import append_control
from agent_memory.home import Home
from agent_memory.records.lifecycle import begin_transition, supersede
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.records.signing import KeyPair, sign_record

# 2026-11-29 14:30 UTC is 23:30 in Tokyo: half an hour before the local day turns.
T0 = datetime(2026, 11, 29, 14, 30, tzinfo=UTC)
ZONE = "Asia/Tokyo"


def at(hours: float = 0, days: float = 0) -> datetime:
    return T0 + timedelta(days=days, hours=hours)


def make(body: str, *, hours: float = 0, ref: str = "test:jobs", **fields: Any) -> MemoryRecord:
    """A new active record created ``hours`` after T0."""
    return MemoryRecord.create(
        type=fields.pop("type", "fact"),
        body=body,
        provenance=Provenance(kind="test", ref=ref),
        created_at=at(hours),
        **fields,
    )


def put(home: Home, *records: MemoryRecord) -> None:
    """Put ``records`` as a writer of the Home does: each unsigned one signed by its key."""
    store, keys = home.store(), home.identity()
    for record in records:
        store.put(record if record.signature else sign_record(record, keys))


def put_superseded(home: Home, old: MemoryRecord, new: MemoryRecord) -> None:
    """Write ``old``, ``new`` (which names it) and old's superseded version."""
    put(home, old, new, supersede(old, new, "newer value", now=new.created_at))


def put_dispute(home: Home, a: MemoryRecord, b: MemoryRecord) -> None:
    put(home, a, b, *begin_transition(a, b, "they disagree", now=at(5)))


def review(home: Home, record_id: str, verdict: str) -> None:
    home.log().append(
        "review", actor="owner", record_ids=[record_id], details={"verdict": verdict, "reason": ""}
    )


def withdraw(home: Home, record_id: str) -> None:
    state = Gate(home.log(), home.store()).state()
    control = plan_withdrawal(
        state,
        WithdrawalScope(memory_item_ids=(record_id,)),
        reason="failed-exploration",
        actor="owner",
        now=at(6),
        zone=home.settings.zone,
    )
    append_control(home.log(), control, actor="owner", now=at(6))


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` but the writer lock: relative path -> bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "writer.lock"
    }


def signed_by(keys: KeyPair | None, versions: list[MemoryRecord]) -> list[MemoryRecord]:
    """``versions`` as ``accept``/``revert`` write them: each unsigned one signed by the Home's key."""
    if keys is None:
        return versions
    return [v if v.signature else sign_record(v, keys) for v in versions]
