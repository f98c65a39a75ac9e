"""Export and import of MemoryFiles: the portable, signed form of a memory (seed 001 §export/import).

Export writes the latest version of every record, signed by the Home's key when one is
given. Import verifies by default (the file must be signed; every record naming a signer
must verify), then adds only records whose id the store does not hold yet, and says which
it skipped. Trust (DESIGN.md §9): a record arrives untainted only when it is signed by a
trusted key, or unsigned inside a file signed by a trusted key; every other record gets
``taint: ["external"]`` (which makes it a new version: the original signed bytes stay in the
source file, and the import log entry keeps their sha256). A record's review state is never
taken from the file. What the import stores is signed by the Home's key (issue 20), unless it
arrives unchanged and signed by a key the Home's verified read path trusts (its own, or
``memory.toml [trust]``), which it keeps byte for byte; so a taint line deleted from an
imported note, or the note signed again by another key, is refused by every reader. The
record keeps its provenance (the origin's agent), and the import event names the signer the
file had (``signed_by``). Nothing is written unless every record passed.

One current value per subject (DESIGN.md §7; :mod:`agent_memory.transfer.states`): an active
``state`` record whose subject already has a live value here goes through ``plan_write`` and
``execute`` as ``remember`` would — it supersedes the held value when trusted and no older,
disputes it when tainted or older — so an import never leaves two active values for a subject.

Withdrawal (seed 000 §12.2, DESIGN.md §9; :mod:`agent_memory.governance.portability`): given
the Home's log, a plain export omits withdrawn records, and ``include_withdrawn`` carries them
with every control record; an import appends the file's controls to the target's log before
it writes any record, and a target without a log refuses a file that carries controls.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from fg_agent_id import KeyPair

from agent_memory.errors import AgentMemoryError, RecordError
from agent_memory.governance.secrets import SecretsSettings, screen_text
from agent_memory.log.anchor import HeadWitness
from agent_memory.log.base import OperationLog
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.record import MemoryRecord
from agent_memory.records.wire import utc_now
from agent_memory.stores.base import BatchPut, RecordStore, check_next_version
from agent_memory.stores.verified import Refusal, read_verified
from agent_memory.transfer.states import plan_states, write_routed
from agent_memory.write.plan import PlanKind
from agent_memory.write.screen import screen

__all__ = [
    "EXTERNAL_TAINT",
    "ImportReport",
    "Refusal",
    "check_importable",
    "export_memory_file",
    "import_memory_file",
]

_BATCH = 1000  # records per put_many transaction of a store that has one (SQLite, PostgreSQL)

EXTERNAL_TAINT = "external"


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import did.

    Attributes:
        added: Ids of the records written (version 1 each), in file order.
        skipped: Ids already in the store, left untouched.
        tainted: Ids among ``added`` that arrived with the ``external`` taint.
        digests: sha256 hex of each added record's canonical bytes as it was in the file.
        verified: Whether signatures were checked (False only with ``verify=False``).
        controls_added: Withdrawal controls appended to the log (their stored ids).
        controls_skipped: The file's controls already in the log.
        controls_renamed: ``{file id: stored id}`` for controls whose id was taken here.
        controls_refused: ``{file id: why}`` for reinstatements kept out (scope stays excluded).
        withdrawn: Ids among ``added`` that a withdrawal in force keeps out of sight.
        redacted: ``{file id: stored id}`` for records whose body held a secret and were
            stored redacted (``[secrets] on_detect = "redact"``): a new record, signed here.
        superseded: ``{added id: held id}`` for state values that superseded the held value
            of their subject (trusted and no older).
        disputed: ``{added id: held id}`` for state values that now dispute the held value
            (tainted or older): both are transitional until resolved.
        held_back: ``{file id: why}`` for state values not written (their subject is already
            disputed here, …); import the file again once it is resolved.
        same_value: ``{file id: held id}`` for state values whose words are already the live
            value of their subject: not written (listed in ``skipped`` too).
        tombstones: Ids the file holds erased that arrived as tombstones (new here).
        erased: Ids held here live whose tombstone the file carries: erased here, as the
            file's owner erased them (anti-resurrection; a trusted file only).
        erased_here: Ids the file holds live that this Home holds erased: never brought back
            (listed in ``skipped`` too).
        erasures_held_back: ``{id: why}`` for tombstones of records held live here that the
            file may not erase (it is not verified and signed by a trusted key).
        signed_by: ``{stored id: signer in the file}`` (``None``: unsigned there) for the
            records stored signed by this Home's key instead of their own signature.
        written: Every version written, in write order (new records, tombstones, and both
            sides of each supersede or dispute), so a caller brings its caches in step
            without reading them back.
    """

    added: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    tainted: list[str] = field(default_factory=list)
    digests: dict[str, str] = field(default_factory=dict)
    verified: bool = True
    controls_added: list[str] = field(default_factory=list)
    controls_skipped: list[str] = field(default_factory=list)
    controls_renamed: dict[str, str] = field(default_factory=dict)
    controls_refused: dict[str, str] = field(default_factory=dict)
    withdrawn: list[str] = field(default_factory=list)
    redacted: dict[str, str] = field(default_factory=dict)
    superseded: dict[str, str] = field(default_factory=dict)
    disputed: dict[str, str] = field(default_factory=dict)
    held_back: dict[str, str] = field(default_factory=dict)
    same_value: dict[str, str] = field(default_factory=dict)
    tombstones: list[str] = field(default_factory=list)
    erased: list[str] = field(default_factory=list)
    erased_here: list[str] = field(default_factory=list)
    erasures_held_back: dict[str, str] = field(default_factory=dict)
    signed_by: dict[str, str | None] = field(default_factory=dict)
    written: list[MemoryRecord] = field(default_factory=list, repr=False)


