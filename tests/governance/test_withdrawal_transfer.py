"""Export and import keep withdrawal controls with the content, or fail closed (seed 000 §12.2, §21)."""

import pytest
from fg_agent_id import KeyPair

from agent_memory.errors import RecordError
from agent_memory.governance.portability import EXTRA_KEY
from agent_memory.memory import Memory
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.signing import address_of
from agent_memory.stores.inmemory import InMemoryStore
from agent_memory.transfer.exchange import export_memory_file, import_memory_file
from memory.conftest import T0, at


def exported(memory: Memory, keys: KeyPair, *, include_withdrawn: bool = False) -> MemoryFile:
    made = export_memory_file(
        memory.store, keys=keys, now=at(3), log=memory.log, include_withdrawn=include_withdrawn
    )
    return MemoryFile.loads(made.dumps())  # as a reader sees it


def shown(memory: Memory, query: str) -> set[str]:
    return set(memory.recall(query, now=at(4), touch=False).ids)


@pytest.fixture
def source() -> Memory:
    return Memory.in_memory()


def test_a_plain_export_omits_withdrawn_records_and_what_derives_from_them(
    source: Memory, seed_keys: KeyPair
) -> None:
    kept = source.remember("Backups run at 02:00.", source="s", now=T0).record_id
    gone = source.remember("Backups might run at 03:00.", source="s", now=T0).record_id
    derived = source.remember("Backup window starts 03:00.", source=gone, now=T0).record_id
    control = source.withdraw(memory_item_ids=[gone], reason="failed-exploration", now=at(1))
    plain = exported(source, seed_keys)
    assert [r.id for r in plain.records] == [kept]
    assert EXTRA_KEY not in plain.extra
    source.reinstate(control.withdrawal_id, "confirmed", now=at(2))
    assert {r.id for r in exported(source, seed_keys).records} == {kept, gone, derived}


def test_include_withdrawn_carries_every_record_and_every_control_signed(
    source: Memory, seed_keys: KeyPair
) -> None:
    gone = source.remember("Backups might run at 03:00.", source="s", now=T0).record_id
    control = source.withdraw(memory_item_ids=[gone], reason="failed-exploration", now=at(1))
    full = exported(source, seed_keys, include_withdrawn=True)
    assert [r.id for r in full.records] == [gone]
    assert full.extra[EXTRA_KEY] == [control.to_wire()]
    full.verify()  # the controls are signed with the file


def test_an_import_applies_the_controls_before_any_record_is_exposed(
    source: Memory, seed_keys: KeyPair
) -> None:
    kept = source.remember("Backups run at 02:00.", source="s", now=T0).record_id
    gone = source.remember("Backups might run at 03:00.", source="s", now=T0).record_id
    control = source.withdraw(memory_item_ids=[gone], reason="failed-exploration", now=at(1))
    target = Memory.in_memory()
    report = import_memory_file(
        target.store,
        exported(source, seed_keys, include_withdrawn=True),
        trusted_signers={address_of(seed_keys)},
        log=target.log,
    )
    assert sorted(report.added) == sorted([kept, gone])
    assert report.controls_added == [control.withdrawal_id]
    assert report.withdrawn == [gone]
    entries = list(target.log.entries())
    assert entries[0].action == "withdraw"  # appended before the records were put
    assert entries[0].details["origin"]["withdrawal_id"] == control.withdrawal_id
    assert shown(target, "backups") == {kept}
    target.reinstate(control.withdrawal_id, "the target's owner decides", now=at(5))
    assert shown(target, "backups") == {kept, gone}


def test_a_target_without_a_log_refuses_a_file_with_controls_and_writes_nothing(
    source: Memory, seed_keys: KeyPair
) -> None:
    gone = source.remember("Backups might run at 03:00.", source="s", now=T0).record_id
    source.withdraw(memory_item_ids=[gone], reason="failed-exploration", now=at(1))
    store = InMemoryStore()
    with pytest.raises(RecordError, match="keeps no operation log") as info:
        import_memory_file(store, exported(source, seed_keys, include_withdrawn=True), path="in.json")
    assert (info.value.path, info.value.field) == ("in.json", EXTRA_KEY)
    assert store.list() == []


