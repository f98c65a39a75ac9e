"""MemoryFile import keeps one current value per subject: imported state values supersede or dispute."""

import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fg_agent_id import KeyPair

from agent_memory.home import Home
from agent_memory.log.inmemory import MemoryLog
from agent_memory.memory import Memory
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.record import MemoryRecord, Provenance, State
from agent_memory.records.signing import address_of, sign_record
from agent_memory.stores.inmemory import InMemoryStore
from agent_memory.transfer.exchange import import_memory_file

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def value(body: str, *, days: int = 0, subject: str = "host:staging") -> MemoryRecord:
    return MemoryRecord.create(
        type="fact",
        body=body,
        provenance=Provenance(kind="conversation", ref="s-1"),
        created_at=T0 + timedelta(days=days),
        kind="state",
        subject=subject,
    )


def file_of(keys: KeyPair, *records: MemoryRecord) -> MemoryFile:
    signed = tuple(sign_record(record, keys) for record in records)
    return MemoryFile.loads(MemoryFile(created_at=T0, records=signed).sign(keys).dumps())


def holding(*records: MemoryRecord) -> InMemoryStore:
    store = InMemoryStore()
    for record in records:
        store.put(record)
    return store


def active_values(store: InMemoryStore, subject: str = "host:staging") -> list[str]:
    return [r.body for r in store.list(state=State.ACTIVE) if r.subject == subject]


def test_a_trusted_newer_value_supersedes_the_held_one_through_a_logged_intent(seed_keys: KeyPair) -> None:
    held, newer = value("The staging host is db-1."), value("The staging host is db-2.", days=1)
    store, log = holding(held), MemoryLog()
    report = import_memory_file(
        store, file_of(seed_keys, newer), trusted_signers={address_of(seed_keys)}, log=log, now=T0
    )
    assert report.added == [newer.id] and report.superseded == {newer.id: held.id}
    assert active_values(store) == ["The staging host is db-2."]
    assert store.get(held.id).state is State.SUPERSEDED and store.get(held.id).superseded_by == newer.id
    assert store.get(newer.id).supersedes == held.id
    assert [e.action for e in log.entries()] == ["intent", "intent-done", "supersede"]


@pytest.mark.parametrize("who", ["untrusted", "older"])
def test_a_tainted_or_older_value_disputes_the_held_one(seed_keys: KeyPair, who: str) -> None:
    held = value("The staging host is db-1.", days=1)
    incoming = value("The staging host is db-666.", days=2 if who == "untrusted" else 0)
    store = holding(held)
    trusted = set() if who == "untrusted" else {address_of(seed_keys)}
    report = import_memory_file(store, file_of(seed_keys, incoming), trusted_signers=trusted, now=T0)
    assert report.disputed == {incoming.id: held.id} and report.superseded == {}
    assert active_values(store) == []
    assert {store.get(held.id).state, store.get(incoming.id).state} == {State.TRANSITIONAL}
    assert (store.get(incoming.id).taint is not None) == (who == "untrusted")


def test_importing_the_same_file_again_writes_nothing(seed_keys: KeyPair) -> None:
    held = value("The staging host is db-1.")
    incoming = file_of(seed_keys, value("The staging host is db-2.", days=1), value("Other.", subject="x"))
    store = holding(held)
    for trusted in ({address_of(seed_keys)}, set()):
        import_memory_file(store, incoming, trusted_signers=trusted)
    versions = {r.id: len(store.history(r.id)) for r in store.list()}
    again = import_memory_file(store, incoming, trusted_signers={address_of(seed_keys)})
    assert again.added == [] and len(again.skipped) == 2
    assert {r.id: len(store.history(r.id)) for r in store.list()} == versions


def test_a_value_for_a_subject_already_disputed_is_held_back_and_nothing_is_written(
    seed_keys: KeyPair,
) -> None:
    held = value("The staging host is db-1.")
    store = holding(held)
    stranger = KeyPair.generate()
    import_memory_file(store, file_of(stranger, value("The staging host is db-9.", days=1)))
    before = [r.canonical_bytes() for r in store.list()]
    late = value("The staging host is db-3.", days=2)
    report = import_memory_file(store, file_of(seed_keys, late), trusted_signers={address_of(seed_keys)})
    assert report.added == [] and "already disputed" in report.held_back[late.id]
    assert report.digests == {} and not store.contains(late.id)
    assert [r.canonical_bytes() for r in store.list()] == before


def test_the_same_words_under_another_id_are_not_written_twice(seed_keys: KeyPair) -> None:
    held = value("The staging host is db-1.")
    again = value("The staging host is db-1.", days=1)
    store = holding(held)
    report = import_memory_file(store, file_of(seed_keys, again), trusted_signers={address_of(seed_keys)})
    assert report.same_value == {again.id: held.id} and report.skipped == [again.id]
    assert report.added == [] and not store.contains(again.id)


def test_two_active_values_in_one_file_never_both_stay_active(seed_keys: KeyPair) -> None:
    first, second = value("The staging host is db-1."), value("The staging host is db-2.", days=1)
    store = InMemoryStore()
    report = import_memory_file(
        store, file_of(seed_keys, first, second), trusted_signers={address_of(seed_keys)}
    )
    assert report.added == [first.id, second.id] and report.superseded == {second.id: first.id}
    assert active_values(store) == ["The staging host is db-2."]


def test_a_memory_file_import_into_a_home_disputes_and_memory_sees_one_transition() -> None:
    with Memory.in_memory() as memory:
        held = memory.remember(
            "The staging host is db-1.", source="ada", kind="state", subject="host:staging"
        )
        incoming = value("The staging host is db-666.", days=1)
        report = import_memory_file(
            memory.store, file_of(KeyPair.generate(), incoming), log=memory.log, actor="ada"
        )
        transitions = [e for e in memory.log.entries() if e.action == "transition"]
        pair = {memory.get(held.record_id).state, memory.get(incoming.id).state}
    assert report.disputed == {incoming.id: held.record_id} and report.tainted == [incoming.id]
    assert pair == {State.TRANSITIONAL}
    assert [set(e.record_ids) for e in transitions] == [{held.record_id, incoming.id}]
    assert transitions[0].actor == "ada"


def test_the_import_command_names_each_dispute_and_each_value_held_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command = shutil.which("agent-memory", path=str(Path(sys.executable).parent))
    assert command, "the agent-memory command is not installed next to this Python"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # the Home's key files go there
    env = {k: v for k, v in os.environ.items() if k != "AGENT_MEMORY_HOME"}
    root = tmp_path / "home"
    with Memory.open(Home.init(root, git=False).root) as memory:
        held = memory.remember(
            "The staging host is db-1.", source="ada", kind="state", subject="host:staging"
        )
    first, second = value("The staging host is db-8.", days=1), value("The staging host is db-9.", days=2)
    path = tmp_path / "in.json"
    path.write_bytes(file_of(KeyPair.generate(), first, second).dumps())
    done = subprocess.run(
        [command, "import", str(path), "--home", str(root)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"state value {first.id} disputes (review it) {held.record_id}" in done.stdout
    assert f"state value {second.id} held back: subject host:staging is already disputed" in done.stderr
