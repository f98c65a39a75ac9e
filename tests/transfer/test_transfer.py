from datetime import UTC, datetime

import pytest
from fg_agent_id import KeyPair

from agent_memory.errors import SignatureError
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.records.signing import address_of, sign_record
from agent_memory.stores.inmemory import InMemoryStore
from agent_memory.transfer.exchange import EXTERNAL_TAINT, export_memory_file, import_memory_file

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def make(body: str, **fields: object) -> MemoryRecord:
    return MemoryRecord.create(
        type="fact", body=body, provenance=Provenance(kind="conversation", ref="s-1"), created_at=T0, **fields
    )


def filled_store(*records: MemoryRecord) -> InMemoryStore:
    store = InMemoryStore()
    for record in records:
        store.put(record)
    return store


def test_an_export_imports_into_an_empty_store_byte_for_byte(seed_keys: KeyPair) -> None:
    source = filled_store(make("One."), make("Two.", kind="state", subject="s"))
    exported = export_memory_file(source, keys=seed_keys, now=T0)
    target = InMemoryStore()
    report = import_memory_file(
        target, MemoryFile.loads(exported.dumps()), trusted_signers={address_of(seed_keys)}
    )
    assert report.added == [r.id for r in source.list()]
    assert report.tainted == []
    assert [r.canonical_bytes() for r in target.list()] == [r.canonical_bytes() for r in source.list()]


def test_importing_twice_adds_nothing_and_says_what_it_skipped(seed_keys: KeyPair) -> None:
    exported = export_memory_file(filled_store(make("One.")), keys=seed_keys)
    target = InMemoryStore()
    import_memory_file(target, exported, trusted_signers={address_of(seed_keys)})
    again = import_memory_file(target, exported, trusted_signers={address_of(seed_keys)})
    assert again.added == []
    assert again.skipped == [make("One.").id]
    assert len(target.history(make("One.").id)) == 1


def test_records_from_an_untrusted_signer_arrive_tainted_external(seed_keys: KeyPair) -> None:
    stranger = KeyPair.generate()
    signed = sign_record(make("Signed by a stranger."), stranger)
    exported = MemoryFile(created_at=T0, records=(signed, make("Unsigned."))).sign(seed_keys)
    target = InMemoryStore()
    report = import_memory_file(target, exported, trusted_signers={address_of(seed_keys)})
    assert report.tainted == [signed.id]
    assert target.get(signed.id).taint == (EXTERNAL_TAINT,)
    assert target.get(make("Unsigned.").id).taint is None
    assert report.digests[signed.id] != ""


def test_without_verification_every_record_is_tainted(seed_keys: KeyPair) -> None:
    exported = MemoryFile(created_at=T0, records=(make("Unsigned."),))
    report = import_memory_file(
        InMemoryStore(), exported, verify=False, trusted_signers={address_of(seed_keys)}
    )
    assert report.tainted == [make("Unsigned.").id]
    assert report.verified is False


def test_a_file_that_fails_verification_writes_nothing(seed_keys: KeyPair) -> None:
    wire = export_memory_file(filled_store(make("One."), make("Two.")), keys=seed_keys).to_wire()
    wire["records"][1]["tags"] = ["tampered"]
    target = InMemoryStore()
    with pytest.raises(SignatureError):
        import_memory_file(target, MemoryFile.from_wire(wire), path="in.json")
    assert target.list() == []


def test_a_tombstone_imports_as_an_erased_record_as_the_origins_load_puts_it() -> None:
    # Issue 18 case 1: a Home's own export after an erasure, or the origin's after redact().
    fine, secret = make("Fine."), make("Secret.")
    exported = MemoryFile(created_at=T0, records=(fine, secret.tombstone("erased")))
    target = InMemoryStore()
    report = import_memory_file(target, exported, verify=False, path="in.json")
    assert report.tombstones == [secret.id] and report.added == [fine.id]
    assert target.get(secret.id).redacted and target.get(secret.id).body == "[redacted]"


def test_a_record_and_its_tombstone_in_one_file_import_as_the_tombstone_in_either_order() -> None:
    # Issue 18 case 2: order no longer decides.
    record = make("Secret.")
    for records in ((record, record.tombstone("erased")), (record.tombstone("erased"), record)):
        target = InMemoryStore()
        report = import_memory_file(target, MemoryFile(created_at=T0, records=records), verify=False)
        assert report.tombstones == [record.id] and target.get(record.id).redacted