def test_importing_the_same_controls_twice_adds_them_once(source: Memory, seed_keys: KeyPair) -> None:
    gone = source.remember("Backups might run at 03:00.", source="s", now=T0).record_id
    source.withdraw(memory_item_ids=[gone], reason="failed-exploration", now=at(1))
    file = exported(source, seed_keys, include_withdrawn=True)
    target = Memory.in_memory()
    import_memory_file(target.store, file, trusted_signers={address_of(seed_keys)}, log=target.log)
    again = import_memory_file(target.store, file, trusted_signers={address_of(seed_keys)}, log=target.log)
    assert (again.controls_added, again.controls_skipped) == ([], ["memwd-2026-11-02-001"])
    assert len(target.controls()) == 1


def test_a_control_whose_id_is_taken_here_is_renumbered_with_its_chain(
    source: Memory, seed_keys: KeyPair
) -> None:
    gone = source.remember("Backups might run at 03:00.", source="s", now=T0).record_id
    first = source.withdraw(memory_item_ids=[gone], reason="failed-exploration", now=at(1))
    lifted = source.reinstate(first.withdrawal_id, "confirmed", now=at(1))
    source.withdraw(memory_item_ids=[gone], reason="wrong after all", now=at(1))
    target = Memory.in_memory()
    local = target.remember("Unrelated note.", source="s", now=T0).record_id
    target.withdraw(memory_item_ids=[local], reason="mine", now=at(1))  # takes memwd-2026-11-02-001
    report = import_memory_file(
        target.store,
        exported(source, seed_keys, include_withdrawn=True),
        trusted_signers={address_of(seed_keys)},
        log=target.log,
    )
    assert report.controls_renamed == {
        "memwd-2026-11-02-001": "memwd-2026-11-02-002",
        "memwd-2026-11-02-002": "memwd-2026-11-02-003",
        "memwd-2026-11-02-003": "memwd-2026-11-02-004",
    }
    chain = {c.withdrawal_id: c.supersedes for c in target.controls()}
    assert chain["memwd-2026-11-02-003"] == "memwd-2026-11-02-002"  # the reinstatement follows
    assert chain["memwd-2026-11-02-004"] == "memwd-2026-11-02-003"
    assert lifted.withdrawal_id not in report.controls_refused
    assert shown(target, "backups") == set()
    assert [c.withdrawal_id for c in target.gate.state().in_force()] == [
        "memwd-2026-11-02-001",
        "memwd-2026-11-02-004",
    ]


def test_an_imported_reinstatement_never_lifts_a_withdrawal_decided_here(seed_keys: KeyPair) -> None:
    home = Memory.in_memory()
    gone = home.remember("Backups might run at 03:00.", source="s", now=T0).record_id
    control = home.withdraw(memory_item_ids=[gone], reason="failed-exploration", now=at(1))
    # A replica that holds the same withdrawal and lifted it there.
    replica = Memory.in_memory()
    replica.store.put(home.get(gone))
    for entry in home.log.entries():
        replica.log.append(
            entry.action, actor=entry.actor, record_ids=entry.record_ids, details=entry.details
        )
    replica.reinstate(control.withdrawal_id, "the replica thinks so", now=at(2))
    report = import_memory_file(
        home.store,
        exported(replica, seed_keys, include_withdrawn=True),
        trusted_signers={address_of(seed_keys)},
        log=home.log,
    )
    assert report.controls_skipped == [control.withdrawal_id]
    assert list(report.controls_refused) == ["memwd-2026-11-03-001"]
    assert "a withdrawal this Home decided" in report.controls_refused["memwd-2026-11-03-001"]
    assert shown(home, "backups") == set()


