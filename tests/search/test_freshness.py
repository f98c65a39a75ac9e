"""Freshness of a Home's indexes (issue 4 "Done when"): hand-made changes to notes/ reach recall.

Each test acts like a person or another program beside the library: copying a note file in,
editing one in place, deleting one, writing through the store without the index, deleting
.cache/. A new ``Memory.open`` stands for the next command a user runs.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_memory.home import Home
from agent_memory.memory import Memory
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search.catalog import FULL_CHECK_SECONDS, IndexCatalog
from agent_memory.search.recipes import SearchSettings, splice_search
from signing_store import signing_store

T0 = datetime(2026, 5, 1, tzinfo=UTC)
NOW = T0 + timedelta(days=1)
NOTES = [
    "The staging database runs on db-2 in Frankfurt.",
    "Ada drinks green tea every morning before standup.",
    "Release branches are cut every second Tuesday.",
    "The VPN certificate expires in March.",
]
QUERIES = ["staging database", "what does Ada drink", "release branch", "certificate", "morning tea db-2"]


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def make_home(path: Path, recipes: tuple[str, ...] = ("bm25", "vectors-hash")) -> Path:
    Home.init(path, git=False, now=T0)
    toml = path / "memory.toml"
    toml.write_text(
        splice_search(toml.read_text(encoding="utf-8"), SearchSettings(recipes)), encoding="utf-8"
    )
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = make_home(tmp_path / "home")
    with Memory.open(path) as memory:
        for i, text in enumerate(NOTES):
            memory.remember(text, source="test:freshness", now=T0 + timedelta(minutes=i))
    return path


def recall_ids(path: Path, query: str) -> list[str]:
    with Memory.open(path) as memory:
        return [r.record.id for r in memory.recall(query, now=NOW, touch=False).records]


def id_of(path: Path, text: str) -> str:
    with Memory.open(path) as memory:
        return next(r.id for r in memory.store.list() if r.body == text)


def note_file(path: Path, record_id: str) -> Path:
    return path / "notes" / record_id[4:] / "000001.md"


def test_a_note_copied_into_notes_by_hand_is_found(home: Path, tmp_path: Path) -> None:
    other = make_home(tmp_path / "other")
    with Memory.open(other) as memory:
        made = memory.remember("The coffee machine is on the third floor.", source="test:other", now=T0)
    shutil.copytree(other / "notes" / made.record_id[4:], home / "notes" / made.record_id[4:])
    # Signed by another Home's key: refused until this Home trusts that key (issue 20 item b).
    assert made.record_id not in recall_ids(home, "where is the coffee machine")
    toml = home / "memory.toml"
    signer = Home.open(other).signer()
    toml.write_text(
        toml.read_text("utf-8").replace("trusted_signers = []", f'trusted_signers = ["{signer}"]')
    )
    with Memory.open(home) as memory:  # the indexes read it again once rebuilt (agent-memory reindex)
        memory.catalog.rebuild()
    assert recall_ids(home, "where is the coffee machine")[0] == made.record_id


def test_a_note_edited_outside_the_library_stops_matching_and_is_reported(home: Path) -> None:
    target = id_of(home, NOTES[0])
    assert recall_ids(home, "Frankfurt") == [target]
    path = note_file(home, target)
    path.write_bytes(path.read_bytes().replace(b"Frankfurt", b"Hamburg"))  # the id no longer verifies
    with Memory.open(home) as memory:
        before = memory.status()
        assert [i["stale"] for i in before["indexes"]] == [1, 1]
        assert memory.recall("Frankfurt", now=NOW).records == ()
        assert memory.recall("Hamburg", now=NOW).records == ()
        after = memory.status()
    assert [(i["indexed"], i["records"], i["dirty"]) for i in after["indexes"]] == [(3, 3, False)] * 2
    assert len(after["unreadable"]) == 1 and target in after["unreadable"][0]
    assert "does not match the birth content" in after["unreadable"][0]


def test_a_removed_note_never_comes_back(home: Path) -> None:
    target = id_of(home, NOTES[2])
    assert recall_ids(home, "release branches Tuesday")[0] == target
    shutil.rmtree(note_file(home, target).parent)
    assert target not in recall_ids(home, "release branches Tuesday")
    with Memory.open(home) as memory:
        assert [(i["indexed"], i["dirty"]) for i in memory.status()["indexes"]] == [(3, False)] * 2
        held = [hits for hits in memory.catalog.query("release branches Tuesday")]
    assert all(target not in [h.record_id for h in hits] for hits in held)
    shutil.rmtree(home / ".cache")
    assert target not in recall_ids(home, "release branches Tuesday")


def test_status_shows_a_lagging_index_until_recall_refreshes_it(home: Path) -> None:
    late = MemoryRecord.create(
        type="fact",
        body="Payroll runs on the 25th.",
        provenance=Provenance(kind="test", ref="t"),
        created_at=T0,
    )
    signing_store(Home.open(home)).put(late)  # another program writing the notes, not the index
    with Memory.open(home) as memory:
        lagging = memory.status()["indexes"]
    assert [(i["indexed"], i["records"], i["stale"], i["dirty"]) for i in lagging] == [(4, 5, 1, True)] * 2
    assert recall_ids(home, "when does payroll run")[0] == late.id
    with Memory.open(home) as memory:
        fresh = memory.status()["indexes"]
    assert [(i["indexed"], i["records"], i["stale"], i["dirty"]) for i in fresh] == [(5, 5, 0, False)] * 2


def test_deleting_the_cache_gives_the_same_results(home: Path) -> None:
    def results() -> list[list[tuple[str, float]]]:
        with Memory.open(home) as memory:
            return [
                [(r.record.id, round(r.score, 9)) for r in memory.recall(q, now=NOW, touch=False).records]
                for q in QUERIES
            ]

    before = results()
    assert all(before)
    shutil.rmtree(home / ".cache")
    assert results() == before
    assert sorted(p.name for p in (home / ".cache" / "indexes").iterdir() if p.is_dir()) == [
        "bm25",
        "vectors-hash",
    ]


def test_a_long_running_process_sees_an_edit_within_the_check_interval(home: Path) -> None:
    now = [0.0]
    opened = Home.open(home)
    store = opened.store()
    catalog = IndexCatalog.for_home(
        opened.cache_dir, store, search=opened.settings.search, clock=lambda: now[0]
    )
    with Memory(store, opened.log(), catalog) as memory:
        target = id_of(home, NOTES[3])
        assert [r.record.id for r in memory.recall("certificate", now=NOW).records] == [target]
        path = note_file(home, target)
        path.write_bytes(path.read_bytes().replace(b"certificate", b"certifikat"))
        now[0] += FULL_CHECK_SECONDS
        assert memory.recall("certificate", now=NOW).records == ()
        assert memory.status()["unreadable"]


def test_a_recall_between_full_checks_names_the_unreadable_note_without_walking_every_note(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = id_of(home, NOTES[0])
    path = note_file(home, target)
    path.write_bytes(path.read_bytes().replace(b"Frankfurt", b"Hamburg"))  # no longer verifies
    with Memory.open(home) as memory:
        memory.recall("Frankfurt", now=NOW, touch=False)  # the first refresh: a full comparison
        store = memory.store
        walks: list[object] = []
        tokens = store.version_tokens

        def counted(record_ids: object = None) -> dict[str, str]:
            walks.append(None if record_ids is None else sorted(record_ids))  # type: ignore[call-overload]
            return tokens(record_ids)  # type: ignore[arg-type]

        monkeypatch.setattr(store, "version_tokens", counted)
        result = memory.recall("green tea", now=NOW, touch=False)
    assert any("1 note could not be read" in note for note in result.notes)
    assert walks == [[target]]  # only the note held without a version, never every note
