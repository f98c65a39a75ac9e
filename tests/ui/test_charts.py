"""The plots count what they show: records per month by state and kind, the review backlog."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent_memory.records.lifecycle import archive
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.ui.charts import backlog, timeline


def made(body: str, month: int, **fields: object) -> MemoryRecord:
    when = datetime(2026, month, 3, tzinfo=UTC)
    return MemoryRecord.create(
        type="fact", body=body, provenance=Provenance("cli", "t"), created_at=when, **fields
    )


def test_the_timeline_stacks_each_months_records_by_state_and_by_kind() -> None:
    records = [
        made("one", 1),
        made("two", 1, kind="state", subject="host:a"),
        archive(made("three", 3), "done", now=datetime(2026, 3, 4, tzinfo=UTC)),
    ]
    by_state = timeline(records, UTC, by="state")
    assert [b.title for b in by_state.bars] == ["2026-01: 2 active", "2026-03: 1 archived"]
    assert by_state.peak == 2 and [text for _, text in by_state.labels] == ["2026-01", "2026-03"]
    by_kind = timeline(records, UTC, by="kind")
    assert sorted(b.title for b in by_kind.bars) == [
        "2026-01: 1 knowledge",
        "2026-01: 1 state",
        "2026-03: 1 knowledge",
    ]
    tallest = max(by_state.bars, key=lambda b: b.height)
    assert tallest.title == "2026-01: 2 active" and tallest.height == pytest.approx(
        2 * by_state.bars[1].height
    )


def test_the_backlog_draws_one_bar_per_queue_scaled_to_the_longest() -> None:
    chart = backlog([("quarantined", 4), ("disputes", 2), ("proposals", 0)])
    widths = [b.width for b in chart.bars]
    assert widths[0] == pytest.approx(2 * widths[1]) and widths[2] == 0
    assert [text for _, text in chart.labels] == ["quarantined (4)", "disputes (2)", "proposals (0)"]


def test_a_timeline_refuses_an_unknown_grouping() -> None:
    with pytest.raises(ValueError, match="by must be"):
        timeline([], UTC, by="tag")
