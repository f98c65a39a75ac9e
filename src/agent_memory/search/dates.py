"""Dates named in a question, read against the time it is asked, and the date boost they give.

A question such as "What did I buy four weeks ago?" or "Who did I meet last Saturday?" names
a time that no word of the answer's note repeats: the note only carries its event date
(``occurred_at``, for an imported conversation the session's date). :func:`date_window`
turns the phrase into a span of days, resolved against the question's time ``now``, and
:func:`boost_dates` lifts the candidates whose event date falls in (or near) that span.

What is read (English only, case-insensitive; within each group the first phrase listed wins,
and the groups are tried in this order):

1. a month with its year (``in March 2025``, ``March of 2025``, ``March, 2025``, ``from July
   2024 to March 2025``, ``March last year``, ``in March this year``): those whole months;
2. ``N days|weeks|months ago`` with N a number or a word up to twelve (``a``, ``a couple
   of``, ``a few``): the day N units before ``now`` (a month counts 30 days), widened on each
   side by 1 day (days), 3 (weeks), 10 (months) or 60 (years), or by 15% of the distance back
   when that is more; ``the past|last N days|weeks|months`` (from N units before ``now`` to
   ``now``); ``yesterday``; ``last Monday`` … ``last Sunday`` (the latest such day before
   ``now``, ± 1 day);
3. calendar units, alike for week (Monday to Sunday), month and year: ``last week|month|year``
   is the whole previous one, ``this week|month|year`` runs from its first day to ``now``;
   ``the past week|month|year`` and ``the last week|month|year`` ("in the last month") are
   the 7, 30 or 365 days before ``now``; ``last weekend`` is the previous week's Saturday and
   Sunday, ``this weekend`` this week's (each widened to Friday .. Monday);
4. a month without a year (``in March``, ``in the month of February``, ``from July to
   October``): the latest such month (or span of months) that began on or before ``now``;
5. a year alone (``in 2025``, ``during 2024``, ``the year 2023``, ``between 2022 and 2024``):
   those whole calendar years (19xx and 20xx only).

Named days such as ``Valentine's day``, dates to the day (``March 5, 2025``) and ``since …``
are not read. A calendar span (month, year, week, weekend) that has begun ends at ``now``.
Anything else gives ``None`` and no boost, so a question without a date ranks as before. The
boost only re-orders candidates the word and vector search already found, and only those
whose conversation thread carries an event date (:func:`~.threads.thread_time`); a note
written without such a source anchor (``doc#path/leaf``) and ``occurred_at`` has no date here
(docs/settings.md, "How recall reads dates").

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
_LAST_SPAN = re.compile(r"\b(the\s+)?(last|this|past)\s+(weekend|week|month|year)\b", re.IGNORECASE)
_OF = re.compile(r"\s+of\b", re.IGNORECASE)
_MONTHS = [m.lower() for m in calendar.month_name if m]
_MONTH = "|".join(_MONTHS)
_YEAR = r"((?:19|20)\d\d)"
_MONTH_SPAN = re.compile(
    rf"\bfrom\s+({_MONTH})(?:\s*,?\s*{_YEAR})?\s+(?:to|until|through)\s+({_MONTH})(?:\s*,?\s*{_YEAR})?\b",
    re.IGNORECASE,
)
_MONTH_YEAR = re.compile(rf"\b({_MONTH})(?:\s*,\s*|\s+of\s+|\s+in\s+|\s+){_YEAR}\b", re.IGNORECASE)
_MONTH_NAMED_YEAR = re.compile(rf"\b({_MONTH})\s+(?:of\s+)?(last|this)\s+year\b", re.IGNORECASE)
_IN_MONTH = re.compile(rf"\b(?:in|during|of)\s+(?:the\s+month\s+of\s+)?({_MONTH})\b", re.IGNORECASE)
_YEAR_SPAN = re.compile(
    rf"\b(?:from|between)\s+{_YEAR}\s+(?:to|until|through|and)\s+{_YEAR}\b", re.IGNORECASE
)
_IN_YEAR = re.compile(
    rf"\b(?:(?:in|during|throughout)\s+(?:the\s+(?:whole\s+|entire\s+)?year\s+(?:of\s+)?)?"
    rf"|the\s+year\s+(?:of\s+)?){_YEAR}\b",
    re.IGNORECASE,
)
_YESTERDAY = re.compile(r"\byesterday\b", re.IGNORECASE)
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_TOLERANCE_DAYS = {"day": 1, "week": 3, "month": 10, "year": 60}
_SLACK = 0.15  # share of the distance back added on each side, when more than the tolerance


def _count(word: str) -> int:
    word = " ".join(word.lower().split())
    return int(word) if word.isdigit() else _NUMBERS[word]


def _month_number(name: str) -> int:
    return _MONTHS.index(name.lower()) + 1


def _day(when: datetime) -> datetime:
    return when.replace(hour=0, minute=0, second=0, microsecond=0)


def _span(first: datetime, last: datetime) -> Window:
    return _day(first), _day(last) + timedelta(days=1) - timedelta(microseconds=1)


def _upto(first: datetime, last: datetime, now: datetime) -> Window:
    """Whole days ``first`` .. ``last``, cut at ``now`` when the span has begun by then."""
    return _span(first, min(last, now) if first <= now else last)


def _month_start(now: datetime, month: int) -> datetime:
    """The first day of the latest month ``month`` that began on or before ``now``."""
    year = now.year if month <= now.month else now.year - 1
    return _day(now).replace(year=year, month=month, day=1)


def _month_end(start: datetime) -> datetime:
    return start.replace(day=calendar.monthrange(start.year, start.month)[1])


def _named_months(now: datetime, text: str) -> Window | None:
    """Months and years named outright: ``March 2025``, ``March last year``, ``from May to July 2024``."""
    if (m := _MONTH_SPAN.search(text)) and (m.group(2) or m.group(4)):
        first_month, last_month = _month_number(m.group(1)), _month_number(m.group(3))
        if m.group(2) and m.group(4):
            first_year, last_year = int(m.group(2)), int(m.group(4))
        elif m.group(4):
            last_year = int(m.group(4))
            first_year = last_year if first_month <= last_month else last_year - 1
        else:
            first_year = int(m.group(2))
            last_year = first_year if first_month <= last_month else first_year + 1
        first = _day(now).replace(year=first_year, month=first_month, day=1)
        last = _month_end(_day(now).replace(year=last_year, month=last_month, day=1))
        return _upto(first, last, now) if first <= last else None
    if m := _MONTH_YEAR.search(text):
        start = _day(now).replace(year=int(m.group(2)), month=_month_number(m.group(1)), day=1)
        return _upto(start, _month_end(start), now)
    if m := _MONTH_NAMED_YEAR.search(text):
        year = now.year - (m.group(2).lower() == "last")
        start = _day(now).replace(year=year, month=_month_number(m.group(1)), day=1)
        return _upto(start, _month_end(start), now)
    return None


def _relative(now: datetime, text: str) -> Window | None:
    """Spans counted back from ``now``: ``4 weeks ago``, ``yesterday``, ``last month``, ``the past year``."""
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
    for m in _LAST_SPAN.finditer(text):
        the, which, unit = bool(m.group(1)), m.group(2).lower(), m.group(3).lower()
        if the and which == "last" and _OF.match(text, m.end()):
            continue  # "the last week of March": a month's part, read below
        return _calendar_span(now, "past" if the and which == "last" else which, unit)
    return None


def _calendar_span(now: datetime, which: str, unit: str) -> Window:
    """``last``: the previous calendar unit; ``this``: its start to ``now``; ``past``: the unit back."""
    if unit == "weekend":
        monday = _day(now) - timedelta(days=now.weekday())
        saturday = monday + timedelta(days=5 if which == "this" else -2)
        return _upto(saturday - timedelta(days=1), saturday + timedelta(days=2), now)
    if which == "past":
        return _span(now - timedelta(days=_UNIT_DAYS[unit]), now)
    if unit == "week":
        monday = _day(now) - timedelta(days=now.weekday())
        if which == "this":
            return _span(monday, now)
        return _span(monday - timedelta(days=7), monday - timedelta(days=1))
    if unit == "year":
        if which == "this":
            return _span(_day(now).replace(month=1, day=1), now)
        start = _day(now).replace(year=now.year - 1, month=1, day=1)
        return _span(start, start.replace(month=12, day=31))
    start = _day(now).replace(day=1)
    if which == "last":
        start = (start - timedelta(days=1)).replace(day=1)
        return _span(start, _month_end(start))
    return _span(start, now)


def _months_and_years(now: datetime, text: str) -> Window | None:
    """A month without a year (the latest one begun by ``now``), else a year named alone."""
    if m := _MONTH_SPAN.search(text):
        first = _month_start(now, _month_number(m.group(1)))
        last = _month_start(now, _month_number(m.group(3)))
        if last < first:
            first = first.replace(year=first.year - 1)
        return _span(first, min(_month_end(last), now))
    if m := _IN_MONTH.search(text):
        start = _month_start(now, _month_number(m.group(1)))
        return _span(start, min(_month_end(start), now))
    if m := _YEAR_SPAN.search(text):
        first_year, last_year = sorted((int(m.group(1)), int(m.group(2))))
        first = _day(now).replace(year=first_year, month=1, day=1)
        return _upto(first, first.replace(year=last_year, month=12, day=31), now)
    if m := _IN_YEAR.search(text):
        first = _day(now).replace(year=int(m.group(1)), month=1, day=1)
        return _upto(first, first.replace(month=12, day=31), now)
    return None


def date_window(text: str, now: datetime) -> Window | None:
    """Return the span of days ``text`` names relative to ``now`` (module docstring), or ``None``.

    Months and years named outright (``March 2025``, ``March last year``) are read first,
    then spans counted back from ``now`` (``4 weeks ago``, ``last month``), then a month
    without a year (``in March``: the latest March begun by ``now``) and a year alone
    (``in 2025``: the calendar year). Source: issue 10 (LongMemEval temporal questions) and
    the session 4 fresh-user trial (years, calendar ``last year``, the Home's time zone).

    Args:
        text: The question, any user text.
        now: When the question is asked (aware or naive; the window has its time zone, so
            ``yesterday`` is the day before ``now``'s local day). Recall passes its clock in
            the Home's ``timezone`` (``memory.toml``).

    Returns:
        ``(first, last)``, whole days, inclusive; ``None`` when no phrase is read. Never raises.
    """
    return _named_months(now, text) or _relative(now, text) or _months_and_years(now, text)


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