def check_importable(memory_file: MemoryFile, *, path: str | None = None) -> list[MemoryRecord]:
    """Refuse a file that contradicts itself; return its records, one per id.

    Follows the origin's ``Memory.load`` (seed 001; origin-notes §1.7) where the file is sound,
    and refuses, before anything is written, what it would settle by order alone (issue 18
    case 2): an unknown format version, unknown top-level fields (only
    :data:`~agent_memory.governance.portability.EXTRA_KEY` is ours), or two different contents
    for one id. The same record twice is kept once; a record and its tombstone are the
    tombstone (the erasure happened after the record was written).

    Raises:
        RecordError: Naming ``path`` and the field (``format``, the unknown key) or the id.
    """
    from agent_memory.governance.portability import EXTRA_KEY
    from agent_memory.records.wire import FORMAT_VERSION

    if memory_file.format != FORMAT_VERSION:
        raise RecordError(
            f"unknown format version {memory_file.format!r} (this reader takes {FORMAT_VERSION}): "
            "refused, nothing was written",
            path=path,
            field="format",
        )
    unknown = sorted(set(memory_file.extra) - {EXTRA_KEY})
    if unknown:
        raise RecordError(
            f"unknown top-level fields {unknown}: what they mean is not known here; refused, "
            "nothing was written",
            path=path,
            field=unknown[0],
        )
    chosen: dict[str, MemoryRecord] = {}
    for record in memory_file.records:
        held = chosen.get(record.id)
        if held is None or (record.redacted and not held.redacted):
            chosen[record.id] = record
        elif not held.redacted and not record.redacted and held.canonical_bytes() != record.canonical_bytes():
            raise RecordError(
                "appears twice with different contents: which one holds is not known; refused, "
                "nothing was written",
                path=path,
                record_id=record.id,
                hint="export it again from its Home (one version per record)",
            )
    return list(chosen.values())


