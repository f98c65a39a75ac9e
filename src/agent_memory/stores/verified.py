"""The one verified read path: every reader gets records through :func:`read_verified`.

Recall, the generated views, export, consolidation, distillation, golden recall, the review
queue and doctor's reports all read the latest version of every record here (DESIGN.md §5
"One gate in, one verified read path out"). A version is *verified* when it parses and its
id matches its birth content (the store checks that on every read) and :func:`check_version`
passes. In a store with a signing key (a Home) every version is signed — by the Home itself,
which signs what it writes and what it imports (issue 20), or by a signer its ``memory.toml
[trust]`` names, whose records an import keeps byte for byte — and its signature verifies.
A version signed by any other key is refused: anyone can sign with a key of their own, so a
note whose taint line was deleted and that was signed again by another key proves nothing.
Review state and taint are then computed from the verified fields only
(:class:`~agent_memory.governance.review_book.ReviewBook`), so deleting a ``taint:`` line,
changing ``state:``, editing the body, removing the signature of a note or signing it again
makes the record *refused*: reported by the reader, never shown or used. A store without a
key (``home_signer`` ``None``) checks only the signatures its versions carry.

An erasure tombstone carries no content to trust and is passed through (every reader
already treats it as erased).

Invariant: read-only; a refused record is never repaired or hidden silently: each reader
returns or prints its :class:`Refusal`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass

from agent_memory.errors import AgentMemoryError, RecordNotFound, SignatureError, StoreError
from agent_memory.records.record import MemoryRecord
from agent_memory.records.signing import verify_record
from agent_memory.stores.base import RecordStore

__all__ = [
    "Reading",
    "Refusal",
    "Signers",
    "check_version",
    "iter_verified",
    "read_verified",
    "verified_get",
    "verified_history",
    "verified_lookup",
]


@dataclass(frozen=True, slots=True)
class Refusal:
    """A record a reader left out because its latest version does not verify.

    Attributes:
        record_id: The record's id (``mem:…``).
        error: Why: a :class:`~agent_memory.errors.StoreError` (the note does not parse or
            its id does not match) or a :class:`~agent_memory.errors.SignatureError`.
    """

    record_id: str
    error: AgentMemoryError

    def __str__(self) -> str:
        return str(self.error)


@dataclass(frozen=True, slots=True)
class Reading:
    """What :func:`read_verified` found.

    Attributes:
        records: The latest version of every record that verifies, by ``(created_at, id)``.
        refused: The records left out, by id.
    """

    records: tuple[MemoryRecord, ...]
    refused: tuple[Refusal, ...] = ()


@dataclass(frozen=True, slots=True)
class Signers:
    """Whose signatures a Home's verified read path takes (module docstring).

    Attributes:
        home: The Home's own ``amp:key:`` address; ``None`` for a store with no signing key
            (then only the signatures versions carry are checked).
        trusted: The other signers the Home trusts (``memory.toml [trust] trusted_signers``).
    """

    home: str | None = None
    trusted: frozenset[str] = frozenset()

    def check(self, record: MemoryRecord, *, path: str | None = None) -> None:
        """:func:`check_version` with these signers.

        Raises:
            SignatureError: As for :func:`check_version`.
        """
        check_version(record, home_signer=self.home, trusted=self.trusted, path=path)

    def keys(self) -> frozenset[str]:
        """Every address trusted: the Home's own (when it has one) and ``trusted``."""
        return self.trusted | ({self.home} if self.home else set())


def check_version(
    record: MemoryRecord,
    *,
    home_signer: str | None = None,
    trusted: Collection[str] = (),
    path: str | None = None,
) -> None:
    """Check that a record version (already parsed, its id matched) may be trusted.

    Args:
        record: The version.
        home_signer: The Home's own ``amp:key:`` address. With it, a version must be signed
            by it or by one of ``trusted``, and verify; ``None`` (a store with no signing
            key) only verifies the signatures versions carry.
        trusted: The other signers the Home trusts (``memory.toml [trust] trusted_signers``).
        path: The file named in the error.

    Raises:
        SignatureError: The signature does not verify, the version is unsigned (its signature
            was removed), or it is signed by a key the Home does not trust (signed again
            after an edit); field ``signature`` or ``signed_by``.
    """
    if record.redacted:
        return
    if record.signed_by or record.signature:
        verify_record(record, path=path)
        if home_signer is not None and record.signed_by != home_signer and record.signed_by not in trusted:
            raise SignatureError(
                f"signed by {record.signed_by}, a key this Home does not trust (memory.toml "
                "[trust]): anyone can sign with a key of their own, so none of its fields can "
                "be trusted",
                field="signed_by",
                path=path,
                record_id=record.id,
            )
    elif home_signer is not None:
        raise SignatureError(
            "unsigned, but this Home signs every record it stores (what it writes and what it "
            "imports): its signature was removed, so none of its fields can be trusted",
            field="signature",
            path=path,
            record_id=record.id,
        )


