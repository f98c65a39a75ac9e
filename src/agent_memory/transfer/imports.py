"""`Imports`: a MemoryFile imported into a memory under its writer lock, logged, caches in step.

``Memory.import_file`` delegates here. What the file adds, supersedes, disputes and erases is
:func:`~agent_memory.transfer.exchange.import_memory_file`'s; this service holds the writer
lock around it, erases a trusted file's tombstones through the one erase core
(:meth:`.Erasure.erase_held`), brings the indexes and the write keys in step and logs one
``import`` event. Invariant: a refused import writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import KW_ONLY, dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from agent_memory.transfer.exchange import ImportReport, import_memory_file

if TYPE_CHECKING:
    from agent_memory.governance.erasure.erase import Erasure
    from agent_memory.governance.secrets import SecretsSettings
    from agent_memory.records.memory_file import MemoryFile
    from agent_memory.records.record import MemoryRecord
    from agent_memory.write.writer import Writer

__all__ = ["Imports"]


@dataclass(eq=False)
class Imports:
    """MemoryFile import over one Memory's parts.

    Args:
        writer: The Memory's Writer: lock, clock, store, log, indexes, key and who acts.
        erasure: The erase verb, which a trusted file's tombstones go through.
        secrets: The Home's ``[secrets]`` policy, for the texts the file brings.
    """

    writer: Writer
    _: KW_ONLY
    erasure: Erasure
    secrets: SecretsSettings

    def import_file(
        self,
        memory_file: MemoryFile,
        *,
        verify: bool = True,
        trusted_signers: Iterable[str] = (),
        path: str | None = None,
        now: datetime | None = None,
    ) -> ImportReport:
        """Import a MemoryFile under the writer lock, log it, and keep the caches in step.

        See :func:`~agent_memory.transfer.exchange.import_memory_file` (put what the Home
        lacks, tombstones included; erased ids stay erased). A trusted file's tombstone of a
        record held live here erases it through the same core as ``erase``
        (:meth:`.Erasure.erase_held`: its receipt logged, dependents listed, every holder
        swept; the authority is the file's signer),
        when the actor holds the ``erase`` grant; otherwise it is held back and said. The
        import event names those receipts (``erasures``). The Home's own key and its
        ``memory.toml [trust]`` signers are trusted besides ``trusted_signers``. What it
        stores is signed by the Home's key, except a record that arrives unchanged and
        signed by the Home's own key or a ``memory.toml [trust]`` signer, which is kept byte
        for byte (issue 20: the verified read path then refuses any later edit). One
        ``import`` event names what was added and erased, and under ``signed_by`` the
        signer each record signed here had in the file.

        Raises:
            SignatureError, RecordError, ScreenError, LogError: As for
                ``import_memory_file``; nothing is written.
        """
        stamp = self.writer.clock(now)
        kept = self.writer.catalog.signers.keys()  # the Home's key and memory.toml [trust]
        trusted = {*trusted_signers, *kept}
        erasures: list[str] = []

        def erase(tombstones: Sequence[MemoryRecord]) -> None:
            # The one erase core (issue 18): receipts, listed dependents and the sweep of
            # every holder, as erase() leaves them; one erasure per reason the file gives.
            by_reason: dict[str, list[str]] = {}
            for tombstone in tombstones:
                by_reason.setdefault(str(tombstone.redaction_reason), []).append(tombstone.id)
            where = f" ({path})" if path else ""
            for reason, ids in by_reason.items():
                try:
                    receipt = self.erasure.erase_held(
                        sorted(ids),
                        reason=reason,
                        authority=f"MemoryFile signed by {memory_file.agent}{where}",
                        stamp=stamp,
                    )
                except BaseException:
                    self.writer.write_keys.refresh(ids)
                    raise
                erasures.append(receipt.erasure_id)

        with self.writer.writing():
            report = import_memory_file(
                self.writer.store,
                memory_file,
                verify=verify,
                trusted_signers=trusted,
                path=path,
                log=self.writer.log,
                actor=self.writer.actor,
                secrets=self.secrets,
                sign=self.writer.sign if self.writer.identity is not None else None,
                keep_signed_by=kept,
                erase=erase,
                may_erase=self.writer.actors.may(self.writer.actor, "erase"),
                now=stamp,
            )
            latest = {version.id: version for version in report.written}  # the last of each id
            self.writer.after_write(list(latest.values()))
            self.writer.log.append(
                "import",
                actor=self.writer.actor,
                record_ids=tuple([*report.added, *report.tombstones, *report.erased]),
                details={
                    "path": path,
                    "format": "memory-file",
                    "verified": report.verified,
                    "skipped": report.skipped,
                    "tainted": report.tainted,
                    "digests": report.digests,
                    "signed_by": report.signed_by,
                    "controls": report.controls_added,
                    "controls_refused": report.controls_refused,
                    "tombstones": report.tombstones,
                    "erased": report.erased,
                    "erasures": erasures,
                    "erased_here": report.erased_here,
                },
                now=stamp,
            )
            return report
