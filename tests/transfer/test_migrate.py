import hashlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_memory.errors import RecordNotFound, ScreenError, SignatureError, StoreError
from agent_memory.home import Home
from agent_memory.log.sqlite import SQLiteLog
from agent_memory.records.lifecycle import archive, supersede
from agent_memory.records.note import dump_note
from agent_memory.records.record import Kind, MemoryRecord, Provenance
from agent_memory.records.signing import KeyPair, sign_record
from agent_memory.stores.files import FileStore
from agent_memory.stores.inmemory import InMemoryStore
from agent_memory.stores.sqlite import SQLiteStore
from agent_memory.stores.urls import AdapterStore
from agent_memory.stores.verified import Signers
from agent_memory.transfer import migrate as migration
from pg import PgSchema, postgres_cluster, postgres_schema  # noqa: F401 - fixtures

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SOURCE = Provenance(kind="conversation", ref="s-1")


def record(body: str, hours: int = 0, **fields: object) -> MemoryRecord:
    return MemoryRecord.create(
        type="fact", body=body, provenance=SOURCE, created_at=T0 + timedelta(hours=hours), **fields
    )


def fill(store: AdapterStore, keys: KeyPair | None = None) -> dict[str, list[bytes]]:
    """Four records, six versions: a supersede pair, an archived one, an erased one; return the histories.

    With ``keys`` every version is signed by them, as a Home signs what it writes.
    """

    def signed(version: MemoryRecord) -> MemoryRecord:
        return sign_record(version, keys) if keys is not None else version

    state = {"kind": Kind.STATE, "subject": "host:staging"}
    old = record("Staging runs on db-3.", 0, **state)
    new = record("Staging runs on db-4.", 1, supersedes=old.id, **state)
    kept = record("Deploys happen on Tuesdays.", 2)
    gone = record("The door code is 4711.", 3)
    for version in (old, new, supersede(old, new, "newer value", now=T0 + timedelta(hours=1)), kept, gone):
        store.put(signed(version))
    store.put(signed(archive(kept, "no longer true", now=T0 + timedelta(hours=4))))
    store.erase(gone.id, "asked to forget", now=T0 + timedelta(hours=5))
    return histories(store)


def histories(store: AdapterStore) -> dict[str, list[bytes]]:
    return {r.id: [v.canonical_bytes() for v in store.history(r.id)] for r in store.list()}