def verified_get(
    store: RecordStore, record_id: str, *, home_signer: str | None = None, trusted: Collection[str] = ()
) -> MemoryRecord:
    """Return the latest version of ``record_id`` once it verifies (:func:`check_version`).

    Raises:
        RecordNotFound: The store holds no such record.
        StoreError: The note cannot be read or its id does not match its content.
        SignatureError: The version does not verify.
    """
    record = store.get(record_id)
    check_version(record, home_signer=home_signer, trusted=trusted)
    return record


def verified_history(
    store: RecordStore, record_id: str, *, home_signer: str | None = None, trusted: Collection[str] = ()
) -> list[MemoryRecord]:
    """Return every version of ``record_id``, oldest first, once each verifies (:func:`check_version`).

    Raises:
        RecordNotFound: The store holds no such record.
        StoreError: A note cannot be read or its id does not match its content.
        SignatureError: A version does not verify (the message names its number).
    """
    history = store.history(record_id)
    for number, version in enumerate(history, start=1):
        try:
            check_version(version, home_signer=home_signer, trusted=trusted)
        except SignatureError as exc:
            raise SignatureError(
                f"version {number}: {exc.detail}", field=exc.field, record_id=record_id, path=exc.path
            ) from None
    return history


def verified_lookup(
    lookup: Callable[[str], MemoryRecord | None], signers: Signers
) -> Callable[[str], MemoryRecord | None]:
    """Wrap a record lookup so that a version failing :meth:`Signers.check` reads as absent (``None``)."""

    def verified(record_id: str) -> MemoryRecord | None:
        record = lookup(record_id)
        if record is None:
            return None
        try:
            signers.check(record)
        except SignatureError:
            return None
        return record

    return verified


def read_verified(
    store: RecordStore,
    *,
    home_signer: str | None = None,
    trusted: Collection[str] = (),
    record_ids: Iterable[str] | None = None,
) -> Reading:
    """Return the latest version of every record (or of ``record_ids``) that verifies, and those refused.

    One unreadable note does not hide the others: when the store's bulk ``list`` fails,
    every record is read on its own.

    Args:
        store: The records.
        home_signer: See :func:`check_version`.
        trusted: See :func:`check_version`.
        record_ids: Only these records (unknown ids are skipped); every record when ``None``.

    Raises:
        StoreError: The store itself cannot be listed (its folder or database unreadable).
    """
    if record_ids is None:
        try:
            latest: list[MemoryRecord] | None = store.list()
        except StoreError:
            latest = None
        ids = _every_id(store) if latest is None else [r.id for r in latest]
    else:
        latest, ids = None, sorted(set(record_ids))
    records: list[MemoryRecord] = []
    refused: list[Refusal] = []
    by_id = {r.id: r for r in latest} if latest is not None else {}
    for record_id in ids:
        try:
            record = by_id.get(record_id) or store.get(record_id)
            check_version(record, home_signer=home_signer, trusted=trusted)
        except RecordNotFound:
            continue
        except (StoreError, SignatureError) as exc:
            refused.append(Refusal(record_id, exc))
            continue
        records.append(record)
    records.sort(key=lambda r: (r.created_at, r.id))
    return Reading(tuple(records), tuple(refused))


def iter_verified(
    store: RecordStore,
    *,
    home_signer: str | None = None,
    trusted: Collection[str] = (),
    chunk: int = 1000,
    refused: Callable[[Refusal], None] = lambda refusal: None,
) -> Iterator[MemoryRecord]:
    """Yield the latest version of every record that verifies, ``chunk`` records read at a time.

    :func:`read_verified` in bounded memory (issue 23: a count over 100,000 records held them
    all at once): records come in id order, not ``(created_at, id)``, and each one refused is
    passed to ``refused``. A store that cannot list its ids is read whole, as
    :func:`read_verified` reads it.

    Raises:
        StoreError: The store itself cannot be listed (its folder or database unreadable).
    """
    tokens = getattr(store, "version_tokens", None)
    ids = sorted(tokens()) if callable(tokens) else None
    chunks = [None] if ids is None else [ids[start : start + chunk] for start in range(0, len(ids), chunk)]
    for record_ids in chunks:
        reading = read_verified(store, home_signer=home_signer, trusted=trusted, record_ids=record_ids)
        for refusal in reading.refused:
            refused(refusal)
        yield from sorted(reading.records, key=lambda r: r.id)


def _every_id(store: RecordStore) -> list[str]:
    tokens = getattr(store, "version_tokens", None)
    if not callable(tokens):  # a store that cannot list its ids one by one: its error stands
        store.list()
        return []
    return sorted(tokens())
