"""Dates named in a question, read against the time it is asked, and the date boost they give.

A question such as "What did I buy four weeks ago?" or "Who did I meet last Saturday?" names
a time that no word of the answer's note repeats: the note only carries its event date
(``occurred_at``, for an imported conversation the session's date). :func:`date_window`
turns the phrase into a span of days, resolved against the question's time ``now``, and
:func:`boost_dates` lifts the candidates whose event date falls in (or near) that span.

What is read (English only, case-insensitive; the first phrase found wins):

- ``N days|weeks|months ago`` with N a number or a word up to twelve (``a``, ``a couple
  of``, ``a few``): the day N units before ``now`` (a month counts 30 days), widened on each
  side by 1 day (days), 3 (weeks), 10 (months) or 60 (years), or by 15% of the distance back
  when that is more;
- ``yesterday``; ``last Monday`` … ``last Sunday`` (the latest such day before ``now``);
  ``last week``, ``last weekend``, ``last month``, ``last year``; ``this week|month|year``;
  ``the past|last N days|weeks|months`` (from N units before ``now`` to ``now``);
- month names (``in March``, ``in the month of February``, ``from July to October``): the
  latest such month (or span of months) that began on or before ``now``; named days such as
  ``Valentine's day`` are not read.

Anything else gives ``None`` and no boost, so a question without a date ranks as before.

Invariant: the window depends only on the text and ``now``; it never reads the notes.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from agent_memory.search.base import Hit

__all__ = ["DATE_WEIGHT", "Window", "boost_dates", "date_window"]

DATE_WEIGHT = 0.5
"""Share of the best candidate's score added to a candidate dated inside the question's window.
docs/benchmarks.md, Retrieval quality: 0.15-0.8 were measured; 0.5 gave the best LongMemEval_S
session recall_all@5 and LoCoMo recall@10, 0.8 the same LongMemEval NDCG@10."""

Window = tuple[datetime, datetime]
"""``(first, last)`` instants of the span a question names, inclusive, in ``now``'s time zone."""

_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "couple of": 2,
    "a few": 3,
    "few": 3,
}
_NUMBER = (
    r"(\d{1,3}|a couple of|couple of|a few|few|an?"
    r"|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
)
_UNIT = r"(day|week|month|year)s?"
_AGO = re.compile(rf"\b{_NUMBER}\s+{_UNIT}\s+ago\b", re.IGNORECASE)
_PAST = re.compile(rf"\b(?:the\s+)?(?:past|last)\s+{_NUMBER}\s+{_UNIT}\b", re.IGNORECASE)
_WEEKDAYS = [d.lower() for d in calendar.day_name]
_LAST_DAY = re.compile(r"\blast\s+(" + "|".join(_WEEKDAYS) + r")\b", re.IGNORECASE)
_LAST_SPAN = re.compile(r"\b(last|this|past)\s+(weekend|week|month|year)\b", re.IGNORECASE)
_MONTHS = [m.lower() for m in calendar.month_name if m]
_MONTH = "|".join(_MONTHS)
_MONTH_SPAN = re.compile(rf"\bfrom\s+({_MONTH})\s+(?:to|until|through)\s+({_MONTH})\b", re.IGNORECASE)
_IN_MONTH = re.compile(rf"\b(?:in|during|of)\s+(?:the\s+month\s+of\s+)?({_MONTH})\b", re.IGNORECASE)
_YESTERDAY = re.compile(r"\byesterday\b", re.IGNORECASE)
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_TOLERANCE_DAYS = {"day": 1, "week": 3, "month": 10, "year": 60}
_SLACK = 0.15  # share of the distance back added on each side, when more than the tolerance


def _count(word: str) -> int:
    word = " ".join(word.lower().split())
    return int(word) if word.isdigit() else _NUMBERS[word]


def _day(when: datetime) -> datetime:
    return when.replace(hour=0, minute=0, second=0, microsecond=0)


