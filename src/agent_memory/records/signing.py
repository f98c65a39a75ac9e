"""Ed25519 signatures over records and MemoryFiles, domain-separated (origin-notes §1.6).

The signing input is ``uint16be(len(tag)) || tag || canonical_json(payload)`` with
``tag = "fg-agent-memory/v1/<context>"``: the construction of fg-agent-id with this
library's own domain, so a memory signature never verifies as an identity artifact.
Keys, canonical JSON and strict base64 decoding come from ``fg-agent-id``.

A signature is standard base64 with padding; verification resolves the public key from
the signer's ``amp:key:`` address alone.
"""

from __future__ import annotations

import base64
import contextlib
import os
import uuid
from pathlib import Path
from typing import Any

from fg_agent_id import KeyPair, PublicKeys, address_from_signing_key, signing_key_from_address
from fg_agent_id import errors as fg_errors
from fg_agent_id.keyfile import load_keys
from fg_agent_id.signing import decode_signature

from agent_memory.errors import RecordError, SignatureError
from agent_memory.records import proofs
from agent_memory.records.record import MemoryRecord
from agent_memory.records.wire import canonical_json

__all__ = [
    "CONTEXT_MEMORY_FILE",
    "CONTEXT_RECORD",
    "DOMAIN",
    "KeyPair",
    "address_of",
    "domain_tag",
    "load_or_create_identity",
    "sign_payload",
    "sign_record",
    "signing_input",
    "verify_payload",
    "verify_record",
]

DOMAIN = "fg-agent-memory/v1"
CONTEXT_RECORD = "record"
CONTEXT_MEMORY_FILE = "memory-file"
_MAX_TAG_BYTES = 0xFFFF
_NO_AGREEMENT_KEY = b"\x00" * 32
_LOADED: dict[str, tuple[bytes, KeyPair]] = {}
"""Key file path -> (its bytes when loaded, the key pair): the anchor reloads the key per write."""
_LOADED_KEPT = 16
_ADDRESSES: dict[int, tuple[KeyPair, str]] = {}


def domain_tag(context: str) -> bytes:
    """Return the UTF-8 tag ``fg-agent-memory/v1/<context>``.

    Raises:
        ValueError: ``context`` is empty or the tag exceeds 65,535 bytes.
    """
    if not context:
        raise ValueError("signing context must be a non-empty string")
    tag = f"{DOMAIN}/{context}".encode()
    if len(tag) > _MAX_TAG_BYTES:
        raise ValueError("signing context tag is longer than 65535 bytes")
    return tag


def signing_input(context: str, payload: Any, *, checked: bool = False) -> bytes:
    """Return the bytes signed for ``payload`` under ``context``: length-prefixed tag + canonical JSON.

    ``checked``: the payload's parts have passed ``check_json_value`` (a record's wire object;
    see :func:`~agent_memory.records.wire.canonical_json`).
    """
    tag = domain_tag(context)
    return len(tag).to_bytes(2, "big") + tag + canonical_json(payload, checked=checked)


def address_of(keys: KeyPair) -> str:
    """Return the ``amp:key:…`` address that names this key pair's Ed25519 public key."""
    # Deriving the public key and encoding it costs about 50 µs; a write asks three times.
    known = _ADDRESSES.get(id(keys))
    if known is not None and known[0] is keys:
        return known[1]
    address = str(address_from_signing_key(keys.public.signing))
    if len(_ADDRESSES) >= _LOADED_KEPT:
        _ADDRESSES.clear()
    _ADDRESSES[id(keys)] = (keys, address)  # the pair is kept alive, so its id is not reused
    return address


def sign_payload(keys: KeyPair, context: str, payload: Any, *, checked: bool = False) -> str:
    """Sign ``payload`` under ``context``; return standard base64 of the 64-byte signature.

    ``checked`` as for :func:`signing_input`.
    """
    return base64.b64encode(keys.sign(signing_input(context, payload, checked=checked))).decode("ascii")


