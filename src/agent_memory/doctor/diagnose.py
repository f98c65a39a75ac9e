"""``agent-memory doctor``: check a Home's integrity and repair only what is derived (issue 8, item 2).

Each check reads the Home and reports ok, warn or fail with details (one line per problem,
naming the file, record or index). A failure is what loses or breaks truth (a note missing
or damaged, a broken log chain, a half-finished write, a hand-edited view); derived state
that the next read, ``render`` or ``doctor --fix`` rebuilds (a stale view, an index behind
the notes) is a warning naming the fix, and leaves the Home healthy (exit 0, DESIGN.md §8).
:func:`repair` then fixes what can be made again from the truth: search indexes are
rebuilt, open write intents and an interrupted archive run rolled forward, stale views
re-rendered and a damaged salience sidecar reset. A note missing from ``notes/`` is never
"fixed": notes are the truth, so the failure stands until the file is restored.

Invariant: nothing under ``notes/``, ``log/`` or ``archive/`` is ever changed by a check,
and a repair only appends what a roll-forward writes: the version an open write intent
names (a new note version file) and its log events, and the missing bytes of an
interrupted archive run (fixed by its logged digests) to ``archive/``; hand-edited views,
damaged notes, a broken log chain and edited archive files are reported, never "fixed".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_memory.doctor.conformance import Conformance, conformance
from agent_memory.doctor.debris import find_debris, remove_debris
from agent_memory.errors import AgentMemoryError, SignatureError, StoreError
from agent_memory.home import Home
from agent_memory.records.record import MemoryRecord, State
from agent_memory.records.wire import utc_now
from agent_memory.stores.verified import check_version, read_verified

__all__ = ["Check", "DoctorReport", "diagnose", "doctor", "repair"]


@dataclass(frozen=True, slots=True)
class Check:
    """One integrity check's outcome.

    Attributes:
        name: Short stable name (``notes``, ``signatures``, ``log``, ``indexes``, ``intents``,
            ``views``, ``archive``, ``state``, ``salience``, ``debris``).
        ok: True when nothing was found.
        details: One line per problem (or, when ok, what was checked).
        fixable: Whether ``doctor --fix`` can repair what was found (derived data only).
        warning: With ``ok`` True: derived state is stale and the details name the fix (the
            next read, ``render`` or ``doctor --fix`` rebuilds it), or a search recipe
            ``memory.toml`` asks for cannot be opened here (the line gives why); not a failure.
    """

    name: str
    ok: bool
    details: tuple[str, ...] = ()
    fixable: bool = False
    warning: bool = False

    @property
    def status(self) -> str:
        """``"ok"``, ``"warn"`` (stale derived state, still healthy) or ``"fail"``."""
        if not self.ok:
            return "fail"
        return "warn" if self.warning else "ok"

    def to_json(self) -> dict[str, Any]:
        """Return ``{"name", "ok", "status": "ok"|"warn"|"fail", "details": [str], "fixable"}``."""
        return {
            "name": self.name,
            "ok": self.ok,
            "status": self.status,
            "details": list(self.details),
            "fixable": self.fixable,
        }


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """What doctor found (after any repairs) and what it repaired.

    Attributes:
        checks: Every check, in a fixed order, as it stands after repairs.
        fixed: One line per repair made or attempted (empty without ``--fix``).
        conformance: The seed 000 level, §21 checklist and seed 003 MUSTs (not part of
            ``healthy``: a Home can be sound at a low level).
    """

    checks: tuple[Check, ...]
    fixed: tuple[str, ...] = field(default=())
    conformance: Conformance | None = None

    @property
    def healthy(self) -> bool:
        """True when no check failed (warnings about stale derived state are allowed)."""
        return all(check.ok for check in self.checks)

    @property
    def warnings(self) -> tuple[Check, ...]:
        """The checks that passed with a warning (stale derived state and its fix)."""
        return tuple(check for check in self.checks if check.warning)

    def to_json(self) -> dict[str, Any]:
        """Return ``{"healthy": bool, "warnings": int, "checks": [...], "fixed": [str], "conformance"}``."""
        return {
            "healthy": self.healthy,
            "warnings": len(self.warnings),
            "checks": [check.to_json() for check in self.checks],
            "fixed": list(self.fixed),
            "conformance": self.conformance.to_json() if self.conformance is not None else None,
        }


def doctor(home: Home, *, fix: bool = False) -> DoctorReport:
    """Check ``home``; with ``fix``, repair what is derived and check again.

    Args:
        home: An opened Home.
        fix: Rebuild dirty indexes, roll forward open intents, finish an interrupted
            archive run, re-render stale views, reset a damaged salience sidecar and remove
            the temp files and empty record folders of interrupted writes (never
            notes, log or archive content beyond what the log fixes).

    Returns:
        The report with the conformance table (computed after repairs); ``healthy`` is
        False when integrity problems remain (a missing note stays a failure after ``fix``).

    Raises:
        StoreError: A repair could not write a derived file (the indexes, a view).
    """
    checks = diagnose(home)
    fixed = repair(home, checks) if fix else []
    if fixed:
        checks = diagnose(home)
    return DoctorReport(tuple(checks), tuple(fixed), conformance(home))


def diagnose(home: Home) -> list[Check]:
    """Run every integrity check on ``home`` (read-only) and return them in a fixed order.

    A check that cannot run (the log unreadable for the archive check) fails with the
    reason instead of raising.
    """
    runs: list[tuple[str, Callable[[Home], Check]]] = [
        ("notes", _check_notes),
        ("signatures", _check_signatures),
        ("log", _check_log),
        ("intents", _check_intents),
        ("indexes", _check_indexes),
        ("views", _check_views),
        ("archive", _check_archive),
        ("state", _check_state),
        ("salience", _check_salience),
        ("debris", _check_debris),
    ]
    checks = []
    for name, run in runs:
        try:
            checks.append(run(home))
        except AgentMemoryError as exc:
            checks.append(Check(name, False, (f"could not be checked: {exc}",)))
    return checks


def repair(home: Home, checks: list[Check]) -> list[str]:
    """Repair the derived problems ``checks`` found; return one line per repair made.

    Open intents are rolled forward only while the log chain verifies (a roll-forward
    appends to the log). Views are re-rendered only when none was edited by hand. While a
    record the log wrote is missing from ``notes/``, indexes and views are left as they are
    (a rebuild would drop the last derived copies of it; restore the note first).

    Raises:
        StoreError: A derived file could not be written.
    """
    failed = {check.name: check for check in checks if not check.ok or check.warning}
    # A log warning (a checkpoint behind the chain after a kill) still lets a roll-forward append:
    # only a chain that does not verify stops the repairs that write to the log.
    log_verifies = all(check.ok for check in checks if check.name == "log")
    fixed: list[str] = []
    rolled = False
    store = home.store()
    missing = missing_records(home, set(store.version_tokens())) if "notes" in failed else []
    if missing:
        fixed.append(
            f"indexes, views: not rebuilt while {len(missing)} record(s) the log wrote are missing from "
            "notes/ (restore them first: a rebuild would drop them from the indexes and views)"
        )
    if "intents" in failed and log_verifies:
        from agent_memory.records.signing import sign_record
        from agent_memory.write.plan import roll_forward

        try:
            keys = home.identity()  # the finished write is signed as the interrupted one would have been
            with home.writer_lock():
                closed = roll_forward(
                    home.store(),
                    home.log(),
                    actor=home.settings.owner,
                    now=utc_now(),
                    sign=lambda record: sign_record(record, keys),
                )
            fixed.append(f"intents: rolled forward {closed} interrupted write(s)")
        except AgentMemoryError as exc:  # a damaged record in the intent: reported, the rest still repaired
            fixed.append(f"intents: could not roll forward: {exc}")
        rolled = True
    if ("indexes" in failed or rolled) and not missing:
        catalog = _catalog(home)
        try:
            dirty = [entry["name"] for entry in catalog.status() if entry["dirty"]]
            if dirty:
                count = catalog.rebuild(dirty)
                fixed.append(f"indexes: rebuilt {', '.join(dirty)} from {count} record(s)")
        finally:
            catalog.close()
    if "archive" in failed and failed["archive"].fixable and log_verifies:
        from agent_memory.jobs.archive import finish_interrupted

        try:
            seq = finish_interrupted(home, now=utc_now())
            fixed.append(f"archive: finished the interrupted archive-inbox run of log seq {seq}")
        except AgentMemoryError as exc:
            fixed.append(f"archive: could not finish the interrupted run: {exc}")
    if "views" in failed and failed["views"].fixable and not missing:
        from agent_memory.jobs.views import render

        result = render(home)
        fixed.append(f"views: re-rendered {', '.join(result.written + result.removed) or 'nothing'}")
        if result.kept:
            fixed.append(
                f"views: left {', '.join(result.kept)} as edited by hand (render --force overwrites)"
            )
    if "debris" in failed:
        try:
            removed = remove_debris(home)
            fixed.append(
                f"debris: removed {len(removed.temp_files)} temp file(s) and "
                f"{len(removed.empty_folders)} empty record folder(s) left by interrupted writes"
            )
        except OSError as exc:
            fixed.append(f"debris: could not remove: {exc}")
    if "salience" in failed:
        (home.state_dir / "salience.json").unlink(missing_ok=True)
        (home.cache_dir / "salience.json").unlink(missing_ok=True)  # an older version's place
        fixed.append(
            "salience: reset the damaged sidecar .state/salience.json (touch counts start from zero)"
        )
    return fixed


# ---------------------------------------------------------------------- the checks


def _check_debris(home: Home) -> Check:
    """Stray temp files and empty record folders of interrupted writes (a warning; --fix removes them)."""
    found = find_debris(home)
    if not found:
        return Check("debris", True, ("no temp file or empty record folder left by an interrupted write",))
    fix = "doctor --fix removes them (never a version file)"
    return Check("debris", True, (*found.lines(), fix), fixable=True, warning=True)


def _latest(home: Home) -> tuple[list[MemoryRecord], int]:
    """Return the latest version of every record that verifies, and how many records there are.

    Read through the one verified read path; what it refuses is reported by the notes and
    signatures checks.
    """
    store = home.store()
    ids = sorted(store.version_tokens())
    reading = read_verified(
        store, home_signer=home.signer(), trusted=home.settings.trusted_signers, record_ids=ids
    )
    return list(reading.records), len(ids)


def _check_notes(home: Home) -> Check:
    store = home.store()
    problems = store.check()
    present = set(store.version_tokens())
    known = present | {p.record_id for p in problems if p.record_id}
    lines = [str(p) for p in problems]
    missing = missing_records(home, known)
    if missing:
        folders = " ".join(f"notes/{rid.removeprefix('mem:')}" for rid in missing)
        lines.append(
            f"{len(missing)} record(s) the log names (put or supersede, never erased) are missing from "
            f"notes/: {', '.join(missing)}; notes are the truth and doctor --fix does not recreate them"
        )
        lines.append(
            f"hint: a version file was deleted by hand; restore it: git checkout -- {folders} "
            "(to forget a memory use agent-memory withdraw or erase)"
        )
    if lines:
        return Check("notes", False, tuple(lines))
    return Check("notes", True, (f"{len(present)} record(s): every version file parses and its id verifies",))


def missing_records(home: Home, known: set[str]) -> list[str]:
    """Return the record ids the log wrote (``put``, ``supersede``) that are not in ``known``.

    Args:
        home: The Home whose log is read.
        known: The ids present in ``notes/`` (readable or not).

    Returns:
        Sorted ``mem:…`` ids written by the log, never erased (an ``erase`` event names
        them), and absent from ``known``: a note deleted by hand (DESIGN.md §7: records are
        never deleted except by authorized erasure). Empty when the log cannot be read (the
        log check reports that).
    """
    try:
        entries = list(home.log().entries())
    except AgentMemoryError:
        return []
    erased = {rid for entry in entries if entry.action == "erase" for rid in entry.record_ids}
    named = {
        rid
        for entry in entries
        if entry.action in ("put", "supersede")
        for rid in entry.record_ids
        if rid.startswith("mem:")
    }
    return sorted(named - known - erased)


def _check_signatures(home: Home) -> Check:
    store = home.store()
    signer = home.signer()
    bad, signed, unsigned = [], 0, 0
    for record_id in sorted(store.version_tokens()):
        try:
            versions = store.history(record_id)
        except StoreError:
            continue  # reported by the notes check
        for number, record in enumerate(versions, 1):
            if record.signed_by or record.signature:
                signed += 1
            else:
                unsigned += 1
            try:
                check_version(
                    record, home_signer=signer, trusted=home.settings.trusted_signers
                )  # the readers' check
            except SignatureError as exc:
                bad.append(f"{record.id} version {number}: {exc}")
    if bad:
        return Check("signatures", False, tuple(bad))
    return Check("signatures", True, (f"{signed} signed version(s) verify; {unsigned} unsigned",))


def _check_log(home: Home) -> Check:
    from agent_memory.doctor.log_audit import audit_log

    audit = audit_log(home)
    if not audit.ok:
        return Check(
            "log", False, (*audit.failures, *_cut_consequences(home), *audit.warnings, *audit.witnesses)
        )
    line = f"{audit.entries} entries: every line parses, the hash chain verifies"
    line += ", and the signed checkpoints agree" if not audit.warnings else ""
    return Check("log", True, (line, *audit.warnings, *audit.witnesses), warning=bool(audit.warnings))


def _cut_consequences(home: Home) -> list[str]:
    """What a log cut below its checkpoint does to readers, and what its lost entries did (from git)."""
    from agent_memory.doctor.lost import lost_entries, lost_lines

    lines: list[str] = []
    witness = home.witness()
    try:
        head = home.log().last()
    except AgentMemoryError:
        head = None
    why = witness.cut(home.log(), head) if witness is not None else None
    if why is not None:
        lines.append(
            "recall, views and export expose no record while the log is cut below the checkpoint beside "
            "the key (the withdrawal gate fails closed): the records its lost entries withdrew, erased or "
            "superseded would otherwise be served again"
        )
    lost = lost_entries(home)
    if lost:
        lines.append(
            f"git HEAD still holds {len(lost)} entr{'y' if len(lost) == 1 else 'ies'} the log lost "
            f"(seq {lost[0].seq}-{lost[-1].seq}); restore them with: git checkout -- log/"
        )
        lines += lost_lines(lost)
    return lines


def _check_intents(home: Home) -> Check:
    from agent_memory.write.plan import open_intents

    pending = open_intents(home.log().entries())
    journal = home.cache_dir / "erase-journal"  # governance.erasure.journal.JOURNAL_FOLDER
    erasures = sorted(p.stem for p in journal.glob("*.json")) if journal.is_dir() else []
    batches_folder = home.cache_dir / "write-journal"  # write.journal.JOURNAL_FOLDER
    batches = sorted(p.stem for p in batches_folder.glob("*.json")) if batches_folder.is_dir() else []
    if not pending and not erasures and not batches:
        return Check("intents", True, ("no half-finished write",))
    lines = (
        tuple(
            f"log seq {entry.seq}: {entry.details.get('op', '?')} of {' -> '.join(entry.record_ids)} "
            "was interrupted (no intent-done)"
            for entry in pending
        )
        + tuple(
            f"erasure {erasure_id} was interrupted before its receipt (the next open finishes it)"
            for erasure_id in erasures
        )
        + tuple(f"{key} was interrupted part way (the next open finishes it)" for key in batches)
    )
    if not pending:  # finished by the next Memory.open (any command): a warning, not damage
        return Check("intents", True, lines, warning=True)
    return Check("intents", False, lines, fixable=True)


def _catalog(home: Home) -> Any:
    from agent_memory.search.catalog import IndexCatalog

    return IndexCatalog.for_home(home.cache_dir, home.store(), search=home.settings.search)


def index_state(entry: Mapping[str, Any], *, readable: str = "record(s)") -> str:
    """Word one entry of :meth:`~agent_memory.search.catalog.IndexCatalog.status` for a person.

    ``doctor`` and ``status`` both print it: ``behind the notes``, ``waiting for the next
    recall`` (only versions written while its model was not loaded are missing: a CLI
    ``remember`` leaves its vectors to the next query) or ``clean``, the readable records
    (counted as ``readable``), the records indexed and, when stale, how many moved.
    """
    waiting = entry.get("waiting", 0)
    moved = entry["stale"] - waiting
    state = "behind the notes" if entry["dirty"] else "waiting for the next recall" if waiting else "clean"
    text = f"{state}, {entry['records']} readable {readable}, {entry['indexed']} indexed"
    if moved:
        text += f"; {moved} record(s) added, changed or removed since its last update"
    if waiting:
        text += f"; {waiting} record(s) written since its model was last loaded"
    return text


def _check_indexes(home: Home) -> Check:
    catalog = _catalog(home)
    try:
        status = catalog.status()
        described = catalog.describe()
    finally:
        catalog.close()
    # A recipe memory.toml asks for that cannot be opened here: recall quietly uses what is left.
    missing = tuple(
        f"recipe {name} cannot be opened here, so recall reads {', '.join(described['recipes'])}: {reason}"
        for name, reason in described["unavailable"].items()
    )
    lines = tuple(f"{e['name']}: {index_state(e, readable='record file(s)')}" for e in status)
    if not any(e["dirty"] for e in status):
        return Check("indexes", True, (*missing, *lines), warning=bool(missing))
    behind = [ln for ln in lines if ": behind the notes" in ln]
    fix = "derived: the next recall or doctor --fix rebuilds it from notes/"
    return Check("indexes", True, (*missing, *behind, fix), fixable=True, warning=True)


def _check_views(home: Home) -> Check:
    from agent_memory.jobs.views import check_views, render

    edited = [f"{p}" for p in check_views(home)]
    result = render(home, check=True)
    rendered_before = (home.root / "index.md").exists()
    # Before the first render only the init placeholder exists: not stale, just not rendered yet.
    would_change = [
        n for n in result.written if rendered_before and n not in {p.path for p in result.problems}
    ]
    stale = [f"{name}: stale (render would rewrite it)" for name in would_change]
    stale += [f"{name}: obsolete (render would remove it)" for name in result.removed]
    if edited:
        note = [
            "--fix re-renders the other views; views edited by hand are yours to move into memory "
            "or render --force"
        ]
        return Check("views", False, tuple(edited + stale + note), fixable=bool(stale))
    if stale:
        fix = "derived: agent-memory render (or doctor --fix) writes them again from notes/ and log/"
        return Check("views", True, (*stale, fix), fixable=True, warning=True)
    return Check("views", True, ("every view is as render wrote it",))


def _check_archive(home: Home) -> Check:
    from agent_memory.jobs.archive import check_archive

    problems = check_archive(home)
    if problems:
        # An interrupted run is finished from what the log fixes, like an open intent.
        fixable = all(p.kind == "interrupted" for p in problems)
        return Check("archive", False, tuple(str(p) for p in problems), fixable=fixable)
    return Check("archive", True, ("every archive file matches its logged digests",))


def _check_state(home: Home) -> Check:
    from agent_memory.write.plan import subject_key

    records, _ = _latest(home)
    active: dict[tuple[str, str], list[str]] = {}
    for record in records:
        key = subject_key(record)
        if key is not None and record.state is State.ACTIVE:
            active.setdefault(key, []).append(record.id)
    lines = tuple(
        f"namespace {ns!r} subject {subject!r}: {len(ids)} active state records ({', '.join(ids)})"
        for (ns, subject), ids in sorted(active.items())
        if len(ids) > 1
    )
    if lines:
        return Check("state", False, lines)
    return Check("state", True, ("at most one active state record per namespace and subject",))


def _check_salience(home: Home) -> Check:
    from agent_memory.recall.salience import touch_from_json  # the sidecar's own strict reader

    path: Path = home.state_dir / "salience.json"
    if (home.cache_dir / "salience.json").exists() and not path.exists():
        path = home.cache_dir / "salience.json"  # an older version's place: moved on the next open
    if not path.exists():
        return Check("salience", True, ("no sidecar yet",))
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        for entry in raw["scores"].values():
            touch_from_json(entry)
    except Exception as exc:  # any damage: bad JSON, shapes, timestamps (the sidecar resets the same way)
        return Check("salience", False, (f"{path}: unreadable ({exc})",), fixable=True)
    return Check("salience", True, (f"{len(raw['scores'])} touch record(s)",))
