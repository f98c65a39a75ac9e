"""Check a Home's log against every signed checkpoint that witnesses it (``log --verify``, ``doctor``).

The witnesses are the checkpoint file beside the key (outside the Home) and the
``Agent-Memory-Checkpoint`` trailers of the git commits reachable from ``HEAD``
(:mod:`agent_memory.log.anchor`). One pass over the log checks the hash chain and records
the digest at each witnessed seq; then every witness is compared with the log:

- a witnessed seq beyond the log's end: its tail was cut, or a month file the witness names
  is missing (named);
- a witnessed seq whose digest differs: a line at or before it was rewritten, removed,
  inserted or reordered and the chain recomputed after it;
- a witness that does not verify (forged or damaged) is a failure; one signed by another
  key (before ``init-key``) is set aside with a warning;
- entries after the newest checkpoint are a warning: nothing signed covers them (a process
  killed between its append and its checkpoint, or lines appended by something else).

Each finding names the witness that disagreed. Read-only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agent_memory.errors import AgentMemoryError, LogError, SignatureError
from agent_memory.log.anchor import Checkpoint, CheckpointFile, checkpoint_path, git_checkpoints
from agent_memory.log.base import LogEntry
from agent_memory.records.signing import address_of, load_or_create_identity
from agent_memory.records.wire import format_timestamp

if TYPE_CHECKING:
    from agent_memory.home import Home

__all__ = ["LogAudit", "Witness", "audit_log"]


@dataclass(frozen=True, slots=True)
class Witness:
    """One signed checkpoint and where it was found.

    Attributes:
        where: ``checkpoint file <path>``, ``checkpoint file <path> (kept)`` or ``git commit <id>``.
        checkpoint: What it signs.
    """

    where: str
    checkpoint: Checkpoint


@dataclass(frozen=True, slots=True)
class LogAudit:
    """What :func:`audit_log` found.

    Attributes:
        entries: How many entries checked before the first chain problem (all, when none).
        failures: One line per problem: chain damage, or a witness the log disagrees with (named).
        warnings: Entries no checkpoint covers, witnesses set aside, no witness at all.
        witnesses: One line per kind of witness used: where and the newest seq it holds.
    """

    entries: int
    failures: tuple[str, ...]
    warnings: tuple[str, ...]
    witnesses: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True when no failure was found (warnings allowed)."""
        return not self.failures


def audit_log(home: Home) -> LogAudit:
    """Verify ``home``'s log chain and compare it with every checkpoint found (read-only).

    Signatures are checked against the Home's key when its key file is here; otherwise
    against the address the log's ``init`` entry names (a copy or clone without the key).
    """
    failures: list[str] = []
    warnings: list[str] = []
    log = home.log()
    address, trusted_from = _trusted_address(home)
    witnesses, notes = _witnesses(home, failures)
    wanted = {w.checkpoint.seq for w in witnesses}
    digests: dict[int, str] = {}
    first: list[LogEntry] = []
    last = [0]

    def seen(entry: LogEntry, digest: str) -> None:
        last[0] = entry.seq
        if entry.seq in wanted:
            digests[entry.seq] = digest
        if entry.seq == 1:
            first.append(entry)

    count, chain_error = 0, None
    try:
        count = log.verify(on_entry=seen)
    except LogError as exc:
        chain_error = exc
        failures.append(str(exc))
        count = last[0]
    if address is None and first:
        agent = first[0].details.get("agent")
        address = agent if isinstance(agent, str) else None
        trusted_from = "the address the log's init entry names (no key file here)"
    usable = _usable(witnesses, home.settings.home_id, address, failures, warnings)
    _compare(usable, digests, count, chain_error, log.folder, failures)
    newest = max(usable, key=lambda w: w.checkpoint.seq, default=None)
    head = log.last() if chain_error is None else None
    if newest is None:
        warnings.append(
            "no signed checkpoint found (none beside the key, none in a git trailer): a cut tail or a "
            "chain recomputed after an edit cannot be detected; edits, removals and reorders that left "
            "the chain broken still are"
        )
    elif head is not None and head.seq > newest.checkpoint.seq:
        warnings.append(_unanchored(log.entries(since_seq=newest.checkpoint.seq), newest))
    lines = [*notes, f"signatures checked against {trusted_from}"] if usable else notes
    return LogAudit(count, tuple(dict.fromkeys(failures)), tuple(warnings), tuple(lines))


def _trusted_address(home: Home) -> tuple[str | None, str]:
    try:
        if home.settings.key_file.is_file():
            return address_of(load_or_create_identity(home.settings.key_file)), "the Home's key"
    except (AgentMemoryError, OSError):
        pass
    return None, "nothing (no key file here, no init entry)"


