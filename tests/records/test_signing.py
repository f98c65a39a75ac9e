import base64
import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fg_agent_id import KeyPair, verify_by_address

from agent_memory.errors import RecordError, SignatureError
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.records.signing import (
    address_of,
    domain_tag,
    load_or_create_identity,
    sign_payload,
    sign_record,
    signing_input,
    verify_payload,
    verify_record,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def record(**fields: object) -> MemoryRecord:
    return MemoryRecord.create(
        type="fact",
        body="Deploys go through CI.",
        provenance=Provenance(kind="tool"),
        created_at=T0,
        **fields,
    )


def test_a_signed_record_names_its_signer_and_verifies(seed_keys: KeyPair) -> None:
    signed = sign_record(record(tags=("ops",)), seed_keys)
    assert signed.signed_by == address_of(seed_keys)
    verify_record(signed)


def test_signatures_cover_extension_and_extra_fields(seed_keys: KeyPair) -> None:
    signed = sign_record(record(kind="state", subject="deploy", extra={"x-note": "kept"}), seed_keys)
    verify_record(signed)
    for tampered in (
        MemoryRecord.from_wire({**signed.to_wire(), "x-note": "changed"}),
        MemoryRecord.from_wire({**signed.to_wire(), "subject": "other"}),
        MemoryRecord.from_wire({**signed.to_wire(), "tags": ["added"]}),
        MemoryRecord.from_wire({**signed.to_wire(), "signed_by": address_of(KeyPair.generate())}),
    ):
        with pytest.raises(SignatureError):
            verify_record(tampered)


def test_an_unsigned_record_does_not_verify() -> None:
    with pytest.raises(SignatureError) as info:
        verify_record(record(), path="a.md")
    assert info.value.field == "signed_by" and info.value.path == "a.md"


def test_non_canonical_base64_is_refused(seed_keys: KeyPair) -> None:
    signed = sign_record(record(), seed_keys)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    # 64 bytes leave two unused bits in the last data character: set one, same bytes, other spelling.
    last = signed.signature[-3]
    alias = signed.signature[:-3] + alphabet[alphabet.index(last) ^ 1] + "=="
    assert alias != signed.signature
    assert base64.b64decode(alias) == base64.b64decode(signed.signature)
    with pytest.raises(SignatureError, match="canonical"):
        verify_record(signed.evolve(signed_by=signed.signed_by, signature=alias))


def test_a_malformed_signer_address_is_a_signature_error(seed_keys: KeyPair) -> None:
    signature = sign_payload(seed_keys, "record", {"a": 1})
    with pytest.raises(SignatureError) as info:
        verify_payload("amp:key:not-base58-0OIl", "record", {"a": 1}, signature)
    assert info.value.field == "signed_by"


def test_memory_signatures_never_verify_as_identity_artifacts(seed_keys: KeyPair) -> None:
    signature = sign_payload(seed_keys, "record", {"a": 1})
    verify_payload(address_of(seed_keys), "record", {"a": 1}, signature)
    with pytest.raises(Exception, match=r"(?i)signature|invalid"):
        verify_by_address(address_of(seed_keys), "record", {"a": 1}, signature)


def test_the_signing_input_is_a_length_prefixed_domain_tag_and_canonical_json() -> None:
    assert domain_tag("record") == b"fg-agent-memory/v1/record"
    assert signing_input("record", {"a": 1}) == b"\x00\x19fg-agent-memory/v1/record" + b'{"a":1}'
    with pytest.raises(ValueError, match="non-empty"):
        domain_tag("")


def test_a_key_file_is_created_once_with_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "home.key"
    first = load_or_create_identity(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert address_of(load_or_create_identity(path)) == address_of(first)
    assert [p.name for p in path.parent.iterdir()] == ["home.key"]


def test_a_corrupt_key_file_is_an_error_naming_it_and_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "home.key"
    path.write_bytes(b"short")
    with pytest.raises(RecordError) as info:
        load_or_create_identity(path)
    assert info.value.path == str(path)
    assert path.read_bytes() == b"short"


def test_a_key_file_replaced_after_it_was_loaded_is_loaded_again(tmp_path: Path) -> None:
    path = tmp_path / "home.key"
    first = load_or_create_identity(path)
    assert load_or_create_identity(path) is first  # the same bytes: loaded once per process
    other = KeyPair.generate()
    path.write_bytes(other.to_bytes())
    assert address_of(load_or_create_identity(path)) == address_of(other) != address_of(first)
    path.write_bytes(b"short")
    with pytest.raises(RecordError):
        load_or_create_identity(path)


def test_signing_a_signed_record_again_gives_what_signing_the_unsigned_one_gives(seed_keys: KeyPair) -> None:
    unsigned = record(tags=("ops",), subject=None)
    other = KeyPair.generate()
    resigned = sign_record(sign_record(unsigned, other), seed_keys)
    assert resigned == sign_record(unsigned, seed_keys)
    verify_record(resigned)
    with pytest.raises(RecordError, match="signature"):
        unsigned.with_signature(address_of(seed_keys), None)  # type: ignore[arg-type]
