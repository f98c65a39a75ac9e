"""A signature check made on one copy of a cached version stands for its other copies, and nothing else.

records/proofs.py: recall re-reads the same versions; each copy a store's parse cache hands
out shares its entry's proof, so the Ed25519 check runs once per stored version and process.
Every way a record could differ from the bytes that verified must still be checked in full.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_memory.errors import SignatureError
from agent_memory.records import proofs, signing
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.records.signing import KeyPair, sign_record, verify_record
from agent_memory.stores import files
from agent_memory.stores.files import FileStore
from agent_memory.stores.sqlite import SQLiteStore
from agent_memory.stores.verified import Signers

T0 = datetime(2026, 7, 1, tzinfo=UTC)


@pytest.fixture
def keys() -> KeyPair:
    return KeyPair.generate()


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cache notes however recently changed (the store waits 2 s; tests do not sleep)."""
    monkeypatch.setattr(files, "_SETTLED_NS", -1)


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the id of every record whose signature is checked in full (Ed25519 run)."""
    seen: list[str] = []
    original = signing.verify_payload

    def counted(address: str, context: str, payload: object, signature: str, **kw: object) -> None:
        if context == signing.CONTEXT_RECORD:
            seen.append(str(payload["id"]))  # type: ignore[index]
        original(address, context, payload, signature, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(signing, "verify_payload", counted)
    return seen


def signed(keys: KeyPair, text: str, **fields: object) -> MemoryRecord:
    record = MemoryRecord.create(
        type="fact",
        body=text,
        provenance=Provenance(kind="test", ref="test:proofs"),
        created_at=T0,
        **fields,  # type: ignore[arg-type]
    )
    return sign_record(record, keys)


@pytest.mark.usefixtures("settled")
@pytest.mark.parametrize("kind", ["files", "sqlite"])
def test_copies_of_one_cached_version_are_verified_once(
    tmp_path: Path, keys: KeyPair, checks: list[str], kind: str
) -> None:
    store = FileStore(tmp_path / "notes") if kind == "files" else SQLiteStore(tmp_path / "store.sqlite")
    one = signed(keys, "The staging host is db-2.", slots={"host": "db-2"})
    store.put(one)
    signers = Signers(home=signing.address_of(keys))
    for _ in range(5):
        signers.check(store.get(one.id))
    assert checks.count(one.id) <= 2  # the first read (parse), then at most once per cache entry
    before = len(checks)
    for _ in range(5):
        signers.check(store.get(one.id))
    assert len(checks) == before


def _edit_note(tmp_path: Path, store: FileStore | SQLiteStore, record_id: str) -> None:
    """Change a verified version's confidence where it is stored, as a hand edit would."""
    if isinstance(store, FileStore):
        path = store.root / record_id.removeprefix("mem:") / "000001.md"
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace('confidence: "0.9000"', 'confidence: "0.2000"'), encoding="utf-8")
        return
    with sqlite3.connect(tmp_path / "store.sqlite") as conn:  # a tool editing the database
        (payload,) = conn.execute("SELECT payload FROM versions").fetchone()
        changed = bytes(payload).replace(b'"confidence":"0.9000"', b'"confidence":"0.2000"')
        assert changed != bytes(payload)
        conn.execute("UPDATE versions SET payload = ?", (changed,))


@pytest.mark.usefixtures("settled")
@pytest.mark.parametrize("kind", ["files", "sqlite"])
def test_a_version_changed_where_it_is_stored_is_checked_again_and_refused(
    tmp_path: Path, keys: KeyPair, kind: str
) -> None:
    store = FileStore(tmp_path / "notes") if kind == "files" else SQLiteStore(tmp_path / "store.sqlite")
    one = signed(keys, "The staging host is db-2.", confidence=0.9)
    store.put(one)
    signers = Signers(home=signing.address_of(keys))
    signers.check(store.get(one.id))
    signers.check(store.get(one.id))
    _edit_note(tmp_path, store, one.id)
    with pytest.raises(SignatureError):
        signers.check(store.get(one.id))


@pytest.mark.usefixtures("settled")
def test_a_copy_changed_in_place_after_it_was_read_is_checked_in_full(tmp_path: Path, keys: KeyPair) -> None:
    store = FileStore(tmp_path / "notes")
    one = signed(keys, "The staging host is db-2.", slots={"host": "db-2"})
    store.put(one)
    verify_record(store.get(one.id))
    copy = store.get(one.id)
    assert proofs.proof_of(copy) is not None
    copy.slots["host"] = "db-9"
    assert proofs.proof_of(copy) is None
    with pytest.raises(SignatureError):
        verify_record(copy)


@pytest.mark.usefixtures("settled")
def test_a_record_built_from_a_verified_copy_has_no_proof(tmp_path: Path, keys: KeyPair) -> None:
    store = FileStore(tmp_path / "notes")
    one = signed(keys, "The staging host is db-2.")
    store.put(one)
    verify_record(store.get(one.id))
    copy = store.get(one.id)
    forged = dataclasses.replace(copy, confidence=0.1)  # same signature, other content
    resigned = copy.with_signature(copy.signed_by or "", copy.signature or "")
    assert proofs.proof_of(forged) is None
    assert proofs.proof_of(resigned) is None
    with pytest.raises(SignatureError):
        verify_record(forged)


def test_a_failed_check_proves_nothing(keys: KeyPair, checks: list[str]) -> None:
    one = signed(keys, "The staging host is db-2.")
    tampered = dataclasses.replace(one, confidence=0.1)
    proof = proofs.Proof(tampered)
    proof.register(tampered)
    for _ in range(2):
        with pytest.raises(SignatureError):
            verify_record(tampered)
    assert proof.verified is False
    assert checks.count(one.id) == 2


@pytest.mark.usefixtures("settled")
def test_clearing_a_cache_forgets_every_copy(tmp_path: Path, keys: KeyPair) -> None:
    store = FileStore(tmp_path / "notes")
    one = signed(keys, "The staging host is db-2.")
    store.put(one)
    copy = store.get(one.id)
    assert proofs.proof_of(copy) is not None
    store._cache.clear()
    assert proofs.proof_of(copy) is None
