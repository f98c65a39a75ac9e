"""``Memory.supersede`` refuses the record's current text: the one check the CLI and MCP rely on."""

from __future__ import annotations

import pytest

from agent_memory.errors import RecordError
from agent_memory.memory import Memory
from memory.conftest import T0, at


@pytest.mark.parametrize("same", ["Backups run nightly at 02:00", "  Backups run nightly at 02:00\n"])
def test_supersede_with_the_current_text_is_refused_and_writes_nothing(memory: Memory, same: str) -> None:
    record = memory.remember("Backups run nightly at 02:00", source="ops", now=T0).record_id
    head = memory.log.last()
    with pytest.raises(RecordError, match="identical to the record's current text") as info:
        memory.supersede(record, same, source="ops", reason="no change", now=at(1))
    assert (info.value.record_id, info.value.field, info.value.hint) == (
        record,
        "text",
        "give the corrected text",
    )
    assert len(memory.history(record)) == 1 and memory.log.last() == head
    changed = memory.supersede(
        record, "Backups run nightly at 03:00", source="ops", reason="moved", now=at(1)
    )
    assert memory.get(record).superseded_by == changed.record_id
