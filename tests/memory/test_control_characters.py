"""Remember and supersede refuse control characters through the Python API (issue 11, input limits)."""

from __future__ import annotations

import pytest

from agent_memory.errors import RecordError
from agent_memory.memory import Memory


def test_remember_and_supersede_refuse_a_control_character_and_write_nothing(memory: Memory) -> None:
    kept = memory.remember("The wiki is at wiki.internal.", source="s").record_id
    head = memory.log.last()
    with pytest.raises(RecordError, match=r"^body: holds the control character U\+001B at character 7"):
        memory.remember("Hello \x1b[2Jworld", source="s")
    with pytest.raises(RecordError, match=r"^body: holds the control character U\+0007 at character 5"):
        memory.supersede(kept, "Wiki\x07 moved", source="s", reason="moved")
    assert memory.log.last() == head
    assert [r.body for r in memory.store.list()] == ["The wiki is at wiki.internal."]