def files_of(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


Factory = Callable[[Path, str], AbstractContextManager[AdapterStore]]


@contextmanager
def in_memory(tmp_path: Path, name: str) -> Iterator[AdapterStore]:
    yield InMemoryStore()


@contextmanager
def notes(tmp_path: Path, name: str) -> Iterator[AdapterStore]:
    yield FileStore(tmp_path / name)


@contextmanager
def origin_json(tmp_path: Path, name: str) -> Iterator[AdapterStore]:
    yield FileStore(tmp_path / name, codec="json")


@contextmanager
def sqlite(tmp_path: Path, name: str) -> Iterator[AdapterStore]:
    with SQLiteStore(tmp_path / f"{name}.sqlite") as store:
        yield store


@pytest.mark.parametrize(
    ("source_kind", "target_kind"),
    [(in_memory, notes), (notes, origin_json), (origin_json, sqlite), (sqlite, in_memory), (sqlite, notes)],
    ids=["memory-notes", "notes-json", "json-sqlite", "sqlite-memory", "sqlite-notes"],
)
def test_every_version_of_every_record_arrives_byte_for_byte(
    tmp_path: Path, source_kind: Factory, target_kind: Factory
) -> None:
    with source_kind(tmp_path, "a") as source, target_kind(tmp_path, "b") as target:
        expected = fill(source)
        report = migration.migrate(source, target)
        assert histories(target) == expected
    assert report.verified and report.source_records == report.target_records == 4
    assert report.versions_written == 6 and len(report.copied) == 3 and len(report.restored) == 1
    assert report.skipped == report.extended == []
    assert report.digests == {
        record_id: "sha256:" + hashlib.sha256(b"".join(versions)).hexdigest()
        for record_id, versions in expected.items()
    }


def test_records_are_written_in_list_order_and_versions_oldest_first(tmp_path: Path) -> None:
    class Recording(InMemoryStore):
        def __init__(self) -> None:
            super().__init__()
            self.order: list[tuple[str, int]] = []

        def put(self, record: MemoryRecord) -> int:
            number = super().put(record)
            self.order.append((record.id, number))
            return number

    source, target = InMemoryStore(), Recording()
    fill(source)
    migration.migrate(source, target)
    expected = [
        (r.id, n) for r in source.list() if not r.redacted for n in range(1, len(source.history(r.id)) + 1)
    ]
    assert target.order == expected


def test_running_it_again_writes_nothing(tmp_path: Path) -> None:
    source, target = InMemoryStore(), FileStore(tmp_path / "b")
    fill(source)
    migration.migrate(source, target)
    before = files_of(tmp_path / "b")
    again = migration.migrate(source, target)
    assert files_of(tmp_path / "b") == before
    assert again.versions_written == 0 and len(again.skipped) == 4 and again.written == []
    assert again.verified and again.manifest() == migration.migrate(source, target).manifest()


def test_a_record_whose_first_versions_the_target_holds_gets_the_rest(tmp_path: Path) -> None:
    source, target = InMemoryStore(), InMemoryStore()
    expected = fill(source)
    (kept,) = [r for r in source.list() if r.body == "Deploys happen on Tuesdays."]
    target.put(source.history(kept.id)[0])  # as a migration cut short would leave it
    report = migration.migrate(source, target)
    assert report.extended == [kept.id] and kept.id not in report.copied
    assert histories(target) == expected


@pytest.mark.parametrize(
    ("tamper", "why"),
    [
        ("archive", "version 2 differs"),
        ("ahead", "the target holds 2 versions, the source only 1"),
        ("erase-target", "erased in the target but not in the source"),
        ("erase-source", "erased in the source but not in the target"),
    ],
)
def test_a_different_history_in_the_target_is_named_and_nothing_is_written(
    tmp_path: Path, tamper: str, why: str
) -> None:
    source, target = InMemoryStore(), FileStore(tmp_path / "b")
    first = record("Deploys happen on Tuesdays.")
    source.put(first)
    source.put(record("Unrelated, new to the target.", 1))
    target.put(first)
    if tamper == "archive":
        source.put(supersede(first, record("x", 2, supersedes=first.id), "newer", now=T0))
        target.put(archive(first, "retired by hand", now=T0))
    elif tamper == "ahead":
        target.put(archive(first, "retired by hand", now=T0))
    elif tamper == "erase-target":
        target.erase(first.id, "forgotten there")
    else:
        source.erase(first.id, "forgotten here")
    before = files_of(tmp_path / "b")
    with pytest.raises(StoreError) as info:
        migration.migrate(source, target)
    assert f"different history for 1 record(s), so nothing was written: {first.id}: {why}" in str(info.value)
    assert files_of(tmp_path / "b") == before


def test_a_history_that_cannot_be_written_stops_the_migration_naming_the_record(tmp_path: Path) -> None:
    source_root = tmp_path / "a"
    source, target = FileStore(source_root), SQLiteStore(tmp_path / "b.sqlite")
    fill(source)
    (kept,) = [r for r in source.list() if r.state.value == "archived" and not r.redacted]
    # An erasure cut short: version 1 is already the tombstone, version 2 not yet.
    tombstone = kept.tombstone("asked to forget", now=T0)
    kept_dir = source_root / kept.id.removeprefix("mem:")
    (kept_dir / "000001.md").write_bytes(dump_note(tombstone))
    with pytest.raises(StoreError) as info:
        migration.migrate(source, target)
    assert info.value.record_id == kept.id and "tombstone" in str(info.value)
    assert not target.contains(kept.id)
    target.close()


def test_verification_catches_a_target_that_loses_a_version(tmp_path: Path) -> None:
    class Lossy(InMemoryStore):
        """Drops every second version of the records it is given: a broken store to catch."""

        def put(self, record: MemoryRecord) -> int:
            return 2 if self.contains(record.id) else super().put(record)

    source = InMemoryStore()
    expected = fill(source)
    with pytest.raises(StoreError, match=r"verification failed for 2 record\(s\)") as info:
        migration.migrate(source, Lossy())
    assert all(record_id in str(info.value) for record_id, v in expected.items() if len(v) == 2)


def test_a_source_that_changes_during_the_migration_is_reported(tmp_path: Path) -> None:
    class Growing(InMemoryStore):
        """Another writer adds a record right after the migration's first look."""

        growing = False

        def list(self, **filters: object) -> list[MemoryRecord]:  # type: ignore[override]
            listed = super().list(**filters)  # type: ignore[arg-type]
            if self.growing:
                self.growing = False
                self.put(record("Written meanwhile.", 9))
            return listed

    source = Growing()
    fill(source)
    source.growing = True
    with pytest.raises(StoreError, match="the source changed during the migration: it held 4 records, now 5"):
        migration.migrate(source, InMemoryStore())


def test_batches_go_to_a_sqlite_target_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(migration, "_BATCH_VERSIONS", 2)
    source = InMemoryStore()
    expected = fill(source)
    with SQLiteStore(tmp_path / "b.sqlite") as target:
        report = migration.migrate(source, target)
        assert histories(target) == expected
    assert report.versions_written == 6 and sorted(report.written) == sorted(expected)


def test_a_missing_record_in_the_target_reads_as_missing() -> None:
    class Forgetful(InMemoryStore):
        def history(self, record_id: str) -> list[MemoryRecord]:
            raise RecordNotFound("gone", record_id=record_id)

    source = InMemoryStore()
    fill(source)
    with pytest.raises(
        StoreError, match=r"verification failed for 4 record\(s\): mem:\w+: missing in the target"
    ):
        migration.migrate(source, Forgetful())


# ---------------------------------------------------------------------- by URL


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    made = Home.init(tmp_path / "home", git=False, now=T0)
    fill(made.store(), made.identity())
    return made


def test_a_url_migration_logs_one_event_at_each_end_with_a_log(tmp_path: Path, home: Home) -> None:
    report, logged = migration.migrate_urls(f"home:{home.root}", f"sqlite:{tmp_path}/b.sqlite", now=T0)
    assert logged == [f"sqlite:{tmp_path}/b.sqlite", f"home:{home.root}"]
    (event,) = [e for e in home.log().entries() if e.action == "migrate"]
    with SQLiteLog(tmp_path / "b.sqlite") as table:
        (copy,) = table.entries()
    assert copy.details == event.details == report.log_details()
    assert event.actor == "owner" and event.time == T0 and list(event.record_ids) == report.written
    assert event.details["manifest"] == report.manifest() and event.details["completed"] is True


def test_a_failed_migration_that_wrote_something_is_logged_as_not_completed(
    tmp_path: Path, home: Home
) -> None:
    (kept,) = [r for r in home.store().list() if r.state.value == "archived" and not r.redacted]
    kept_dir = home.root / "notes" / kept.id.removeprefix("mem:")
    (kept_dir / "000001.md").write_bytes(dump_note(kept.tombstone("x", now=T0)))
    other = trusting(Home.init(tmp_path / "other", git=False), home)
    with pytest.raises(StoreError):
        migration.migrate_urls(f"home:{home.root}", f"home:{other.root}", now=T0)
    (event,) = [e for e in other.log().entries() if e.action == "migrate"]
    assert event.details["completed"] is False and event.details["versions"] == 3
    assert kept.id not in event.record_ids and len(event.record_ids) == 2
    assert not other.store().contains(kept.id)


def trusting(target: Home, source: Home) -> Home:
    """Add ``source``'s key to ``target``'s memory.toml [trust], as a person would; return it opened again."""
    toml = target.root / "memory.toml"
    address = source.signer()
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text.replace("trusted_signers = []", f'trusted_signers = ["{address}"]'), "utf-8")
    return Home.open(target.root)


