"""Index and ledger change together for other processes (search/holdings.py ``Holding.exclusive``).

A write updates an index, then its ledger rows. A process that opened the index between the
two once saw the index ahead of the ledger, took the gap for damage and forgot every ledger
row: other writers' records stayed in the index but vanished from the ledger, and the Home
ended "dirty" (tests/reliability/test_concurrency.py, one run in three). Here the gap is held
open on purpose while another process opens the same indexes.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from search_kit import record

from agent_memory.search.catalog import IndexCatalog
from agent_memory.search.holdings import Ledger
from agent_memory.search.recipes import SearchSettings
from agent_memory.stores.sqlite import SQLiteStore

OPENER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from agent_memory.search.catalog import IndexCatalog
    from agent_memory.search.recipes import SearchSettings
    from agent_memory.stores.sqlite import SQLiteStore

    folder = Path(sys.argv[1])
    with SQLiteStore(folder / "memory.sqlite") as store:
        IndexCatalog.for_home(folder / "cache", store, search=SearchSettings(("bm25",))).close()
    """
)


def open_catalog(folder: Path, store: SQLiteStore) -> IndexCatalog:
    return IndexCatalog.for_home(folder / "cache", store, search=SearchSettings(("bm25",)))


def test_a_process_opening_the_index_mid_write_leaves_the_ledger_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SQLiteStore(tmp_path / "memory.sqlite")
    catalog = open_catalog(tmp_path, store)
    first = [record(f"Earlier note {i} about the staging host.") for i in range(5)]
    store.put_many(first)
    catalog.refresh()
    opener: list[subprocess.Popen[str]] = []
    update = Ledger.update

    def open_elsewhere_in_the_gap(self: Ledger, *args: object, **kwargs: object) -> None:
        # The index already holds the new record; its ledger row is not written yet.
        opener.append(
            subprocess.Popen([sys.executable, "-c", OPENER, str(tmp_path)], stderr=subprocess.PIPE, text=True)
        )
        with contextlib.suppress(subprocess.TimeoutExpired):
            opener[0].wait(timeout=1.5)  # with the lock it cannot finish until this write is done
        update(self, *args, **kwargs)  # type: ignore[arg-type]

    late = record("A late note about the backup window.")
    store.put(late)
    monkeypatch.setattr(Ledger, "update", open_elsewhere_in_the_gap)
    catalog.written([late])
    monkeypatch.undo()
    _, err = opener[0].communicate(timeout=60)
    assert opener[0].returncode == 0, err
    catalog.close()

    reopened = open_catalog(tmp_path, store)
    assert Ledger(tmp_path / "cache" / "indexes" / "state.sqlite").load("bm25").keys() == {
        r.id for r in [*first, late]
    }
    [entry] = reopened.status()
    assert (entry["indexed"], entry["records"], entry["stale"], entry["dirty"]) == (6, 6, 0, False)
    reopened.close()
    store.close()


def test_a_holding_reads_its_ledger_rows_again_only_after_another_connection_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SQLiteStore(tmp_path / "memory.sqlite") as store:
        store.put(record("The staging host is db-2."))
        catalog = IndexCatalog.for_home(tmp_path / "cache", store, search=SearchSettings(("bm25",)))
        catalog.refresh()
        [holding] = catalog._holdings.values()
        loads: list[str] = []
        original = Ledger.load

        def counted(self: Ledger, leaf: str) -> dict[str, tuple[str, str | None]]:
            loads.append(leaf)
            return original(self, leaf)

        monkeypatch.setattr(Ledger, "load", counted)
        assert holding.agrees(catalog._ledger) and holding.agrees(catalog._ledger)
        assert loads == []  # nothing written since the rows were loaded: the rows in memory stand
        other = Ledger(catalog._ledger.path)  # another process's connection to the same ledger
        other.update(holding.name, {"mem:" + "0" * 32: ("token", "0" * 32)}, ())
        assert not holding.agrees(catalog._ledger)  # loaded again: a row the index does not hold
        assert loads == [holding.name]
        assert "mem:" + "0" * 32 in holding.held
        catalog.close()


def test_two_indexes_loading_the_same_rows_share_each_pair_and_keep_their_own_changes(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    same = {f"mem:{i:032x}": (f"token-{i}", f"{i:032x}") for i in range(50)}
    writer = Ledger(path)
    writer.update("bm25", same | {"mem:" + "f" * 32: ("token-f", None)}, ())
    writer.update("vectors", same | {"mem:" + "0" * 32: ("token-0", "changed" + "0" * 25)}, ())
    writer.close()
    ledger = Ledger(path)
    text, vectors = ledger.load("bm25"), ledger.load("vectors")
    alike = [rid for rid in same if rid != "mem:" + "0" * 32]
    assert [text[rid] for rid in alike] == [vectors[rid] for rid in alike] == [same[rid] for rid in alike]
    assert all(text[rid] is vectors[rid] for rid in alike)
    assert vectors["mem:" + "0" * 32] == ("token-0", "changed" + "0" * 25)  # differs: its own pair
    assert "mem:" + "f" * 32 not in vectors and text["mem:" + "f" * 32] == ("token-f", None)
    text["mem:" + "1" * 32] = ("token-new", "1" * 32)  # the caller changes its own dict
    again = ledger.load("vectors")  # a reload never takes its own old rows as the base
    assert again == vectors and "mem:" + "1" * 32 not in again
    ledger.forget("bm25")
    assert ledger.load("vectors") == vectors and ledger.load("bm25") == {}
    ledger.close()