def export_memory_file(
    store: RecordStore,
    *,
    keys: KeyPair | None = None,
    now: datetime | None = None,
    log: OperationLog | None = None,
    include_withdrawn: bool = False,
    refused: list[Refusal] | None = None,
    witness: HeadWitness | None = None,
    home_signer: str | None = None,
    trusted: Collection[str] = (),
) -> MemoryFile:
    """Build a MemoryFile of the latest version of every record that verifies, by ``(created_at, id)``.

    Signed by ``keys`` (the file's ``agent`` is then its address) when given. Records are
    read through the one verified read path
    (:func:`~agent_memory.stores.verified.read_verified`): a note that does not parse or
    verify is left out and added to ``refused``.

    Args:
        store: The records.
        keys: The Home's key pair, to sign the file.
        now: The file's ``created_at``.
        log: The store's operation log, whose withdrawal controls decide what is exposed
            (seed 000 §12.2). A store without a log has no controls.
        include_withdrawn: Also export withdrawn records, with every control record of
            ``log`` under the file's ``withdrawal_controls`` key (for readers of ours only).
        refused: Where the records left out because they do not verify are appended.
        witness: The Home's checkpoint file (:meth:`~agent_memory.home.Home.witness`): an
            export of a log cut below it is refused, as every exposure is (issue 19).
        home_signer: The store's own signer (a Home's ``amp:key:`` address; the CLI's
            ``export`` passes it): every record must then be signed by it or by one of
            ``trusted`` (:func:`~agent_memory.stores.verified.check_version`). ``None`` (a
            store without a key; ``keys`` may then be any key that signs the file) checks
            only the signatures records carry.
        trusted: The other signers the Home trusts (``memory.toml [trust]``).

    Raises:
        LogError: A control in ``log`` cannot be read, or the log is cut below its
            witness's checkpoint (the gate fails closed).
    """
    reading = read_verified(store, home_signer=home_signer, trusted=trusted)
    if refused is not None:
        refused.extend(reading.refused)
    records = list(reading.records)
    extra: dict[str, object] = {}
    if log is not None:
        from agent_memory.governance.gate import Gate
        from agent_memory.governance.portability import EXTRA_KEY

        gate = Gate(log, store, witness=witness)
        if include_withdrawn:
            gate.view()  # exposure, even with every control carried: a cut log refuses here too
            controls = gate.controls()
            if controls:
                extra[EXTRA_KEY] = [control.to_wire() for control in controls]
        else:
            view = gate.view()
            records = [record for record in records if view.is_exposed(record)]
    memory_file = MemoryFile(created_at=now or utc_now(), records=tuple(records), extra=extra)
    return memory_file.sign(keys) if keys is not None else memory_file


