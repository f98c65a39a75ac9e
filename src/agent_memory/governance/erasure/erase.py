"""`Erasure`: authorized erasure across every holder, with a receipt (seed 000 §12.3).

A service built on the Memory's :class:`~agent_memory.write.writer.Writer`; ``Memory.erase``
delegates to it. One call, under the Memory's writer lock from the first check to the logged
receipt (so its ``memerase-`` id, named in every redaction marker, is the one the receipt gets):

1. checks the actor's ``erase`` grant, the ids, and screens the reason and authority (both
   stay for good, in the tombstones and the receipt: the screen of every door, issue 18) — a
   refusal writes nothing;
2. finds the *dependents*: records outside the scope whose body quotes an erased body or
   whose ``evidence``, ``provenance.ref`` or ``sources`` name an erased id. Dependents the
   caller lists in ``cascade`` are erased too; the others stay and are listed in the receipt
   as ``partially-completed`` (``dependent-not-erased``): erasing a record the user did not
   name is never automatic, and listing it is the honest alternative (DESIGN.md §9);
3. replaces every stored version by the tombstone (the store's ``erase``; SQLite stores use
   ``secure_delete``, a WAL checkpoint and ``VACUUM``; PostgreSQL ``VACUUM FULL``), removes
   pending records in the scope or quoting it, purges every index (:meth:`IndexCatalog.erased`:
   FTS ``optimize``, ``VACUUM``, WAL truncation) and the salience sidecar, and re-reads the
   erased ids' rows of the write-keys cache, which must then hold no digest of an erased key;
4. in a Home, sanitizes every file holder and scans the Home and its git objects
   (:func:`~.sweep.sweep_home`): archive segments get new identities with lineage, the inbox,
   proposals, views and exports lose the text, git history is rewritten only when
   ``rewrite_git`` asks; a holder is ``completed`` only where the scan finds no erased text;
5. appends the ``erasure-tombstone-v1`` receipt (content-free; its ``archive_lineage`` is
   what the archive ledger follows) to the log and returns it.

Outside a Home (an in-memory or SQLite-backed Memory) the store is the only file holder: a
SQLite store's database, ``-wal`` and ``-shm`` files are scanned; a PostgreSQL store reports
what the server may still keep (``postgres-residue``).

Interrupted erasures finish (issue 20 item 2): before the first tombstone the plan is saved
to the erasure journal (:mod:`.journal`) and an ``erase-intent`` event is logged; steps 3-5
are idempotent, so :meth:`Erasure.finish_erasures` (run by ``Memory.open``, and by
``erase`` asked again for the same records) carries the plan out and logs the receipt. Every
tombstone thus ends with its receipt.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import KW_ONLY, dataclass
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

from agent_memory.errors import LifecycleError, ProposalError, RecordError, ScreenError, StoreError
from agent_memory.governance.erasure.journal import ERASE_INTENT, JOURNAL_FOLDER, ErasurePlan
from agent_memory.governance.erasure.receipt import ErasureReceipt, HolderResult, needles_of, next_erasure_id
from agent_memory.governance.erasure.sanitize import MIN_TEXT_BYTES, covered_anchors
from agent_memory.log.base import entries_from_time
from agent_memory.records.wire import format_timestamp

if TYPE_CHECKING:
    from agent_memory.governance.erasure.sweep import Sweep
    from agent_memory.governance.secrets import SecretsSettings
    from agent_memory.home import Home
    from agent_memory.recall.salience import Salience
    from agent_memory.records.record import MemoryRecord
    from agent_memory.write.held import PendingRecords
    from agent_memory.write.writer import Writer

__all__ = ["Erasure"]


@dataclass(eq=False)
class Erasure:
    """The ``erase`` verb over one Memory's parts (seed 000 §12.3; DESIGN.md §9).

    Args:
        writer: The Memory's Writer: lock, clock, store, log, indexes, key, who acts and
            the write keys.
        pending: The records waiting for review (those in the scope, or quoting it, are dropped).
        salience: Touch counts (the scope's are forgotten).
        zone: The Home's time zone (the local day of ``memerase-`` ids).
        home: The Home whose file holders are swept and whose journal finishes an
            interrupted erasure, or ``None``.
        secrets: The Home's ``[secrets]`` policy, for the reason and authority.
    """

    writer: Writer
    _: KW_ONLY
    pending: PendingRecords
    salience: Salience
    zone: tzinfo
    home: Home | None
    secrets: SecretsSettings

    def erase(
        self,
        record_ids: Iterable[str],
        *,
        reason: str,
        authority: str,
        cascade: Iterable[str] = (),
        rewrite_git: bool = False,
        now: datetime | None = None,
    ) -> ErasureReceipt:
        """Erase records irreversibly from every holder and return the receipt (seed 000 §12.3).

        Args:
            record_ids: The records to erase (``mem:…``), at least one.
            reason: Why; stored in each tombstone's ``redaction_reason`` and the receipt.
                Must not quote the content.
            authority: Who or what authorized it (``authority_ref``: a person, ticket, request).
            cascade: Dependents (records quoting or pointing at the scope) to erase as well;
                each must be a dependent of ``record_ids``.
            rewrite_git: Also rewrite the Home's git history (every branch, tag and the
                stash; commit ids change, reflogs are expired, old objects pruned). Clones
                and remotes keep their copies (the receipt says so). Without it git history
                is reported ``partially-completed`` while its objects hold the text.
            now: The clock (``decided_at``; the tombstones' ``updated_at``).

        Returns:
            The ``erasure-tombstone-v1`` receipt, also appended to the log (action ``erase``).

        Raises:
            AuthorityError: The actor holds no ``erase`` grant.
            RecordError: No id, or a ``cascade`` id that is not a dependent.
            ScreenError: An empty reason or authority, or one holding what the screen refuses
                (a control character, a secret, a git conflict marker, a frontmatter block;
                :mod:`agent_memory.write.screen`); nothing is written.
            RecordNotFound: An unknown id.
            LifecycleError: A record is already erased.
            StoreError: A store, sidecar or file could not be rewritten (the receipt is not
                logged).
            ConfigError: A git command failed during the history rewrite.
        """
        named, extra = [*record_ids], [*cascade]
        try:
            stamp = self.writer.clock(now)
            self.writer.actors.require(self.writer.actor, "erase", action="erase records")
            scope = sorted(set(named))
            if not scope:
                raise RecordError("name at least one record to erase", field="record_ids")
            words = {
                name: self._screened(name, value)
                for name, value in (("reason", reason), ("authority", authority))
            }
            with self.writer.writing():
                return self.erase_held(
                    scope,
                    reason=words["reason"],
                    authority=words["authority"],
                    cascade=extra,
                    rewrite_git=rewrite_git,
                    stamp=stamp,
                )
        except BaseException:
            # A finished erase read its records' write keys again for its receipt; one that
            # failed part way reads them here, so no digest of an erased body stays behind.
            self.writer.write_keys.refresh([*named, *extra])
            raise

    def _screened(self, name: str, value: object) -> str:
        """Return an erasure's ``reason`` or ``authority`` once it passes the screen (a person's words).

        Both stay for good (the tombstones' ``redaction_reason``, the receipt in the log), so
        they pass the same screen as every text a door stores (:mod:`agent_memory.write.screen`).

        Raises:
            ScreenError: Empty (hazard ``empty``), or holding a control character, a secret
                (under ``[secrets] on_detect = "refuse"``), a git conflict marker or a
                frontmatter block, or over 1 MiB; the field is ``name``.
        """
        from agent_memory.write.screen import Hazard, screen

        if not isinstance(value, str) or not value.strip():
            raise ScreenError(f"an erasure needs a non-empty {name}", hazard=Hazard.EMPTY, field=name)
        return screen(value, field=name, policy=self.secrets).text

    def erase_held(
        self,
        scope: list[str],
        *,
        reason: str,
        authority: str,
        cascade: Iterable[str] = (),
        rewrite_git: bool = False,
        stamp: datetime,
    ) -> ErasureReceipt:
        """:meth:`erase` for a caller that holds the writer lock, checked the grant and screened the words.

        The one erase core: ``erase`` and the erasure a trusted MemoryFile's tombstones carry
        into ``import`` (:meth:`Memory.import_file <agent_memory.memory.Memory.import_file>`)
        both run it, so both leave the same tombstones, purges, sweep, dependents listed in
        the receipt and the receipt itself.

        Raises:
            As :meth:`erase`, but for the grant and the words.
        """
        histories = {record_id: self.writer.store.history(record_id) for record_id in scope}
        if any(h[-1].redacted for h in histories.values()):
            # An interrupted erasure of these records is finished, with its receipt.
            folder = self._journal_folder()
            finished = self._finish_erasures_held(folder) if folder is not None and folder.is_dir() else []
            for receipt in finished:
                if set(scope) <= set(receipt.scope_refs):
                    return receipt
        for record_id, history in histories.items():
            if history[-1].redacted:
                raise LifecycleError(self._already_erased(record_id), record_id=record_id)
        needles = needles_of(v.body for h in histories.values() for v in h)
        dependents = self._dependents(set(scope), needles)
        extra = sorted(set(cascade))
        strays = [record_id for record_id in extra if record_id not in dependents]
        if strays:
            raise RecordError(
                f"{', '.join(strays)} does not quote or point at the erased records",
                field="cascade",
                hint="cascade only names dependents listed in a receipt",
            )
        for record_id in extra:
            histories[record_id] = self.writer.store.history(record_id)
        scope = sorted(histories)
        needles = needles_of(v.body for h in histories.values() for v in h)
        erase_one = getattr(self.writer.store, "erase", None)
        if not callable(erase_one):
            raise StoreError(f"{type(self.writer.store).__name__} cannot erase; nothing was changed")
        # An erase of local day D is logged at its stamp or later (time never goes back along
        # the chain), and D began less than three days before this stamp in any time zone
        # (UTC-12 to UTC+14): older events hold no id of D, so only the log's tail is read.
        recent = entries_from_time(self.writer.log, stamp - timedelta(days=3))
        taken = [str(e.details.get("erasure_id", "")) for e in recent if e.action in ("erase", ERASE_INTENT)]
        erasure_id = next_erasure_id(taken, stamp.astimezone(self.zone).date().isoformat())
        plan = ErasurePlan(
            erasure_id=erasure_id,
            scope=tuple(scope),
            needles=needles,
            anchors=covered_anchors(histories.values()),
            reason=reason.strip(),
            authority=authority.strip(),
            rewrite_git=rewrite_git,
            decided_at=stamp,
        )
        # The intent comes before the first tombstone: a kill from here on is finished
        # by the next open (or by running erase again), never left without its receipt.
        self._open_erasure(plan)
        return self._carry_out(plan, histories, set(dependents) - set(histories))

    def finish_erasures(self) -> list[ErasureReceipt]:
        """Finish every erasure an interrupted process left (issue 20 item 2); return their receipts.

        Called by ``Memory.open``; also by :meth:`erase` when it is asked again for records
        such an erasure already tombstoned. A journal whose receipt is already in the log is
        only removed. Each finished erasure tombstones what is left, purges the indexes and
        sidecars, sweeps the Home and logs its receipt.

        Raises:
            StoreError, ConfigError: As :meth:`erase` (the journal stays for the next try).
        """
        folder = self._journal_folder()
        if folder is None or not folder.is_dir() or not any(folder.glob("*.json")):
            return []
        with self.writer.writing():
            return self._finish_erasures_held(folder)

    def _finish_erasures_held(self, folder: Path) -> list[ErasureReceipt]:
        """:meth:`finish_erasures` for a caller that holds the writer lock."""
        receipts = []
        for path in sorted(folder.glob("*.json")):
            plan = ErasurePlan.load(path)
            if any(
                e.action == "erase" and e.details.get("erasure_id") == plan.erasure_id
                for e in self.writer.log.entries()
            ):
                path.unlink(missing_ok=True)  # killed after its receipt: nothing left to do
                continue
            histories = {rid: self.writer.store.history(rid) for rid in plan.scope}
            dependents = self._dependents(set(plan.scope), plan.needles)
            receipts.append(self._carry_out(plan, histories, set(dependents) - set(histories)))
        return receipts

    def _already_erased(self, record_id: str) -> str:
        receipts = [
            str(e.details.get("erasure_id"))
            for e in self.writer.log.entries()
            if e.action == "erase" and record_id in e.record_ids
        ]
        return f"already erased (receipt {receipts[-1]})" if receipts else "already erased"

    def _journal_folder(self) -> Path | None:
        return self.home.cache_dir / JOURNAL_FOLDER if self.home is not None else None

    def _open_erasure(self, plan: ErasurePlan) -> None:
        folder = self._journal_folder()
        if folder is not None:
            plan.save(folder)
        self.writer.log.append(
            ERASE_INTENT,
            actor=self.writer.actor,
            record_ids=plan.scope,
            details=plan.intent_details(),
            now=plan.decided_at,
        )

    def _carry_out(
        self, plan: ErasurePlan, histories: dict[str, list[MemoryRecord]], kept_ids: set[str]
    ) -> ErasureReceipt:
        """Steps 3-5 of the module docstring for ``plan``; idempotent, so a roll-forward reruns it."""
        scope, needles, stamp = list(plan.scope), plan.needles, plan.decided_at
        erase_one = getattr(self.writer.store, "erase", None)
        if not callable(erase_one):
            raise StoreError(f"{type(self.writer.store).__name__} cannot erase; nothing was changed")
        self._drop_pending(set(scope), needles)
        tombstones: dict[str, MemoryRecord] = {}
        for rid in scope:
            latest = histories[rid][-1]
            # The store replaces the latest version last: a redacted latest means all are.
            tombstones[rid] = latest if latest.redacted else erase_one(rid, plan.reason, now=stamp)
        self.writer.catalog.erased(scope)
        self.salience.forget(scope)
        kept = {rid: self.writer.store.get(rid) for rid in sorted(kept_ids)}
        holders = [self._store_holder(needles), self._write_keys_holder(histories)]
        holders += [
            HolderResult(f"record:{rid}", "partially-completed", "dependent-not-erased")
            for rid in sorted(kept)
        ]
        sweep = self._sweep(plan.anchors, tombstones, needles, plan.erasure_id, kept, plan.rewrite_git)
        if sweep is None:
            holders += [HolderResult(name, "completed") for name in ("indexes", "salience", "pending")]
        else:
            holders += self._source_dependents(sweep, set(histories) | set(kept))
            holders += sweep.holders
        receipt = ErasureReceipt(
            erasure_id=plan.erasure_id,
            scope_refs=tuple(scope),
            authority_ref=plan.authority,
            decided_by=self.writer.actor,
            reason=plan.reason,
            decided_at=format_timestamp(stamp),
            executed_at=format_timestamp(max(stamp, self.writer.clock(None))),
            holders=tuple(holders),
            sanitized_replacement_refs=tuple(sweep.sanitized if sweep else ()),
            removed_refs=tuple(sweep.removed if sweep else ()),
            archive_lineage=tuple(sweep.lineage if sweep else ()),
        )
        self.writer.log.append(
            "erase", actor=self.writer.actor, record_ids=scope, details=receipt.to_wire(), now=stamp
        )
        folder = self._journal_folder()
        if folder is not None:
            (folder / f"{plan.erasure_id}.json").unlink(missing_ok=True)
        return receipt

    # ------------------------------------------------------------------ steps

    def _dependents(self, scope: set[str], needles: tuple[bytes, ...]) -> dict[str, MemoryRecord]:
        found: dict[str, MemoryRecord] = {}
        for record in self.writer.store.list():
            if record.id in scope or record.redacted:
                continue
            pointers = {*record.evidence, *(record.sources or ()), record.provenance.ref or ""}
            body = record.body.encode("utf-8")
            if pointers & scope or any(needle in body for needle in needles):
                found[record.id] = record
        return found

    def _drop_pending(self, scope: set[str], needles: tuple[bytes, ...]) -> None:
        texts = [n for n in needles if len(n) >= MIN_TEXT_BYTES]
        for record in self.pending.list():
            if record.id not in scope and not any(n in record.body.encode("utf-8") for n in texts):
                continue
            with suppress(ProposalError):  # already gone: another hand removed it meanwhile
                self.pending.remove(record.id)

    def _store_holder(self, needles: tuple[bytes, ...]) -> HolderResult:
        """The store's own holder: a SQLite file is scanned; PostgreSQL states its residue."""
        ref = f"store:{type(self.writer.store).__name__}"
        if getattr(self.writer.store, "erasure_limitations", ()):
            return HolderResult(ref, "partially-completed", "postgres-residue")
        path = getattr(self.writer.store, "path", None)
        if isinstance(path, str) and path != ":memory:":
            for name in (path, f"{path}-wal", f"{path}-shm"):
                if os.path.isfile(name):
                    with open(name, "rb") as handle:
                        data = handle.read()
                    if any(needle in data for needle in needles):
                        return HolderResult(ref, "partially-completed", "content-remains")
        return HolderResult(ref, "completed", "tombstone-keeps-id")

    def _write_keys_holder(self, histories: dict[str, list[MemoryRecord]]) -> HolderResult:
        """The write-keys cache: SHA-256 digests of each live record's dedup and subject keys.

        A digest of an erased body confirms a guess of it, so the erased ids' rows are read
        again from the store now (tombstones are not live: their rows keep no digest) and the
        cache is then asked for every digest any erased version had: ``completed`` only when
        no erased id holds one (``.cache/write-keys.sqlite`` in a Home, else in memory).
        """
        from agent_memory.write.dedup import body_digest, subject_digest

        self.writer.write_keys.refresh(sorted(histories))
        digests = {
            (column, digest)
            for history in histories.values()
            for version in history
            for column, digest in (("body", body_digest(version)), ("subject", subject_digest(version)))
            if digest is not None
        }
        try:
            held = {
                rid for column, digest in digests for rid in self.writer.write_keys.table.find(column, digest)
            }
        except sqlite3.DatabaseError:
            return HolderResult("write-keys", "unevaluated")
        if held & histories.keys():
            return HolderResult("write-keys", "partially-completed", "content-remains")
        return HolderResult("write-keys", "completed")

    def _sweep(
        self,
        anchors: dict[str, set[str]],
        tombstones: dict[str, MemoryRecord],
        needles: tuple[bytes, ...],
        erasure_id: str,
        kept: dict[str, MemoryRecord],
        rewrite_git: bool,
    ) -> Sweep | None:
        if self.home is None:
            return None
        from agent_memory.governance.erasure.sweep import sweep_home

        return sweep_home(
            self.home,
            self.writer.log,
            tombstones=tombstones,
            anchors=anchors,
            needles=needles,
            erasure_id=erasure_id,
            keys=self.writer.identity,
            rewrite_git=rewrite_git,
            quoted_by_kept=any(n in r.body.encode("utf-8") for r in kept.values() for n in needles),
        )

    def _source_dependents(self, sweep: Sweep, listed: set[str]) -> list[HolderResult]:
        """Records kept whose source line in the archive was redacted: their audit trail is lost."""
        redacted = {f"{lineage.file}#{item}" for lineage in sweep.lineage for item in lineage.items}
        if not redacted:
            return []
        found = []
        for record in self.writer.store.list():
            refs = {record.provenance.ref, *(record.sources or ()), *record.evidence}
            if record.id not in listed and not record.redacted and refs & redacted:
                found.append(HolderResult(f"record:{record.id}", "completed", "source-anchor-erased"))
        return found