def _span(first: datetime, last: datetime) -> Window:
    return _day(first), _day(last) + timedelta(days=1) - timedelta(microseconds=1)


def _month_start(now: datetime, month: int) -> datetime:
    """The first day of the latest month ``month`` that began on or before ``now``."""
    year = now.year if month <= now.month else now.year - 1
    return _day(now).replace(year=year, month=month, day=1)


def _month_end(start: datetime) -> datetime:
    return start.replace(day=calendar.monthrange(start.year, start.month)[1])


def date_window(text: str, now: datetime) -> Window | None:
    """Return the span of days ``text`` names relative to ``now`` (module docstring), or ``None``.

    Args:
        text: The question, any user text.
        now: When the question is asked (aware or naive; the window has its time zone).

    Returns:
        ``(first, last)``, whole days, inclusive; ``None`` when no phrase is read. Never raises.
    """
    if m := _AGO.search(text):
        unit = m.group(2).lower()
        back = timedelta(days=_count(m.group(1)) * _UNIT_DAYS[unit])
        slack = max(timedelta(days=_TOLERANCE_DAYS[unit]), back * _SLACK)
        return _span(now - back - slack, now - back + slack)
    if m := _PAST.search(text):
        unit = m.group(2).lower()
        return _span(now - timedelta(days=_count(m.group(1)) * _UNIT_DAYS[unit]), now)
    if _YESTERDAY.search(text):
        return _span(now - timedelta(days=1), now - timedelta(days=1))
    if m := _LAST_DAY.search(text):
        days = (now.weekday() - _WEEKDAYS.index(m.group(1).lower())) % 7 or 7
        day = now - timedelta(days=days)
        return _span(day - timedelta(days=1), day + timedelta(days=1))
    if m := _LAST_SPAN.search(text):
        which, unit = m.group(1).lower(), m.group(2).lower()
        if unit == "weekend":
            days = (now.weekday() - 5) % 7 or 7
            saturday = now - timedelta(days=days)
            return _span(saturday - timedelta(days=1), saturday + timedelta(days=2))
        if (which in ("last", "past") and unit in ("week", "year")) or which == "past":
            return _span(now - timedelta(days=_UNIT_DAYS[unit]), now)
        if unit == "week":
            return _span(now - timedelta(days=now.weekday()), now)
        if unit == "year":
            return _span(_day(now).replace(month=1, day=1), now)
        start = _day(now).replace(day=1)
        if which == "last":
            start = (start - timedelta(days=1)).replace(day=1)
            return _span(start, _month_end(start))
        return _span(start, now)
    if m := _MONTH_SPAN.search(text):
        first = _month_start(now, _MONTHS.index(m.group(1).lower()) + 1)
        last = _month_start(now, _MONTHS.index(m.group(2).lower()) + 1)
        if last < first:
            first = first.replace(year=first.year - 1)
        return _span(first, min(_month_end(last), now))
    if m := _IN_MONTH.search(text):
        start = _month_start(now, _MONTHS.index(m.group(1).lower()) + 1)
        return _span(start, min(_month_end(start), now))
    return None


def boost_dates(
    hits: Sequence[Hit], dates: Mapping[str, datetime], window: Window, weight: float = DATE_WEIGHT
) -> list[Hit]:
    """Add ``weight ×`` the best score to every hit whose event date lies in ``window``.

    Args:
        hits: Scored candidates, scores > 0 (any order).
        dates: ``{record id: event date}``; an id absent has no date and is not boosted.
        window: The span from :func:`date_window`.
        weight: The share of the best score added, ≥ 0.

    Returns:
        The same ids, re-scored, sorted by (−score, record id).
    """
    if not hits:
        return []
    top = max(hit.score for hit in hits)
    first, last = window
    boosted = []
    for hit in hits:
        when = dates.get(hit.record_id)
        inside = when is not None and first <= when <= last
        boosted.append((-(hit.score + (weight * top if inside else 0.0)), hit.record_id))
    return [Hit(record_id, -negative) for negative, record_id in sorted(boosted)]