def verify_payload(
    address: str,
    context: str,
    payload: Any,
    signature: str,
    *,
    field: str = "signature",
    checked: bool = False,
) -> None:
    """Verify a base64 signature over ``payload`` by the key an address names.

    ``checked`` as for :func:`signing_input`.

    Raises:
        SignatureError: The address is malformed, the base64 is not canonical, or the
            signature does not verify (``field`` names the wire field in the message).
    """
    try:
        public = PublicKeys(signing=signing_key_from_address(address), agreement=_NO_AGREEMENT_KEY)
    except (fg_errors.AddressError, ValueError) as exc:
        raise SignatureError(f"not a usable amp:key address: {exc}", field="signed_by") from None
    try:
        public.verify(decode_signature(signature), signing_input(context, payload, checked=checked))
    except fg_errors.SignatureError as exc:
        raise SignatureError(f"does not verify: {exc}", field=field) from None


def _record_payload(record: MemoryRecord) -> dict[str, Any]:
    payload = record.to_wire()
    del payload["signature"]
    return payload


def sign_record(record: MemoryRecord, keys: KeyPair) -> MemoryRecord:
    """Return the record signed by ``keys``: ``signed_by`` set, ``signature`` filled.

    The payload is the wire object with ``signed_by`` set and without ``signature``, so
    the signer's address and every extension and extra field are covered.
    """
    signer = address_of(keys)
    payload = _record_payload(record)  # the wire object of the signed version but its signature
    payload["signed_by"] = signer
    return record.with_signature(signer, sign_payload(keys, CONTEXT_RECORD, payload, checked=True))


def verify_record(record: MemoryRecord, *, path: str | None = None) -> None:
    """Verify a record's signature by its ``signed_by`` address.

    A copy of a cached version whose copy has verified before is not checked again
    (:mod:`.proofs`); every other record is.

    Raises:
        SignatureError: ``signed_by`` or ``signature`` is missing, or the signature fails.
    """
    proof = proofs.proof_of(record)
    if proof is not None and proof.verified:
        return
    try:
        if not record.signed_by:
            raise SignatureError("the record is not signed (no signed_by)", field="signed_by")
        if not record.signature:
            raise SignatureError("signed_by is set but the signature is empty", field="signature")
        payload = _record_payload(record)  # the record's own wire object: checked when it was built
        verify_payload(record.signed_by, CONTEXT_RECORD, payload, record.signature, checked=True)
    except SignatureError as exc:
        raise exc.located(path=path, record_id=record.id) from None
    if proof is not None:
        proof.verified = True


def load_or_create_identity(path: str | os.PathLike[str]) -> KeyPair:
    """Load the key pair in ``path``, creating it (mode 0600, parent folders 0700) if absent.

    The file holds the raw 64 bytes of fg-agent-id's key format. Keys live outside a
    Home's git tree (DESIGN.md §9).

    Raises:
        RecordError: The file exists but is not a key file (``path`` named).
    """
    key_path = Path(path)
    try:
        try:
            data = key_path.read_bytes()
        except FileNotFoundError:
            key_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            _create_key_file(key_path)
            data = key_path.read_bytes()
        loaded = _LOADED.get(str(key_path))
        if loaded is not None and loaded[0] == data:
            return loaded[1]
        keys = load_keys(key_path)
    except (fg_errors.KeyFileError, ValueError, OSError) as exc:
        raise RecordError(f"cannot load the key file: {exc}", path=str(key_path)) from None
    if len(_LOADED) >= _LOADED_KEPT:
        _LOADED.clear()
    _LOADED[str(key_path)] = (data, keys)
    return keys


def _create_key_file(path: Path) -> None:
    # fg-agent-id's save_keys writes first and chmods after; write a 0600 temporary file and
    # hard-link it into place, so the secret is never readable by others, a reader never
    # sees a half-written file, and a racing creator's key wins without being clobbered.
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(KeyPair.generate().to_bytes())
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(temp, path)
    finally:
        temp.unlink(missing_ok=True)