def _witnesses(home: Home, failures: list[str]) -> tuple[list[Witness], list[str]]:
    found: list[Witness] = []
    notes: list[str] = []
    path = checkpoint_path(home.settings.key_file, home.root)
    try:
        newest, kept = CheckpointFile(path).read()
    except LogError as exc:
        failures.append(f"checkpoint file: {exc}")
        newest, kept = None, []
    if newest is not None:
        found.append(Witness(f"checkpoint file {path}", newest))
        found += [Witness(f"checkpoint file {path} (kept: the log had stopped holding it)", c) for c in kept]
        notes.append(f"checkpoint file {path}: seq {newest.seq}")
    else:
        notes.append(f"no checkpoint file at {path} (a copy or clone of the Home, or never written here)")
    commits, problems = git_checkpoints(home.root)
    failures += problems
    found += [Witness(f"git commit {commit}", checkpoint) for commit, checkpoint in commits]
    if commits:
        top_commit, top = max(commits, key=lambda c: c[1].seq)
        notes.append(f"{len(commits)} git commit trailer(s): newest seq {top.seq} (commit {top_commit})")
    else:
        notes.append("no git commit with a checkpoint trailer")
    return found, notes


def _usable(
    witnesses: list[Witness], home_id: str, address: str | None, failures: list[str], warnings: list[str]
) -> list[Witness]:
    usable = []
    for witness in witnesses:
        checkpoint = witness.checkpoint
        if checkpoint.home != home_id:
            warnings.append(f"{witness.where}: a checkpoint of another Home ({checkpoint.home}): not used")
            continue
        if address is not None and checkpoint.signed_by != address:
            warnings.append(
                f"{witness.where}: signed by {checkpoint.signed_by}, not by this Home's key (a key "
                "replaced by init-key?): not used"
            )
            continue
        try:
            checkpoint.verify()
        except SignatureError as exc:
            failures.append(
                f"{witness.where}: the checkpoint of seq {checkpoint.seq} {exc}: forged or damaged"
            )
            continue
        usable.append(witness)
    return usable


def _compare(
    usable: list[Witness],
    digests: dict[int, str],
    count: int,
    chain_error: LogError | None,
    folder: Path,
    failures: list[str],
) -> None:
    groups: dict[tuple[int, str], list[Witness]] = {}
    for witness in usable:
        groups.setdefault((witness.checkpoint.seq, witness.checkpoint.head), []).append(witness)
    for (seq, head), group in sorted(groups.items(), reverse=True):
        checkpoint = group[0].checkpoint
        who = _names(group)
        signed = f"{who} (seq {seq} of {format_timestamp(checkpoint.time)})"
        if seq in digests:
            if digests[seq] != head:
                failures.append(
                    f"seq {seq} differs from {signed}: a line at or before it was rewritten, removed, "
                    "inserted or reordered and the hash chain recomputed after it"
                )
            continue
        if chain_error is not None:
            continue  # beyond the break: the chain failure already says where
        missing = [
            m for m, first in sorted(checkpoint.months.items()) if not (folder / f"{m}.jsonl").exists()
        ]
        if missing:
            named = ", ".join(f"log/{m}.jsonl (from seq {checkpoint.months[m]})" for m in missing)
            failures.append(f"missing month file {named}: {signed} names it")
        failures.append(f"the log ends at seq {count} but {signed} holds seq {seq}: its tail was cut")


def _names(group: list[Witness]) -> str:
    files = [w.where for w in group if w.where.startswith("checkpoint file")]
    commits = [w.where.removeprefix("git commit ") for w in group if w.where.startswith("git commit")]
    parts = [*files]
    if commits:
        parts.append(
            f"git commit {commits[0]}" + (f" and {len(commits) - 1} more" if len(commits) > 1 else "")
        )
    return " and ".join(parts)


def _unanchored(after: Iterable[LogEntry], newest: Witness) -> str:
    entries = list(after)
    if not entries:
        return f"the log grew past the newest checkpoint (seq {newest.checkpoint.seq}) while it was read"
    counts = Counter(str(e.action) for e in entries)
    actions = ", ".join(f"{action} x{n}" if n > 1 else action for action, n in counts.items())
    first, last = entries[0].seq, entries[-1].seq
    return (
        f"seq {first}-{last} ({actions}) came after the newest checkpoint (seq {newest.checkpoint.seq}, "
        f"{newest.where}): no signature covers them (a write killed before its checkpoint, or lines "
        "appended by something other than agent-memory)"
    )
