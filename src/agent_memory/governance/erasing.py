"""``Memory.erase``: authorized erasure across every holder, with a receipt (seed 000 §12.3).

A mixin of :class:`agent_memory.memory.Memory` (like :mod:`.porcelain`). One call:

1. checks the actor's ``erase`` grant, the ids, a non-empty reason and authority — a
   refusal writes nothing;
2. finds the *dependents*: records outside the scope whose body quotes an erased body or
   whose ``evidence``, ``provenance.ref`` or ``sources`` name an erased id. Dependents the
   caller lists in ``cascade`` are erased too; the others stay and are listed in the receipt
   as ``partially-completed`` (``dependent-not-erased``): erasing a record the user did not
   name is never automatic, and listing it is the honest alternative (DESIGN.md §9);
3. replaces every stored version by the tombstone (the store's ``erase``; SQLite stores use
   ``secure_delete``, a WAL checkpoint and ``VACUUM``), removes pending records in the scope
   or quoting it, purges every index (:meth:`IndexCatalog.erased`) and the salience
   sidecar, rewrites MemoryFile exports kept in the Home, re-renders the views;
4. scans the Home (every file, and git objects decompressed) for the erased bodies and
   marks each holder ``completed`` only where none remains;
5. appends the ``erasure-tombstone-v1`` receipt (content-free) to the log and returns it.

Archive segments (``archive/*.md``) are append-only and digest-checked by the archive
ledger; sanitized segments with recorded lineage are not built yet, so an archive file that
quotes the erased text is reported ``partially-completed`` (``archive-sanitization-not-built``).
Git history is never rewritten: it is ``partially-completed`` when its objects still hold
the text.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any

from agent_memory.errors import LifecycleError, RecordError, StoreError
from agent_memory.governance.erasure import (
    ErasureReceipt,
    HolderResult,
    git_objects_holding,
    home_files_holding,
    needles_of,
    next_erasure_id,
    sanitize_memory_file,
)
from agent_memory.wire import format_timestamp

if TYPE_CHECKING:
    import threading

    from agent_memory.governance.actors import Actors
    from agent_memory.home import Home
    from agent_memory.log.base import OperationLog
    from agent_memory.memory import PendingRecords
    from agent_memory.records import MemoryRecord
    from agent_memory.salience import Salience
    from agent_memory.search.catalog import IndexCatalog
    from agent_memory.stores.base import RecordStore

__all__ = ["ErasureMethods"]

# Holders whose residue is decided by their own limitation, not "content-remains".
_KNOWN_LIMITS = {
    "archive": "archive-sanitization-not-built",
    "conventions.md": "human-owned-file",
    "inbox.md": "human-owned-file",
    "MEMORY.md": "views-not-rendered",
    "index.md": "views-not-rendered",
    "topics/": "views-not-rendered",
}
_OWNS = {
    "store": ("notes/",),
    "indexes": (".cache/",),
    "salience": (".cache/salience.json",),
    "pending": ("proposals/pending/",),
    "views": ("MEMORY.md", "index.md", "topics/"),
}
_MANAGED = (
    "notes/",
    "log/",
    ".cache/",
    ".cache/salience.json",
    "proposals/pending/",
    "proposals/promotions/",
)


class ErasureMethods:
    """The ``erase`` verb of :class:`~agent_memory.memory.Memory` (seed 000 §12.3; DESIGN.md §9)."""

    home: Home | None = None
    """The Home this Memory was opened from (set by ``Memory.open``); ``None`` in memory."""

    if TYPE_CHECKING:
        store: RecordStore
        log: OperationLog
        catalog: IndexCatalog
        pending: PendingRecords
        salience: Salience
        identity: Any
        actor: str
        actors: Actors
        zone: tzinfo
        _lock: threading.RLock
        _seen_seq: int

        def _clock(self, now: datetime | None) -> datetime: ...

        def _writing(self) -> AbstractContextManager[None]: ...

    def erase(
        self,
        record_ids: Iterable[str],
        *,
        reason: str,
        authority: str,
        cascade: Iterable[str] = (),
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
            now: The clock (``decided_at``; the tombstones' ``updated_at``).

        Returns:
            The ``erasure-tombstone-v1`` receipt, also appended to the log (action ``erase``).

        Raises:
            AuthorityError: The actor holds no ``erase`` grant.
            RecordError: No id, an empty reason or authority, or a ``cascade`` id that is not
                a dependent.
            RecordNotFound: An unknown id.
            LifecycleError: A record is already erased.
            StoreError: A store or sidecar could not be rewritten (the receipt is not logged;
                run the erasure again on what remains).
        """
        stamp = self._clock(now)
        self.actors.require(self.actor, "erase", action="erase records")
        scope = sorted(set(record_ids))
        if not scope:
            raise RecordError("name at least one record to erase", field="record_ids")
        for name, value in (("reason", reason), ("authority", authority)):
            if not isinstance(value, str) or not value.strip():
                raise RecordError(f"an erasure needs a non-empty {name}", field=name)
        holders: list[HolderResult] = []
        sanitized: list[str] = []
        with self._writing():
            histories = {record_id: self.store.history(record_id) for record_id in scope}
            for record_id, history in histories.items():
                if history[-1].redacted:
                    raise LifecycleError("already erased", record_id=record_id)
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
                histories[record_id] = self.store.history(record_id)
            scope = sorted(histories)
            needles = needles_of(v.body for h in histories.values() for v in h)
            erase_one = getattr(self.store, "erase", None)
            if not callable(erase_one):
                raise StoreError(f"{type(self.store).__name__} cannot erase; nothing was changed")
            self._drop_pending(set(scope), needles)
            tombstones: dict[str, MemoryRecord] = {
                rid: erase_one(rid, reason.strip(), now=stamp) for rid in scope
            }
            self.catalog.erased(scope)
            self.salience.forget(scope)
            self._seen_seq = -1  # the dedup maps are rebuilt from the store on the next write
            holders.append(
                HolderResult(f"store:{type(self.store).__name__}", "completed", "tombstone-keeps-id")
            )
            holders.append(HolderResult("indexes", "completed"))
            holders.append(HolderResult("salience", "completed"))
            holders.append(HolderResult("pending", "completed"))
            for dependent in sorted(set(dependents) - set(scope)):
                holders.append(
                    HolderResult(f"record:{dependent}", "partially-completed", "dependent-not-erased")
                )
            if self.home is not None:
                sanitized = self._sanitize_exports(self.home, tombstones, needles)
        if self.home is not None:
            holders.append(self._render_views(self.home))
            holders.extend(self._scan_home(self.home, needles, holders))
        with self._writing():
            taken = [str(e.details.get("erasure_id", "")) for e in self.log.entries() if e.action == "erase"]
            receipt = ErasureReceipt(
                erasure_id=next_erasure_id(taken, stamp.astimezone(self.zone).date().isoformat()),
                scope_refs=tuple(scope),
                authority_ref=authority.strip(),
                decided_by=self.actor,
                reason=reason.strip(),
                decided_at=format_timestamp(stamp),
                executed_at=format_timestamp(max(stamp, self._clock(None))),
                holders=tuple(holders),
                sanitized_replacement_refs=tuple(sanitized),
            )
            self.log.append("erase", actor=self.actor, record_ids=scope, details=receipt.to_wire(), now=stamp)
            return receipt

    # ------------------------------------------------------------------ steps

    def _dependents(self, scope: set[str], needles: tuple[bytes, ...]) -> dict[str, MemoryRecord]:
        found: dict[str, MemoryRecord] = {}
        for record in self.store.list():
            if record.id in scope or record.redacted:
                continue
            pointers = {*record.evidence, *(record.sources or ()), record.provenance.ref or ""}
            body = record.body.encode("utf-8")
            if pointers & scope or any(needle in body for needle in needles):
                found[record.id] = record
        return found

    def _drop_pending(self, scope: set[str], needles: tuple[bytes, ...]) -> None:
        for record in self.pending.list():
            if record.id not in scope and not any(n in record.body.encode("utf-8") for n in needles):
                continue
            if self.home is not None:
                (self.home.root / "proposals" / "pending" / f"{record.id[4:]}.md").unlink(missing_ok=True)
            else:
                getattr(self.pending, "_records", {}).pop(record.id, None)

    def _sanitize_exports(
        self, home: Home, tombstones: dict[str, MemoryRecord], needles: tuple[bytes, ...]
    ) -> list[str]:
        root = home.root
        rewritten = []
        for holder, paths in home_files_holding(root, needles).items():
            if holder in _MANAGED or holder.startswith("archive/") or holder in _KNOWN_LIMITS:
                continue
            for relative in paths:
                if sanitize_memory_file(root / relative, tombstones, needles, self.identity):
                    rewritten.append(relative)
        return rewritten

    def _render_views(self, home: Home) -> HolderResult:
        try:
            from agent_memory.jobs.views import render
        except ImportError:  # no renderer in this build
            return HolderResult("views", "unevaluated", "views-not-rendered")
        try:
            render(home)
        except StoreError:
            return HolderResult("views", "partially-completed", "views-not-rendered")
        return HolderResult("views", "completed")

    def _scan_home(
        self, home: Home, needles: tuple[bytes, ...], done: list[HolderResult]
    ) -> list[HolderResult]:
        root = home.root
        remaining = home_files_holding(root, needles)
        results = []
        for holder in sorted(remaining):
            if holder.startswith("archive/"):
                limitation = _KNOWN_LIMITS["archive"]
            else:
                limitation = _KNOWN_LIMITS.get(
                    holder, "content-remains" if holder in _MANAGED else "unmanaged-file"
                )
            results.append(HolderResult(holder, "partially-completed", limitation))
        for holder in ("notes/", "log/", ".cache/", "archive/", "exports"):
            if holder not in remaining and not any(h.startswith(holder) for h in remaining):
                results.append(HolderResult(holder, "completed"))
        git = git_objects_holding(root, needles)
        if git is not None:
            if git:
                results.append(
                    HolderResult("git-history", "partially-completed", "git-history-not-rewritten")
                )
            else:
                results.append(HolderResult("git-history", "completed"))
        # A holder marked completed above that the scan still finds is downgraded.
        for index, holder_result in enumerate(done):
            owned = _OWNS.get(holder_result.holder_ref.split(":")[0], ())
            if holder_result.result == "completed" and any(h in remaining for h in owned):
                done[index] = HolderResult(holder_result.holder_ref, "partially-completed", "content-remains")
        return results