def test_a_file_reinstating_with_another_scope_is_refused_and_writes_nothing(
    source: Memory, seed_keys: KeyPair
) -> None:
    a = source.remember("Backups might run at 03:00.", source="s", now=T0).record_id
    b = source.remember("Backups might run at 04:00.", source="s", now=T0).record_id
    control = source.withdraw(memory_item_ids=[a, b], reason="failed-exploration", now=at(1))
    lifted = source.reinstate(control.withdrawal_id, "confirmed", now=at(2))
    wire = exported(source, seed_keys, include_withdrawn=True).to_wire()
    wire[EXTRA_KEY][1]["scope"] = {"memory_item_ids": [a]}
    forged = MemoryFile.from_wire(wire)
    target = Memory.in_memory()
    with pytest.raises(RecordError, match="exact scope") as info:
        import_memory_file(target.store, forged, verify=False, log=target.log, path="in.json")
    assert info.value.field == f"{EXTRA_KEY}[1].scope"
    assert (target.store.list(), target.log.last()) == ([], None)
    assert lifted.scope != forged.extra[EXTRA_KEY][1]["scope"]


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ({"not": "a list"}, EXTRA_KEY),
        ([{"withdrawal_id": "memwd-2026-11-02-001"}], f"{EXTRA_KEY}[0]"),
        ([{"scope": {}}], f"{EXTRA_KEY}[0]"),
    ],
)
def test_malformed_controls_in_a_file_are_refused_naming_the_field(
    source: Memory, seed_keys: KeyPair, value: object, field: str
) -> None:
    source.remember("Backups run at 02:00.", source="s", now=T0)
    wire = exported(source, seed_keys).to_wire() | {EXTRA_KEY: value}
    target = Memory.in_memory()
    with pytest.raises(RecordError) as info:
        import_memory_file(
            target.store, MemoryFile.from_wire(wire), verify=False, log=target.log, path="in.json"
        )
    assert info.value.field == field
    assert info.value.path == "in.json"
    assert (target.store.list(), target.log.last()) == ([], None)


def test_a_record_withdrawn_here_does_not_come_back_through_a_plain_import(seed_keys: KeyPair) -> None:
    other = Memory.in_memory()
    record = other.remember("User u1 likes tea.", source="s", namespace="user:u1", now=T0).record_id
    home = Memory.in_memory()
    home.withdraw(namespaces=["user:u1"], reason="user asked", now=at(1))
    report = import_memory_file(
        home.store, exported(other, seed_keys), trusted_signers={address_of(seed_keys)}, log=home.log
    )
    assert report.added == [record]
    assert report.withdrawn == [record]
    assert shown(home, "tea") == set()


def test_a_reinstatement_from_the_signer_of_the_withdrawal_follows_it_but_not_unverified(
    source: Memory, seed_keys: KeyPair
) -> None:
    gone = source.remember("Backups might run at 03:00.", source="s", now=T0).record_id
    control = source.withdraw(memory_item_ids=[gone], reason="failed-exploration", now=at(1))
    trusted = {address_of(seed_keys)}
    first = exported(source, seed_keys, include_withdrawn=True)
    source.reinstate(control.withdrawal_id, "confirmed", now=at(2))
    second = exported(source, seed_keys, include_withdrawn=True)

    unverified = Memory.in_memory()
    import_memory_file(unverified.store, first, trusted_signers=trusted, log=unverified.log)
    report = import_memory_file(unverified.store, second, verify=False, log=unverified.log)
    assert "unverified" in report.controls_refused["memwd-2026-11-03-001"]
    assert shown(unverified, "backups") == set()

    replica = Memory.in_memory()
    import_memory_file(replica.store, first, trusted_signers=trusted, log=replica.log)
    assert shown(replica, "backups") == set()
    report = import_memory_file(replica.store, second, trusted_signers=trusted, log=replica.log)
    assert (report.controls_added, report.controls_refused) == (["memwd-2026-11-03-001"], {})
    assert shown(replica, "backups") == {gone}