def import_memory_file(
    store: RecordStore,
    memory_file: MemoryFile,
    *,
    verify: bool = True,
    trusted_signers: Collection[str] = (),
    path: str | None = None,
    log: OperationLog | None = None,
    actor: str = "owner",
    secrets: SecretsSettings | None = None,
    now: datetime | None = None,
    sign: Callable[[MemoryRecord], MemoryRecord] | None = None,
    keep_signed_by: Collection[str] = (),
    erase: Callable[[Sequence[MemoryRecord]], None] | None = None,
    may_erase: bool = True,
) -> ImportReport:
    """Add the file's records that the store does not hold yet, after the file's withdrawal controls.

    Follows the origin's ``Memory.load`` (put what the target lacks) and carries erasure
    across (DESIGN.md §5 "One gate in"; issue 18 cases 1 and 2): a tombstone the store lacks
    is written as an erased record; a tombstone of a record held live here erases it (only
    from a verified file signed by a trusted key, else it is held back); a live record this
    store holds erased is never brought back. Call it through :meth:`Memory.import_file
    <agent_memory.memory.Memory.import_file>`, which holds the writer lock and keeps the
    caches in step.

    Args:
        store: Where to write.
        memory_file: The parsed file.
        verify: Check the file signature and every record signature first (the default);
            ``False`` is the explicit opt-out, and then every record is tainted.
        trusted_signers: ``amp:key:`` addresses whose signatures make a record trusted.
        path: The file's path, named in errors.
        log: The target's operation log: the file's controls are appended to it before any
            record is written (:mod:`agent_memory.governance.portability`).
        actor: Who imports (the actor of the control events).
        secrets: The Home's ``[secrets]`` policy (default refuse): a body holding a
            credential refuses the whole file, or with ``redact`` is stored with each secret
            replaced by ``[redacted:<kind>]``, tagged ``redacted-secret``, as a new record
            with a new id (signed by ``sign``) (seed 000 §3; :mod:`agent_memory.governance.secrets`).
        now: The clock of the lifecycle versions a state value's supersede or dispute writes.
        sign: Signs what the import stores (the Home's key), as every write of the Home is
            (issue 20): every record but one that keeps its own signature (below), and the
            lifecycle versions a state value's supersede or dispute writes. A record signed
            here keeps its ``provenance`` (the origin's agent) and the report's
            ``signed_by`` names who signed it in the file. Without ``sign`` (a store with no
            key) records are stored as they arrive.
        keep_signed_by: The signers whose records are stored byte for byte, signature and
            all, when they verify and arrive unchanged (no taint added, nothing redacted):
            the Home's own key and the signers its verified read path trusts (``memory.toml
            [trust]``). A signer trusted only by ``trusted_signers`` makes a record
            untainted, and it is signed here.
        erase: Carries out the erasures the file's tombstones bring (records held live here
            whose tombstone a trusted file carries), given those tombstones: the Memory's
            erase core, so each ends with a receipt, cascades listed and every holder swept
            as ``erase`` does (issue 18). ``None``: the store's own ``erase`` (a bare store).
        may_erase: Whether the importing actor holds the ``erase`` grant; without it such
            tombstones are held back and said (``erasures_held_back``).

    Raises:
        SignatureError: With ``verify``, the file or a record does not verify; nothing written.
        RecordError: The file contradicts itself (:func:`check_importable`), a record cannot
            become a first version, a tombstone's digest is not that of the record held, a control is
            malformed or reinstates what it may not, the file carries controls and ``log``
            is ``None`` (the target cannot keep them), a body holds a secret (refuse), or a
            redacted record is referred to by another record of the file; nothing written.
        LogError: The log's controls cannot be read, or a control cannot be appended.
        ScreenError: A body fails the write screen (a secret under ``refuse``, a git conflict
            marker, foreign frontmatter, over 1 MiB, empty): the record is named, nothing written.
        ProposalError, LifecycleError: The target changed between planning and writing a state
            value's supersede or dispute (another writer); the records before it are written.
    """
    from agent_memory.governance.gate import Gate
    from agent_memory.governance.portability import (
        EXTRA_KEY,
        ControlImport,
        append_control,
        plan_control_import,
        read_file_controls,
    )

    if verify:
        memory_file.verify(path=path)
    carried = read_file_controls(memory_file, path=path)
    if carried and log is None:
        raise RecordError(
            f"the file carries {len(carried)} withdrawal controls and this target keeps no "
            "operation log to hold them: refused, so that withdrawn records are not exposed",
            path=path,
            field=EXTRA_KEY,
            hint="import it into a Home, whose log keeps the controls",
        )
    gate = Gate(log, store) if log is not None else None
    plan = ControlImport()
    if gate is not None and carried:
        plan = plan_control_import(
            gate.entries(), carried, file_agent=memory_file.agent, verified=verify, path=path
        )
    records = check_importable(memory_file, path=path)
    trusted = set(trusted_signers)
    file_trusted = verify and memory_file.agent in trusted
    report = ImportReport(verified=verify)
    pending: list[MemoryRecord] = []
    tombstones: list[MemoryRecord] = []
    to_erase: list[MemoryRecord] = []
    for record in records:
        held = store.get(record.id) if store.contains(record.id) else None
        if record.redacted:
            if held is None:
                tombstones.append(record)
            elif held.redacted:
                report.skipped.append(record.id)
            elif not file_trusted:
                report.erasures_held_back[record.id] = (
                    "the file erases a record held here, and only a file signed by a trusted key "
                    "may erase (memory.toml [trust]); nothing was erased"
                )
            elif not may_erase:
                report.erasures_held_back[record.id] = (
                    f"the file erases a record held here, and {actor} holds no erase grant "
                    "(memory.toml [actors]); nothing was erased"
                )
            elif held.birth_sha256() != record.birth_digest:
                raise RecordError(
                    "its tombstone's birth_digest is not the digest of the record held here",
                    path=path,
                    record_id=record.id,
                    field="birth_digest",
                )
            else:
                to_erase.append(record)
            if record in tombstones or record in to_erase:
                # The reason stays in the tombstone (and an erasure's receipt): the screen's
                # column for signed text, before anything is written.
                screen(
                    record.redaction_reason,
                    field="redaction_reason",
                    clean=True,
                    record_id=record.id,
                    path=path,
                )
            continue
        if held is not None:
            report.skipped.append(record.id)
            if held.redacted:
                report.erased_here.append(record.id)  # erased here: never brought back by a file
            continue
        signer_trusted = verify and record.signed_by in trusted
        unsigned_in_trusted_file = file_trusted and not record.signed_by
        incoming = record
        if not (signer_trusted or unsigned_in_trusted_file) and EXTERNAL_TAINT not in (record.taint or ()):
            incoming = record.evolve(taint=(*(record.taint or ()), EXTERNAL_TAINT))
            report.tainted.append(record.id)
        try:
            check_next_version(None, incoming)
        except AgentMemoryError as exc:
            raise RecordError(
                f"cannot import: {exc.detail}", path=path, record_id=record.id, field=exc.field
            ) from None
        # The screen's importer column; a signed record cannot be cleaned, so what it would
        # clean (control characters) is taken in as signed, and what it refuses refuses the file.
        screen(incoming.body, field="body", clean=True, secrets=False, record_id=record.id, path=path)
        screened, tags = screen_text(
            incoming.body, field="body", policy=secrets, tags=incoming.tags, record_id=record.id, path=path
        )
        if screened != incoming.body:
            incoming = dataclasses.replace(
                incoming, id="", body=screened, tags=tags, signature="", signed_by=None
            )
            if store.contains(incoming.id):
                report.skipped.append(record.id)
                continue
            report.redacted[record.id] = incoming.id
        report.digests[incoming.id] = hashlib.sha256(record.canonical_bytes()).hexdigest()
        keeps = verify and bool(incoming.signature) and incoming.signed_by in keep_signed_by
        if sign is not None and not keeps:
            # Signed by the Home, so a taint line deleted later, or the note signed again by
            # another key, is refused by the verified read path (issue 20).
            report.signed_by[incoming.id] = record.signed_by
            incoming = sign(incoming)
        pending.append(incoming)
    _check_redaction_links(pending, report.redacted, path)
    plans = plan_states(store, pending, {record.id for record in pending})
    for record_id in [*plans.held_back, *plans.same_value]:
        report.digests.pop(record_id, None)
        report.signed_by.pop(record_id, None)
        if record_id in report.tainted:
            report.tainted.remove(record_id)
    report.held_back.update(plans.held_back)
    report.same_value.update(plans.same_value)
    report.skipped.extend(plans.same_value)
    for control, origin in plan.to_append:
        assert log is not None  # noqa: S101 - a plan with controls needs a log (checked above)
        append_control(log, control, actor=actor, origin=origin)
    report.controls_added.extend(plan.added)
    report.controls_skipped.extend(plan.skipped)
    report.controls_renamed.update(plan.renamed)
    report.controls_refused.update(plan.refused)
    if isinstance(store, BatchPut) and len(plans.plain) > 1:
        for start in range(0, len(plans.plain), _BATCH):  # one transaction per batch (issue 23)
            chunk = plans.plain[start : start + _BATCH]
            store.put_many(chunk)
            report.added.extend(record.id for record in chunk)
    else:
        for record in plans.plain:
            store.put(record)
            report.added.append(record.id)
    report.written.extend(plans.plain)
    for tombstone in tombstones:
        restore = getattr(store, "restore_erased", None)
        if restore is None:
            raise RecordError("this store cannot hold an erased record", path=path, record_id=tombstone.id)
        restore([tombstone])
        report.tombstones.append(tombstone.id)
        report.written.append(tombstone)
    if to_erase and erase is not None:
        erase(to_erase)
    for tombstone in to_erase:
        if erase is None:
            store.erase(tombstone.id, tombstone.redaction_reason or "erased by its owner", now=now)  # type: ignore[attr-defined]
        report.erased.append(tombstone.id)
    report.written.extend(
        write_routed(plans.routed, store, log, actor=actor, now=now or utc_now(), sign=sign)
    )
    for routed in plans.routed:
        assert routed.other is not None  # noqa: S101 - a routed plan always names the held value
        report.added.append(routed.record.id)
        kept = report.superseded if routed.kind is PlanKind.SUPERSEDE else report.disputed
        kept[routed.record.id] = routed.other.id
    if gate is not None:
        view = gate.view()
        added = set(report.added)
        report.withdrawn.extend(r.id for r in pending if r.id in added and not view.is_exposed(r))
    return report


def _check_redaction_links(records: list[MemoryRecord], redacted: dict[str, str], path: str | None) -> None:
    """Refuse a file in which another record refers to a record that redaction gave a new id."""
    if not redacted:
        return
    for record in records:
        wire = json.dumps(record.to_wire(), ensure_ascii=False)
        for old_id in redacted:
            if old_id in wire:
                raise RecordError(
                    f"refers to {old_id}, whose body held a secret and would be stored redacted "
                    "under a new id: refused, nothing was written",
                    path=path,
                    record_id=record.id,
                    hint="remove the secret at the source and export again",
                )
