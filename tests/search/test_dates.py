"""Dates a question names, read against when it is asked, and the hybrid's date boost."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search.base import Hit
from agent_memory.search.dates import DATE_WEIGHT, boost_dates, date_window
from agent_memory.search.fts import FtsIndex
from agent_memory.search.hybrid import HybridIndex
from agent_memory.search.threads import place_of, thread_time

NOW = datetime(2023, 4, 1, 15, 30, tzinfo=UTC)  # a Saturday


def days(text: str, now: datetime = NOW) -> tuple[date, date] | None:
    window = date_window(text, now)
    return None if window is None else (window[0].date(), window[1].date())


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("What kitchen appliance did I buy 10 days ago?", date(2023, 3, 21), date(2023, 3, 24)),  # ± 1.5 days
        ("I mentioned an investment four weeks ago", date(2023, 2, 28), date(2023, 3, 8)),  # ± 4.2 days
        ("a couple of days ago I cooked", date(2023, 3, 29), date(2023, 3, 31)),
        ("What did I do a week ago?", date(2023, 3, 22), date(2023, 3, 28)),
        ("the museum two months ago", date(2023, 1, 21), date(2023, 2, 10)),
        ("yesterday's meeting", date(2023, 3, 31), date(2023, 3, 31)),
        ("Who gave me jewelry last Saturday?", date(2023, 3, 24), date(2023, 3, 26)),
        ("lunch LAST TUESDAY", date(2023, 3, 27), date(2023, 3, 29)),
        ("What game did I beat last weekend?", date(2023, 3, 24), date(2023, 3, 27)),
        ("Where was I last week?", date(2023, 3, 20), date(2023, 3, 26)),  # Monday to Sunday
        ("Where was I in the last week?", date(2023, 3, 25), date(2023, 4, 1)),  # the 7 days back
        ("this week's runs", date(2023, 3, 27), date(2023, 4, 1)),
        ("What certification did I complete last month?", date(2023, 3, 1), date(2023, 3, 31)),
        ("eggs sold this month", date(2023, 4, 1), date(2023, 4, 1)),
        ("plants acquired in the past month", date(2023, 3, 2), date(2023, 4, 1)),
        ("films in the last 3 months", date(2023, 1, 1), date(2023, 4, 1)),
        ("doctor's appointments in March", date(2023, 3, 1), date(2023, 3, 31)),
        ("museums in the month of February", date(2023, 2, 1), date(2023, 2, 28)),
        ("workshops in May", date(2022, 5, 1), date(2022, 5, 31)),  # May 2023 has not begun
        ("talks in April", date(2023, 4, 1), date(2023, 4, 1)),  # began today: up to now
        ("rollercoasters from July to October", date(2022, 7, 1), date(2022, 10, 31)),
        ("the last week of March", date(2023, 3, 1), date(2023, 3, 31)),  # a month's part: the month
    ],
)
def test_a_relative_date_is_read_as_a_span_of_days_before_now(text: str, first: date, last: date) -> None:
    assert days(text) == (first, last)


LATE = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)  # a Monday


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("who did I go to a pottery class with in March 2025?", date(2025, 3, 1), date(2025, 3, 31)),
        ("pottery in march 2025", date(2025, 3, 1), date(2025, 3, 31)),
        ("the trip of February, 2024", date(2024, 2, 1), date(2024, 2, 29)),
        ("during September of 2025", date(2025, 9, 1), date(2025, 9, 30)),
        ("from July 2024 to March 2025", date(2024, 7, 1), date(2025, 3, 31)),
        ("from November to February 2025", date(2024, 11, 1), date(2025, 2, 28)),
        ("from November 2024 to February", date(2024, 11, 1), date(2025, 2, 28)),
        ("what did I plant in March last year?", date(2025, 3, 1), date(2025, 3, 31)),
        ("in March of this year", date(2026, 3, 1), date(2026, 3, 31)),
        ("in November 2026", date(2026, 11, 1), date(2026, 11, 30)),  # has begun: up to now
        ("Which books did I read in 2025?", date(2025, 1, 1), date(2025, 12, 31)),
        ("trips during 2024", date(2024, 1, 1), date(2024, 12, 31)),
        ("the year 2023", date(2023, 1, 1), date(2023, 12, 31)),
        ("jobs between 2024 and 2022", date(2022, 1, 1), date(2024, 12, 31)),
        ("plans in 2027", date(2027, 1, 1), date(2027, 12, 31)),  # not begun: the whole year
        ("in March", date(2026, 3, 1), date(2026, 3, 31)),  # no year: the latest March, as before
        ("in December", date(2025, 12, 1), date(2025, 12, 31)),
    ],
)
def test_a_month_or_year_named_with_its_year_is_read_as_that_month_or_year(
    text: str, first: date, last: date
) -> None:
    assert days(text, LATE) == (first, last)


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("last year", date(2025, 1, 1), date(2025, 12, 31)),
        ("this year", date(2026, 1, 1), date(2026, 11, 30)),
        ("the past year", date(2025, 11, 30), date(2026, 11, 30)),
        ("in the last year", date(2025, 11, 30), date(2026, 11, 30)),
        ("last month", date(2026, 10, 1), date(2026, 10, 31)),
        ("this month", date(2026, 11, 1), date(2026, 11, 30)),
        ("in the last month", date(2026, 10, 31), date(2026, 11, 30)),
        ("last week", date(2026, 11, 23), date(2026, 11, 29)),
        ("this week", date(2026, 11, 30), date(2026, 11, 30)),
        ("the past week", date(2026, 11, 23), date(2026, 11, 30)),
        ("last weekend", date(2026, 11, 27), date(2026, 11, 30)),  # Saturday 28th, widened
        ("this past weekend", date(2026, 11, 27), date(2026, 11, 30)),
        ("this weekend", date(2026, 12, 4), date(2026, 12, 7)),  # not begun: the whole of it
    ],
)
def test_last_and_this_name_whole_calendar_units_and_the_past_counts_back(
    text: str, first: date, last: date
) -> None:
    assert days(text, LATE) == (first, last)


def test_last_week_and_weekend_asked_on_a_sunday_are_the_previous_weeks() -> None:
    sunday = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    assert days("last week", sunday) == (date(2026, 11, 16), date(2026, 11, 22))
    assert days("last weekend", sunday) == (date(2026, 11, 20), date(2026, 11, 23))
    assert days("this weekend", sunday) == (date(2026, 11, 27), date(2026, 11, 29))


@pytest.mark.parametrize(
    "text",
    [
        "How many days passed between the two concerts?",
        "How many months ago did I visit?",  # asks for a distance, names none
        "What did I buy on Valentine's day?",
        "may I ask something",
        "",
        "[*] ago ago ago 999999 days",
        "a total of 2000 steps",  # a number, not a year
        "May 3000",  # not a year read (19xx and 20xx only)
    ],
)
def test_text_naming_no_relative_date_gives_no_window(text: str) -> None:
    assert date_window(text, NOW) is None


def test_the_window_keeps_nows_time_zone_and_covers_whole_days() -> None:
    local = timezone(timedelta(hours=-8))
    window = date_window("yesterday", datetime(2023, 4, 1, 23, 0, tzinfo=local))
    assert window is not None
    first, last = window
    assert first == datetime(2023, 3, 31, tzinfo=local)
    assert last == datetime(2023, 3, 31, 23, 59, 59, 999999, tzinfo=local)


def test_hits_dated_inside_the_window_gain_a_share_of_the_best_score() -> None:
    window = (datetime(2023, 3, 1, tzinfo=UTC), datetime(2023, 3, 31, tzinfo=UTC))
    hits = [Hit("a", 1.0), Hit("b", 0.8), Hit("c", 0.5)]
    dates = {"a": datetime(2023, 1, 5, tzinfo=UTC), "b": datetime(2023, 3, 10, tzinfo=UTC)}
    boosted = boost_dates(hits, dates, window, 0.3)
    assert [h.record_id for h in boosted] == ["b", "a", "c"]
    assert [h.score for h in boosted] == [pytest.approx(1.1), 1.0, 0.5]
    assert boost_dates([], dates, window) == []


def turn(body: str, session: str, position: int, when: datetime) -> MemoryRecord:
    return MemoryRecord.create(
        type="episode",
        body=body,
        provenance=Provenance(kind="import", ref=f"chat.json#{session}/{position}"),
        created_at=when,
        occurred_at=when,
    )


def test_the_thread_key_carries_the_event_time() -> None:
    note = turn("hello", "s1", 1, datetime(2023, 3, 10, 9, 0, tzinfo=UTC))
    place = place_of(note)
    assert place is not None
    assert thread_time(place[0]) == datetime(2023, 3, 10, 9, 0, tzinfo=UTC)
    assert thread_time("notes.md#a ") is None
    assert thread_time("notes.md#a not-a-time") is None
    assert thread_time("") is None


def test_the_hybrid_lifts_the_session_of_the_date_the_question_names() -> None:
    old = turn("I bought a new blender for smoothies", "s1", 1, datetime(2023, 1, 2, tzinfo=UTC))
    recent = turn("I bought a toaster, my new kitchen toy", "s2", 1, datetime(2023, 3, 22, tzinfo=UTC))
    question = "What kitchen appliance did I buy 10 days ago?"
    with FtsIndex(":memory:") as fts:
        fts.index([old, recent])
        plain = HybridIndex([fts], date_weight=0.0).query("I bought a new blender " + question, k=5, now=NOW)
        dated = HybridIndex([fts]).query("I bought a new blender " + question, k=5, now=NOW)
        undated_question = HybridIndex([fts]).query("I bought a new blender", k=5, now=NOW)
        clocked = HybridIndex([fts], clock=lambda: NOW).query("I bought a new blender " + question, k=5)
        long_after = HybridIndex([fts]).query(
            "I bought a new blender " + question, k=5, now=NOW.replace(year=2024)
        )
    assert [h.record_id for h in plain] == [old.id, recent.id]
    assert [h.record_id for h in dated] == [recent.id, old.id]
    assert [h.record_id for h in clocked] == [recent.id, old.id]
    assert [h.record_id for h in undated_question] == [old.id, recent.id]
    assert [h.record_id for h in long_after] == [old.id, recent.id]


def test_the_date_weight_is_in_the_recipe_and_checked() -> None:
    with FtsIndex(":memory:") as fts:
        assert HybridIndex([fts]).recipe.params["date_weight"] == repr(DATE_WEIGHT)
        assert HybridIndex([fts], date_weight=0).recipe.params["date_weight"] == "0.0"
        for bad in (-0.1, float("inf"), float("nan")):
            with pytest.raises(ValueError, match="date_weight"):
                HybridIndex([fts], date_weight=bad)