def test_a_home_takes_only_versions_signed_by_a_key_it_trusts(tmp_path: Path, home: Home) -> None:
    other = Home.init(tmp_path / "other", git=False, now=T0)
    with pytest.raises(SignatureError, match=r"signed by amp:key:.*memory.toml \[trust\]") as caught:
        migration.migrate_urls(f"home:{home.root}", f"home:{other.root}", now=T0)
    assert caught.value.record_id and "version 1" in str(caught.value)
    assert not list((other.root / "notes").iterdir())
    assert [e.action for e in other.log().entries()] == ["init"]
    unsigned = InMemoryStore()
    fill(unsigned)
    with pytest.raises(SignatureError, match="version 1 is unsigned"):
        migration.migrate(unsigned, other.store(), signers=Signers(other.signer()))
    report, _ = migration.migrate_urls(f"home:{home.root}", f"home:{trusting(other, home).root}", now=T0)
    assert report.verified and len(report.copied) == 3


@pytest.mark.parametrize(
    ("hazard", "body"),
    [
        ("secret", "The deploy key is " + "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8" + "."),
        ("conflict", "The host is\n<<<<<<< HEAD\ndb-1\n=======\ndb-2\n>>>>>>> other"),
        ("frontmatter", "---\ntitle: Hosts\n---\nThe host is db-1."),
    ],
)
def test_a_version_that_fails_the_screen_stops_the_migration_before_any_write(
    tmp_path: Path, hazard: str, body: str
) -> None:
    source = InMemoryStore()
    fill(source)
    bad = record(body, 9)
    source.put(bad)
    target = FileStore(tmp_path / "target")
    with pytest.raises(ScreenError) as caught:
        migration.migrate(source, target)
    assert caught.value.hazard == hazard and caught.value.record_id == bad.id
    assert caught.value.field == "body"
    assert not (tmp_path / "target").exists() or not list((tmp_path / "target").iterdir())


