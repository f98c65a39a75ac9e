"""What doctor's conformance report reads from a Home, read once (seed 000 §21, seed 003).

:class:`HomeFacts` gathers the Home's notes (through the one verified read path), its log
(audited against every signed checkpoint of its head), its views, inbox, archive and
``conventions.md``; the verdict modules (:mod:`.checklist`, :mod:`.decisions`,
:mod:`.influence`) turn those facts into ``pass``, ``fail`` or ``not-applicable`` with a
reason, each as a ``(status, reason)`` pair (:data:`Verdict`).

Invariant: read-only; damage (an unreadable note, a broken log) becomes a reason, never an
exception.
"""

from __future__ import annotations

from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

from agent_memory.errors import AgentMemoryError, LogError
from agent_memory.home import Home
from agent_memory.records.record import MemoryRecord
from agent_memory.stores.verified import read_verified

__all__ = ["FAIL", "NA", "PASS", "HomeFacts", "Verdict", "read_text"]

PASS, FAIL, NA = "pass", "fail", "not-applicable"
Verdict = tuple[str, str]
"""``(status, reason)``: status one of :data:`PASS`, :data:`FAIL`, :data:`NA`."""


class HomeFacts:
    """What the report reads from the Home, each read once (damage becomes a reason, never an error).

    Attributes:
        home, root: The Home and its folder.
        records: The latest version of every record that verifies.
        refused: ``{record id: why}`` for the records the verified read path refused.
        store_problems: The note files that do not parse (``FileStore.check``).
        entries: Every log entry, oldest first (empty when the log fails its audit).
        log_error: Why the log cannot be trusted ("" when its chain and checkpoints agree).
        actions: How many entries each action has.
        hot, index, topics, conventions: The text of ``MEMORY.md``, ``index.md``,
            ``topics/*.md`` (by file name) and ``conventions.md`` ("" when missing).
        captured: The inbox and archive items that parse; ``capture_errors`` the rest.
        archive_problems: What :func:`~agent_memory.jobs.archive.check_archive` found.

    Args:
        home: The Home to read.
    """

    def __init__(self, home: Home) -> None:
        from agent_memory.doctor.log_audit import audit_log
        from agent_memory.jobs.archive import check_archive

        self.home, self.root = home, home.root
        store = home.store()
        self.store_problems = store.check()
        # The one verified read path: a note that does not verify is reported, never judged.
        reading = read_verified(
            store,
            home_signer=home.signer(),
            trusted=home.settings.trusted_signers,
            record_ids=store.version_tokens(),
        )
        self.records: list[MemoryRecord] = list(reading.records)
        self.refused = {refusal.record_id: str(refusal) for refusal in reading.refused}
        self.log_error = ""
        try:
            audit = audit_log(home)  # the chain and every signed checkpoint of its head (issue 19)
            if not audit.ok:
                raise LogError("; ".join(audit.failures))
            self.entries = list(home.log().entries())
        except AgentMemoryError as exc:
            self.log_error, self.entries = str(exc), []
        self.actions = Counter(str(entry.action) for entry in self.entries)
        self.hot = read_text(self.root / "MEMORY.md")
        self.index = read_text(self.root / "index.md")
        self.conventions = read_text(self.root / "conventions.md")
        topics = self.root / "topics"
        self.topics = {p.name: read_text(p) for p in sorted(topics.glob("*.md"))} if topics.is_dir() else {}
        self.captured, self.capture_errors = self._captured()
        try:
            self.archive_problems = [str(p) for p in check_archive(home)]
        except AgentMemoryError as exc:
            self.archive_problems = [f"could not be checked: {exc}"]

    def _captured(self) -> tuple[list[Any], list[str]]:
        from agent_memory.jobs.archive import archived_items
        from agent_memory.jobs.inbox import read_inbox

        items: list[Any] = []
        errors: list[str] = []
        try:
            parsed = read_inbox(self.home)
            items += parsed.items
            errors += [f"inbox.md: {p}" for p in parsed.problems]
        except AgentMemoryError as exc:
            errors.append(str(exc))
        folder = self.root / "archive"
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
            try:
                items += archived_items(self.home, date.fromisoformat(path.stem))
            except (AgentMemoryError, ValueError) as exc:
                errors.append(f"{path.name}: {exc}")
        return items, errors

    def view_texts(self) -> str:
        """Return the text of every generated view (MEMORY.md, index.md, topics/*.md) joined."""
        return "\n".join([self.hot, self.index, *self.topics.values()])


def read_text(path: Path) -> str:
    """Return a file's UTF-8 text, or ``""`` when it is missing or unreadable."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
