"""The `RecordStore` contract: one suite that every store adapter must pass (seed 001 §stores).

The ``store`` fixture (tests/stores/conftest.py) runs each test once per adapter.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from fg_agent_id import KeyPair

from agent_memory.errors import LifecycleError, RecordError, RecordNotFound, StoreError
from agent_memory.records.lifecycle import archive, begin_transition, resolve_transition, supersede
from agent_memory.records.record import (
    EpistemicStatus,
    Kind,
    MemoryRecord,
    Provenance,
    RecordType,
    Scope,
    State,
    Transition,
)
from agent_memory.records.signing import sign_record, verify_record

if TYPE_CHECKING:  # both conftest modules are named conftest at runtime; the type is for readers
    from conftest import ErasableStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)
NOW = T0 + timedelta(days=30)
UNKNOWN_ID = "mem:" + "0" * 32


def record(body: str, *, at: datetime = T0, type: str = "fact", **fields: Any) -> MemoryRecord:
    provenance = Provenance(kind="conversation", ref="archive/2026-01-01.md#mem-2026-01-01-001")
    return MemoryRecord.create(type=type, body=body, provenance=provenance, created_at=at, **fields)


def rich_record() -> MemoryRecord:
    """A record that uses every kind of field: Unicode, nesting, extensions and an unknown field."""
    return record(
        "Ünïcödé, 漢字 and an emoji 🧠 — “quoted” and \\ escaped\nsecond line",
        slots={"subject": "api", "nested": {"list": [1, "two", None, True]}, "empty": {}},
        tags=("ops", "préférence"),
        confidence=0.75,
        occurred_at=T0 - timedelta(hours=5),
        kind=Kind.STATE,
        subject="host:staging",
        namespace="project:apollo",
        scope=Scope.ENVIRONMENT,
        valid_from=T0 - timedelta(hours=5),
        taint=("external",),
        sources=("archive/2026-01-01.md#mem-2026-01-01-002",),
        epistemic_status=EpistemicStatus.OBSERVED_ONCE,
        extra={"x_unknown_field": {"kept": ["and", "signed"]}},
    )


def snapshot(store: ErasableStore, *ids: str) -> list[list[bytes]]:
    return [[v.canonical_bytes() for v in store.history(i)] for i in ids]


# ---------------------------------------------------------------------- put, get, history


def test_put_appends_numbered_versions_and_history_lists_them_oldest_first(store: ErasableStore) -> None:
    first = record("the api listens on 8080")
    second = first.evolve(tags=("ops",), updated_at=T0 + timedelta(hours=1))
    third = archive(second, "decayed", now=T0 + timedelta(hours=2))
    assert [store.put(v) for v in (first, second, third)] == [1, 2, 3]
    assert [v.canonical_bytes() for v in store.history(first.id)] == [
        v.canonical_bytes() for v in (first, second, third)
    ]
    assert store.get(first.id) == third


def test_put_of_an_identical_version_appends_instead_of_overwriting(store: ErasableStore) -> None:
    first = record("same again")
    assert store.put(first) == 1
    assert store.put(first) == 2
    assert store.history(first.id) == [first, first]


def test_every_field_survives_a_round_trip_as_the_exact_canonical_bytes(store: ErasableStore) -> None:
    rich = rich_record()
    store.put(rich)
    assert store.get(rich.id).canonical_bytes() == rich.canonical_bytes()
    assert store.history(rich.id)[0].canonical_bytes() == rich.canonical_bytes()
    assert [r.canonical_bytes() for r in store.list()] == [rich.canonical_bytes()]
    assert store.get(rich.id) == rich


def test_a_signed_record_still_verifies_after_it_is_stored(store: ErasableStore, seed_keys: KeyPair) -> None:
    signed = sign_record(rich_record(), seed_keys)
    store.put(signed)
    loaded = store.get(signed.id)
    assert loaded.canonical_bytes() == signed.canonical_bytes()
    verify_record(loaded)
    store.put(archive(loaded, "decayed", now=NOW))
    verify_record(store.history(signed.id)[0])


def test_records_returned_are_copies_that_cannot_change_the_store(store: ErasableStore) -> None:
    original = record("slots are a dict", slots={"k": "v"})
    store.put(original)
    original.slots["k"] = "changed after put"
    store.get(original.id).slots["k"] = "changed after get"
    store.history(original.id)[0].slots["k"] = "changed after history"
    store.list()[0].slots["k"] = "changed after list"
    assert store.get(original.id).slots == {"k": "v"}


def test_unknown_ids_raise_record_not_found_which_is_also_a_key_error(store: ErasableStore) -> None:
    for read in (store.get, store.history):
        with pytest.raises(RecordNotFound) as caught:
            read(UNKNOWN_ID)
        assert isinstance(caught.value, KeyError)
        assert isinstance(caught.value, StoreError)
        assert caught.value.record_id == UNKNOWN_ID
    assert store.contains(UNKNOWN_ID) is False


REFUSED_IDS = {
    "parent path": "mem:../x",
    "parent path of hex length": "mem:../" + "0" * 29,
    "absolute path": "/etc/passwd",
    "absolute path after the tag": "mem:/" + "0" * 31,
    "NUL byte": "mem:" + "0" * 16 + "\x00" + "0" * 15,
    "uppercase hex": "mem:" + "A" * 32,
    "too short": "mem:abc",
    "too long": "mem:" + "0" * 33,
    "no tag": "0" * 32,
    "empty": "",
}


@pytest.mark.parametrize("bad_id", REFUSED_IDS.values(), ids=REFUSED_IDS.keys())
def test_malformed_ids_are_refused_before_any_lookup(store: ErasableStore, bad_id: str) -> None:
    for call in (store.get, store.history, store.contains, lambda i: store.erase(i, "reason")):
        with pytest.raises(StoreError) as caught:
            call(bad_id)
        assert not isinstance(caught.value, RecordNotFound)
    forged = record("a forged id")
    object.__setattr__(forged, "id", bad_id)  # only a forgery can carry a bad id past the constructor
    with pytest.raises(StoreError):
        store.put(forged)
    assert store.list() == []


def test_contains_is_true_exactly_for_stored_ids(store: ErasableStore) -> None:
    stored, absent = record("stored"), record("never stored")
    store.put(stored)
    assert store.contains(stored.id) is True
    assert store.contains(absent.id) is False


# ---------------------------------------------------------------------- list


def test_list_returns_latest_versions_by_created_at_then_id(store: ErasableStore) -> None:
    late = record("late", at=T0 + timedelta(days=2))
    tied = sorted((record(f"tie {n}", at=T0) for n in ("one", "two", "three")), key=lambda r: r.id)
    early = record("early", at=T0 - timedelta(days=1))
    for item in (late, tied[2], early, tied[0], tied[1]):
        store.put(item)
    store.put(archive(tied[1], "decayed", now=NOW))
    listed = store.list()
    assert [r.id for r in listed] == [early.id, *(t.id for t in tied), late.id]
    assert listed[2].state is State.ARCHIVED


def test_list_filters_by_state_type_tag_kind_subject_and_namespace(store: ErasableStore) -> None:
    plain = record("plain knowledge, default namespace", tags=("ops",))
    episode = record("an episode", at=T0 + timedelta(minutes=1), type="episode", namespace="project:x")
    host_a = record("a is up", at=T0 + timedelta(minutes=2), kind=Kind.STATE, subject="host:a")
    host_b = record(
        "b is up", at=T0 + timedelta(minutes=3), kind=Kind.STATE, subject="host:b", namespace="default"
    )
    howto = record(
        "restart with systemctl", at=T0 + timedelta(minutes=4), type="procedure", kind=Kind.KNOWLEDGE
    )
    rule = record(
        "ops facts matter", at=T0 + timedelta(minutes=5), type="rule", evidence=(plain.id,), tags=("ops",)
    )
    for item in (rule, howto, host_b, host_a, episode, plain):
        store.put(item)
    store.put(archive(episode, "decayed", now=NOW))

    def ids(**filters: Any) -> list[str]:
        return [r.id for r in store.list(**filters)]

    assert ids(state=State.ARCHIVED) == [episode.id]
    assert ids(state=State.ACTIVE) == [plain.id, host_a.id, host_b.id, howto.id, rule.id]
    assert ids(type=RecordType.RULE) == [rule.id]
    assert ids(type=RecordType.FACT) == [plain.id, host_a.id, host_b.id]
    assert ids(tag="ops") == [plain.id, rule.id]
    assert ids(tag="op") == []
    assert ids(kind=Kind.STATE) == [host_a.id, host_b.id]
    assert ids(kind=Kind.KNOWLEDGE) == [plain.id, episode.id, howto.id, rule.id]
    assert ids(subject="host:a") == [host_a.id]
    assert ids(subject="host:") == []
    assert ids(namespace="default") == [plain.id, host_a.id, host_b.id, howto.id, rule.id]
    assert ids(namespace="project:x") == [episode.id]
    assert ids(kind=Kind.STATE, namespace="default", subject="host:b", state=State.ACTIVE) == [host_b.id]
    assert ids(type=RecordType.EPISODE, state=State.ACTIVE) == []


def test_list_of_an_empty_store_is_empty(store: ErasableStore) -> None:
    assert store.list() == []
    assert store.list(state=State.ACTIVE, tag="x") == []


# ---------------------------------------------------------------------- version rules

IMMUTABLE_CHANGES: dict[str, dict[str, Any]] = {
    "occurred_at": {"occurred_at": T0 - timedelta(days=9)},
    "kind": {"kind": Kind.KNOWLEDGE, "subject": None},
    "subject": {"subject": "host:production"},
    "namespace": {"namespace": "project:other"},
    "scope": {"scope": Scope.GLOBAL},
    "valid_from": {"valid_from": T0},
    "taint": {"taint": None},
    "sources": {"sources": ("archive/elsewhere.md",)},
}


@pytest.mark.parametrize("field", IMMUTABLE_CHANGES)
def test_a_later_version_may_not_change_an_immutable_field(store: ErasableStore, field: str) -> None:
    birth = rich_record()
    store.put(birth)
    with pytest.raises(RecordError) as caught:
        store.put(birth.evolve(**IMMUTABLE_CHANGES[field]))
    assert (caught.value.record_id, caught.value.field) == (birth.id, field)
    assert snapshot(store, birth.id) == [[birth.canonical_bytes()]]


def test_valid_to_is_set_once_and_never_changed(store: ErasableStore) -> None:
    birth = record("staging runs 1.4", kind=Kind.STATE, subject="host:staging")
    successor = record("staging runs 1.5", at=T0 + timedelta(days=1), kind=Kind.STATE, subject="host:staging")
    store.put(birth)
    retired = supersede(birth, successor.evolve(supersedes=birth.id), "newer", now=NOW)
    store.put(retired)
    with pytest.raises(RecordError) as caught:
        store.put(retired.evolve(valid_to=NOW))
    assert caught.value.field == "valid_to"
    assert len(store.history(birth.id)) == 2


def illegal_successors() -> dict[str, tuple[MemoryRecord, MemoryRecord]]:
    a, b = record("side a"), record("side b")
    archived = archive(a, "decayed", now=NOW)
    retired = supersede(a, record("newer", supersedes=a.id), "newer", now=NOW)
    block = Transition(sides=(a.id, b.id), reason="dispute")
    return {
        "archived -> active": (archived, archived.evolve(state=State.ACTIVE)),
        "archived -> transitional": (archived, archived.evolve(state=State.TRANSITIONAL, transition=block)),
        "superseded -> active": (retired, retired.evolve(state=State.ACTIVE, superseded_by=None)),
        "superseded -> transitional": (
            retired,
            retired.evolve(state=State.TRANSITIONAL, superseded_by=None, transition=block),
        ),
    }


@pytest.mark.parametrize("move", illegal_successors())
def test_an_illegal_state_move_is_refused_and_writes_nothing(store: ErasableStore, move: str) -> None:
    previous, successor = illegal_successors()[move]
    store.put(previous.evolve(state=State.ACTIVE, superseded_by=None, state_reason=None))
    store.put(previous)
    before = snapshot(store, previous.id)
    with pytest.raises(LifecycleError) as caught:
        store.put(successor)
    assert (caught.value.record_id, caught.value.field) == (previous.id, "state")
    assert snapshot(store, previous.id) == before


def test_every_legal_move_is_accepted(store: ErasableStore) -> None:
    a, b = record("side a"), record("side b")
    store.put(a)
    store.put(b)
    side_a, side_b = begin_transition(a, b, "dispute", now=NOW)
    store.put(side_a)
    store.put(side_b)
    won, lost = resolve_transition(side_a, side_b, "a wins", now=NOW)
    assert [store.put(v) for v in (won, lost, archive(lost, "decayed", now=NOW))] == [3, 3, 4]
    assert [v.state for v in store.history(b.id)] == [
        State.ACTIVE, State.TRANSITIONAL, State.SUPERSEDED, State.ARCHIVED,
    ]  # fmt: skip


def test_a_tombstone_is_never_put_and_nothing_follows_one(store: ErasableStore) -> None:
    live = record("to be erased")
    with pytest.raises(StoreError):
        store.put(live.tombstone("pii", now=NOW))
    assert store.contains(live.id) is False
    store.put(live)
    store.erase(live.id, "pii", now=NOW)
    for attempt in (live, archive(live, "decayed", now=NOW)):
        with pytest.raises(StoreError) as caught:
            store.put(attempt)
        assert caught.value.record_id == live.id
    assert len(store.history(live.id)) == 1


# ---------------------------------------------------------------------- erase

SENSITIVE_BODY = "the staging password is hunter2-8c1f"


def test_erase_replaces_every_version_with_the_tombstone(store: ErasableStore) -> None:
    secret = record(
        SENSITIVE_BODY,
        slots={"login": "hunter2-8c1f"},
        tags=("hunter2-8c1f",),
        kind=Kind.STATE,
        subject="host:hunter2-8c1f",
    )
    store.put(secret)
    store.put(secret.evolve(tags=("credentials",), updated_at=T0 + timedelta(hours=1)))
    store.put(archive(store.get(secret.id), "rotated", now=T0 + timedelta(hours=2)))
    tombstone = store.erase(secret.id, "credential leak", now=NOW)
    assert tombstone.redacted is True
    assert (tombstone.id, tombstone.birth_digest) == (secret.id, secret.birth_sha256())
    assert (tombstone.redaction_reason, tombstone.updated_at) == ("credential leak", NOW)
    versions = store.history(secret.id)
    assert len(versions) == 3
    for version in versions:
        assert version.canonical_bytes() == tombstone.canonical_bytes()
        assert b"hunter2" not in version.canonical_bytes()
    assert store.get(secret.id) == tombstone
    assert store.contains(secret.id) is True
    assert all(b"hunter2" not in r.canonical_bytes() for r in store.list())
    assert store.list(state=State.ARCHIVED) == [tombstone]


def test_erase_keeps_the_link_graph_of_the_latest_version(store: ErasableStore) -> None:
    old = record(SENSITIVE_BODY)
    new = record("the password was rotated", at=T0 + timedelta(days=1), supersedes=old.id)
    store.put(old)
    store.put(new)
    store.put(supersede(old, new, "rotated", now=NOW))
    tombstone = store.erase(old.id, "credential leak", now=NOW)
    assert tombstone.superseded_by == new.id
    assert store.get(new.id) == new


def test_erasing_twice_raises_and_leaves_the_tombstone(store: ErasableStore) -> None:
    live = record(SENSITIVE_BODY)
    store.put(live)
    first = store.erase(live.id, "pii", now=NOW)
    with pytest.raises(RecordError):
        store.erase(live.id, "pii again", now=NOW + timedelta(days=1))
    assert store.history(live.id) == [first]


def test_erase_of_an_unknown_id_raises_record_not_found(store: ErasableStore) -> None:
    with pytest.raises(RecordNotFound):
        store.erase(UNKNOWN_ID, "pii", now=NOW)
    assert store.contains(UNKNOWN_ID) is False


def test_erase_without_a_reason_raises_and_changes_nothing(store: ErasableStore) -> None:
    live = record(SENSITIVE_BODY)
    store.put(live)
    with pytest.raises(RecordError):
        store.erase(live.id, "", now=NOW)
    assert snapshot(store, live.id) == [[live.canonical_bytes()]]


# ---------------------------------------------------------------------- concurrency

THREADS = 8
PER_THREAD = 12


def test_concurrent_puts_from_eight_threads_all_land(store: ErasableStore) -> None:
    shared = record("every thread appends a version of this record")
    store.put(shared)
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []
    versions: list[int] = []
    lock = threading.Lock()

    def work(n: int) -> None:
        try:
            barrier.wait()
            for i in range(PER_THREAD):
                assert store.put(record(f"thread {n} record {i}", at=T0 + timedelta(seconds=i))) == 1
                number = store.put(shared.evolve(tags=(f"t{n}-{i}",)))
                with lock:
                    versions.append(number)
        except BaseException as exc:  # reported below: a thread's exception must fail the test
            with lock:
                errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(store.list()) == 1 + THREADS * PER_THREAD
    assert sorted(versions) == list(range(2, 2 + THREADS * PER_THREAD))
    history = store.history(shared.id)
    assert len(history) == 1 + THREADS * PER_THREAD
    assert {v.tags for v in history[1:]} == {
        (f"t{n}-{i}",) for n in range(THREADS) for i in range(PER_THREAD)
    }


# ---------------------------------------------------------------------- put_many (BatchPut)


def test_a_batch_chains_versions_of_one_record_and_writes_all_or_nothing(batch_store: Any) -> None:
    a, b = record("First of the batch."), record("Second of the batch.")
    assert batch_store.put_many([a, archive(a, "done", now=T0), b]) == [1, 2, 1]
    assert batch_store.get(a.id).state is State.ARCHIVED
    assert batch_store.put_many([]) == []

    c = record("Never written.")
    illegal = archive(b, "done", now=T0).evolve(state=State.ACTIVE, superseded_by=None)
    with pytest.raises(LifecycleError):
        batch_store.put_many([c, archive(b, "done", now=T0), illegal])
    assert not batch_store.contains(c.id)
    assert batch_store.history(b.id) == [b]
    with pytest.raises(StoreError, match="tombstone"):
        batch_store.put_many([c, a.tombstone("no")])
    assert not batch_store.contains(c.id)
    assert sorted(r.id for r in batch_store.list()) == sorted([a.id, b.id])