def test_the_same_store_at_both_ends_is_refused(home: Home) -> None:
    with pytest.raises(StoreError, match="are the same store"):
        migration.migrate_urls(f"home:{home.root}", f"notes:{home.root / 'notes'}")


def test_a_missing_file_source_is_refused_and_not_created(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no such file or folder"):
        migration.migrate_urls(f"sqlite:{tmp_path}/nope.sqlite", f"json:{tmp_path}/out")
    assert list(tmp_path.iterdir()) == []


def test_a_home_migrates_to_postgresql_and_on_to_sqlite(
    tmp_path: Path, home: Home, request: pytest.FixtureRequest
) -> None:
    from agent_memory.log.postgres import PostgresLog

    schema: PgSchema = request.getfixturevalue("postgres_schema")

    url = f"{schema.dsn}?schema={schema.schema}"
    first, _ = migration.migrate_urls(f"home:{home.root}", url)
    second, logged = migration.migrate_urls(url, f"sqlite:{tmp_path}/b.sqlite")
    assert first.manifest() == second.manifest() and logged == [f"sqlite:{tmp_path}/b.sqlite"]
    with SQLiteStore(tmp_path / "b.sqlite") as target:
        assert histories(target) == histories(home.store())
    with PostgresLog(schema.dsn, schema=schema.schema) as table:
        assert [e.action for e in table.entries()] == ["migrate"]
    again, _ = migration.migrate_urls(f"home:{home.root}", url)
    assert again.versions_written == 0 and len(again.skipped) == 4


# ---------------------------------------------------------------------- withdrawal controls


def controlled_home(tmp_path: Path, name: str = "h") -> tuple[Path, dict[str, str]]:
    """A Home with three records: one withdrawn, one withdrawn then reinstated, one untouched."""
    from agent_memory.memory import Memory

    root = tmp_path / name
    Home.init(root, git=False, now=T0)
    with Memory.open(root) as memory:
        ids = {
            body: memory.remember(f"{body} exploration note.", source="t", now=T0).record_id
            for body in ("withdrawn", "reinstated", "plain")
        }
        memory.withdraw(memory_item_ids=[ids["withdrawn"]], reason="failed-exploration", now=T0)
        lifted = memory.withdraw(memory_item_ids=[ids["reinstated"]], reason="unsure", now=T0)
        memory.reinstate(lifted.withdrawal_id, "checked", now=T0 + timedelta(hours=1))
    return root, ids


def wire_controls(log: object) -> list[dict[str, object]]:
    from agent_memory.governance.gate import log_controls

    return [control.to_wire() for _, control in log_controls(log)]  # type: ignore[arg-type]


def test_withdrawal_controls_travel_to_the_target_before_any_record_and_keep_their_chains(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_memory.governance.gate import Gate
    from agent_memory.memory import Memory

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    source, ids = controlled_home(tmp_path)
    trusting(Home.init(tmp_path / "t", git=False, now=T0), Home.open(source))
    expected = wire_controls(Home.open(source).log())
    assert [c["action"] for c in expected] == ["withdraw", "withdraw", "reinstate"]

    report, _ = migration.migrate_urls(f"home:{source}", f"home:{tmp_path / 't'}", now=T0)
    target_log = Home.open(tmp_path / "t").log()
    assert wire_controls(target_log) == expected  # same ids, order and supersedes chains
    actions = [e.action for e in target_log.entries()]
    assert actions == ["init", "withdraw", "withdraw", "reinstate", "migrate"]
    assert report.controls_added == [str(c["withdrawal_id"]) for c in expected]
    with Memory.open(tmp_path / "t") as target:
        shown = set(target.recall("exploration note", now=T0 + timedelta(days=1), touch=False).ids)
        assert shown == {ids["reinstated"], ids["plain"]}

    report, _ = migration.migrate_urls(f"home:{source}", f"sqlite:{tmp_path / 'out.sqlite'}", now=T0)
    with SQLiteStore(tmp_path / "out.sqlite") as store, SQLiteLog(tmp_path / "out.sqlite") as log:
        assert wire_controls(log) == expected
        gate = Gate(log, store)
        assert {rid for rid in ids.values() if not gate.is_exposed(store.get(rid))} == {ids["withdrawn"]}


def test_the_controls_are_in_the_target_log_when_the_first_record_is_written() -> None:
    from agent_memory.governance.gate import Gate
    from agent_memory.log.inmemory import MemoryLog
    from agent_memory.memory import Memory

    source = Memory.in_memory()
    gone = source.remember("An exploration that went nowhere.", source="t", now=T0).record_id
    source.remember("A note that stays.", source="t", now=T0)
    source.withdraw(memory_item_ids=[gone], reason="failed-exploration", now=T0)
    target_log = MemoryLog()
    seen: list[bool] = []

    class Watching(InMemoryStore):
        def put(self, record: MemoryRecord) -> int:
            seen.append(not Gate(target_log, self).is_exposed(record) if record.id == gone else True)
            return super().put(record)

    report = migration.migrate(source.store, Watching(), source_log=source.log, target_log=target_log)
    assert report.verified and seen == [True, True] and len(report.controls_added) == 1


def test_a_second_run_skips_the_controls_and_an_id_taken_in_the_target_is_renumbered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_memory.memory import Memory

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    source, ids = controlled_home(tmp_path)
    target_root, target_ids = controlled_home(tmp_path, "t")  # its own memwd-2026-01-01-001..003
    trusting(Home.open(target_root), Home.open(source))
    first, _ = migration.migrate_urls(f"home:{source}", f"home:{target_root}", now=T0)
    assert first.controls_renamed == {
        "memwd-2026-01-01-001": "memwd-2026-01-01-004",
        "memwd-2026-01-01-002": "memwd-2026-01-01-005",
        "memwd-2026-01-01-003": "memwd-2026-01-01-006",
    }
    carried = wire_controls(Home.open(target_root).log())[3:]
    assert carried[2]["supersedes"] == "memwd-2026-01-01-005"  # the chain follows the new ids
    again, _ = migration.migrate_urls(f"home:{source}", f"home:{target_root}", now=T0)
    assert again.controls_added == [] and len(again.controls_skipped) == 3
    assert len(wire_controls(Home.open(target_root).log())) == 6
    with Memory.open(target_root) as target:
        hidden = {
            r for r in (*ids.values(), *target_ids.values()) if not target.gate.is_exposed(target.get(r))
        }
    assert hidden == {ids["withdrawn"], target_ids["withdrawn"]}


@pytest.mark.parametrize("scheme", ["notes", "json"])
def test_a_target_that_cannot_keep_controls_refuses_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scheme: str
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    source, _ = controlled_home(tmp_path)
    head = Home.open(source).log().last()
    with pytest.raises(StoreError, match=r"withdrawals in force \(memwd-2026-01-01-001\).*fail closed"):
        migration.migrate_urls(f"home:{source}", f"{scheme}:{tmp_path / 'out'}")
    assert not (tmp_path / "out").exists() and Home.open(source).log().last() == head


def test_a_target_without_a_log_takes_a_source_whose_withdrawals_are_all_lifted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_memory.memory import Memory

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    source, ids = controlled_home(tmp_path)
    with Memory.open(source) as memory:
        memory.reinstate("memwd-2026-01-01-001", "all clear", now=T0 + timedelta(hours=2))
    report, logged = migration.migrate_urls(f"home:{source}", f"notes:{tmp_path / 'out'}")
    assert report.verified and report.controls_added == [] and logged == [f"home:{source}"]
    assert sorted(r.id for r in FileStore(tmp_path / "out").list()) == sorted(ids.values())


def test_controls_travel_through_postgresql_and_on_to_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    from agent_memory.log.postgres import PostgresLog

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    schema: PgSchema = request.getfixturevalue("postgres_schema")
    source, _ = controlled_home(tmp_path)
    expected = wire_controls(Home.open(source).log())
    url = f"{schema.dsn}?schema={schema.schema}"
    migration.migrate_urls(f"home:{source}", url)
    second, _ = migration.migrate_urls(url, f"sqlite:{tmp_path / 'b.sqlite'}")
    with PostgresLog(schema.dsn, schema=schema.schema) as log:
        assert wire_controls(log) == expected
    with SQLiteLog(tmp_path / "b.sqlite") as log:
        assert wire_controls(log) == expected
    assert second.verified and len(second.controls_added) == 3
