"""Plots where people would rather look than read: records over time by state and kind, the review backlog.

Drawn on the server as plain SVG shapes (no script, no library, nothing fetched): this module
computes every bar's position and size, the templates only place them. Months are the Home's
local calendar months of each record's ``created_at`` (when the memory was written).

Invariant: the numbers drawn are counts of the records given (the latest versions the browse
page lists) and of the review page's queues; nothing is sampled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import tzinfo
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_memory.records.record import MemoryRecord

__all__ = ["MONTHS_SHOWN", "Bar", "Chart", "backlog", "timeline"]

MONTHS_SHOWN = 24
"""The timeline shows at most the last this many months that hold records."""
WIDTH, HEIGHT, BASE = 640, 150, 130
STATE_COLOURS = {
    "active": "#3a8f57",
    "transitional": "#d08a1e",
    "superseded": "#9aa5b1",
    "archived": "#c9d0d8",
}
KIND_COLOURS = {"knowledge": "#2457c5", "state": "#8e5cc2"}


@dataclass(frozen=True, slots=True)
class Bar:
    """One rectangle: position and size in SVG units, its colour, and what it counts."""

    x: float
    y: float
    width: float
    height: float
    colour: str
    title: str


@dataclass(frozen=True, slots=True)
class Chart:
    """A chart ready to draw.

    Attributes:
        title: What it shows.
        bars: The rectangles.
        labels: ``(x, text)`` under the axis.
        legend: ``(colour, name)`` pairs.
        peak: The largest total (the axis' top).
    """

    title: str
    bars: tuple[Bar, ...]
    labels: tuple[tuple[float, str], ...]
    legend: tuple[tuple[str, str], ...]
    peak: int


def _months(records: Iterable[MemoryRecord], zone: tzinfo, key: str) -> dict[str, Counter[str]]:
    by_month: dict[str, Counter[str]] = {}
    for record in records:
        month = record.created_at.astimezone(zone).strftime("%Y-%m")
        value = record.state.value if key == "state" else record.effective_kind.value
        by_month.setdefault(month, Counter())[value] += 1
    return by_month


def timeline(records: Sequence[MemoryRecord], zone: tzinfo, *, by: str = "state") -> Chart:
    """Return stacked monthly bars of ``records`` by ``by`` (``state`` or ``kind``), the latest months.

    At most :data:`MONTHS_SHOWN` months, the last that hold records; bar heights share one scale.

    Raises:
        ValueError: ``by`` is neither ``state`` nor ``kind``.
    """
    if by not in ("state", "kind"):
        raise ValueError(f"by must be 'state' or 'kind', got {by!r}")
    colours = STATE_COLOURS if by == "state" else KIND_COLOURS
    by_month = _months(records, zone, by)
    months = sorted(by_month)[-MONTHS_SHOWN:]
    peak = max((sum(by_month[m].values()) for m in months), default=0)
    step = WIDTH / max(len(months), 1)
    bars: list[Bar] = []
    labels: list[tuple[float, str]] = []
    for n, month in enumerate(months):
        x, top = n * step + step * 0.1, float(BASE)
        for value, colour in colours.items():
            count = by_month[month].get(value, 0)
            if not count:
                continue
            height = (BASE - 10) * count / peak
            top -= height
            bars.append(Bar(x, top, min(step * 0.8, 40.0), height, colour, f"{month}: {count} {value}"))
        if n % max(1, len(months) // 8) == 0 or n == len(months) - 1:
            labels.append((x, month))
    legend = tuple((colour, name) for name, colour in colours.items())
    title = f"Records written per month, by {by}"
    return Chart(title, tuple(bars), tuple(labels), legend, peak)


def backlog(counts: Sequence[tuple[str, int]]) -> Chart:
    """Return horizontal bars of what waits for review: ``(name, count)`` each, in order."""
    peak = max((count for _, count in counts), default=0)
    bars = tuple(
        Bar(170, 8 + n * 26, (WIDTH - 220) * count / peak if peak else 0, 18, "#2457c5", f"{name}: {count}")
        for n, (name, count) in enumerate(counts)
    )
    labels = tuple((float(8 + n * 26 + 14), f"{name} ({count})") for n, (name, count) in enumerate(counts))
    return Chart("Review backlog", bars, labels, (), peak)
