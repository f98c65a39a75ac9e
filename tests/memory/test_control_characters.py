"""Remember and supersede refuse control characters through the Python API (issue 11, input limits)."""

from __future__ import annotations

import pytest

from agent_memory.errors import RecordError
from agent_memory.memory import Memory


def test_remember_and_supersede_refuse_a_control_character_and_write_nothing(memory: Memory) -> None:
    # The screen names the argument the caller passed, `text` (issue 18: one error shape).
    kept = memory.remember("The wiki is at wiki.internal.", source="s").record_id
    head = memory.log.last()
    with pytest.raises(RecordError, match=r"^text: holds the control character U\+001B at character 7"):
        memory.remember("Hello \x1b[2Jworld", source="s")
    with pytest.raises(RecordError, match=r"^text: holds the control character U\+0007 at character 5"):
        memory.supersede(kept, "Wiki\x07 moved", source="s", reason="moved")
    assert memory.log.last() == head
    assert [r.body for r in memory.store.list()] == ["The wiki is at wiki.internal."]


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"source": "session\x1b]8;;"}, "source"),
        ({"kind": "state", "subject": "host:\x07staging"}, "subject"),
        ({"tags": ("ok", "bad\x9b")}, "tags"),
    ],
)
def test_python_callers_meet_the_same_screen_as_the_cli_and_mcp(
    memory: Memory, options: dict[str, object], field: str
) -> None:
    head = memory.log.last()
    given = {"source": "s", **options}
    with pytest.raises(RecordError, match=rf"^{field}: holds the control character U\+00"):
        memory.remember("The wiki is at wiki.internal.", **given)  # type: ignore[arg-type]
    assert memory.log.last() == head and memory.store.list() == []
    kept = memory.remember("The wiki moved to wiki2.internal.", source="s").record_id
    head = memory.log.last()
    with pytest.raises(RecordError, match=r"^source: holds the control character U\+001B"):
        memory.supersede(kept, "The wiki is at wiki3.internal.", source="s\x1b", reason="moved")
    assert memory.log.last() == head
