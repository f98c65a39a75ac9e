"""The browse list at scale: a filtered list is worked out once, and follows writes and reviews."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agent_memory.memory import Memory
from agent_memory.ui.browse import Filters, browse
from agent_memory.ui.latest import LatestRecords

T0 = datetime(2026, 5, 1, tzinfo=UTC)


class CountingBook:
    """A review book that counts the review states looked up (a fake around the real one)."""

    def __init__(self, memory: Memory) -> None:
        from agent_memory.governance.review_book import ReviewBook

        self.book, self.lookups = ReviewBook(memory.log), 0

    def state_of(self, record: object) -> object:
        self.lookups += 1
        return self.book.state_of(record)  # type: ignore[arg-type]


def filled(count: int) -> Memory:
    memory = Memory.in_memory()
    for n in range(count):
        memory.remember(
            f"Note number {n} about the garden",
            source=f"test:{n}",
            taint=["external"] if n % 4 == 0 else (),
            now=T0 + timedelta(minutes=n),
        )
    return memory


def page(memory: Memory, book: CountingBook, latest: LatestRecords, **params: str) -> list[str]:
    listing = browse(memory, book, Filters.parse(params), latest, page_size=3)  # type: ignore[arg-type]
    return [row.record.id for row in listing.rows]


def test_paging_a_review_filter_tests_the_records_once_not_per_page() -> None:
    memory = filled(20)
    book, latest = CountingBook(memory), LatestRecords(memory)
    first = page(memory, book, latest, review="quarantined")
    after_first = book.lookups
    second = page(memory, book, latest, review="quarantined", page="2")
    assert (len(first), len(second)) == (3, 2)
    assert book.lookups - after_first == len(second)  # only the rows shown: no record tested again
    quarantined = [r.id for r in reversed(latest.current()) if r.taint]
    assert first + second == quarantined


def test_a_filtered_list_follows_an_approval_and_a_new_record() -> None:
    memory = filled(8)
    book, latest = CountingBook(memory), LatestRecords(memory)
    before = page(memory, book, latest, review="quarantined")
    memory.review(before[0], "approve", "checked")
    assert before[0] not in page(memory, book, latest, review="quarantined")
    made = memory.remember(
        "A tainted note after", source="test:late", taint=["external"], now=T0 + timedelta(days=1)
    )
    assert page(memory, book, latest, review="quarantined")[0] == made.record_id


def test_the_unfiltered_list_is_newest_first_on_every_page() -> None:
    memory = filled(7)
    book, latest = CountingBook(memory), LatestRecords(memory)
    pages = [page(memory, book, latest, page=str(n)) for n in (1, 2, 3)]
    assert [i for p in pages for i in p] == [r.id for r in reversed(latest.current())]
    assert book.lookups == 7  # one review state per row shown
