"""The one gate every reader applies before a record is exposed (seed 000 §12.2, §15.2 rule 1).

Seed 000 §15.2 rule 1: "resolve the latest applicable withdrawal/reinstatement chain before
exposing item text". :class:`Gate` reads the ``withdraw`` and ``reinstate`` events of the
operation log (each holds one ``withdrawal-control-v1`` record, :mod:`.controls`), resolves
their causal chains, and answers for any record whether it may be exposed, and why not.

Scope semantics (DESIGN.md §9 "Withdrawal scopes"). A record is withdrawn when a withdrawal
in force

- names its id (``memory_item_ids``) or its namespace (``namespaces``);
- has an archive or source ref covering one of its anchors (``provenance.ref``, ``sources``,
  ``evidence``): ``archive/X.md`` covers ``archive/X.md`` and every ``archive/X.md#…``;
- or withdraws a record it derives from: one its ``evidence`` names, or its
  ``provenance.ref`` / ``sources`` point at (``mem:…`` or ``mem:…#…``), transitively.

Withdrawn content is not false: the gate changes no state, confidence or review mark; it
only hides. Callers: :meth:`agent_memory.memory.Memory.recall` (through :meth:`Gate.guard`),
:func:`agent_memory.transfer.exchange.export_memory_file` and ``import_memory_file``, the review queue
(:mod:`.queue`). Generated views, distillation and consolidation do not exist yet; they must
call :meth:`Gate.view` (or :meth:`Gate.is_exposed`) before reading a record.

Fail closed: a control event the gate cannot parse is a :class:`~agent_memory.errors.LogError`
(nothing is exposed through a gate that cannot read its controls), and an ancestor that
cannot be read while withdrawals are in force keeps its descendants hidden. So is a log the
gate cannot trust to be whole (issue 19): every entry it reads must link to the one before
(``prev``), and, given the Home's :class:`~agent_memory.log.anchor.HeadWitness`, the log must
still hold every checkpoint signed beside the key; a cut tail, a restored older log or a
rewritten line would otherwise bring back what its lost entries withdrew, erased or
superseded. A broken chain refuses every reading of the controls; a log that is whole but
cut below its checkpoint refuses only exposure (:meth:`Gate.view` and what uses it): its
controls are still read (:meth:`Gate.state`), so the owner can withdraw again what was lost.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from agent_memory.errors import LogError, RecordError, RecordNotFound, StoreError
from agent_memory.governance.controls import ControlState, WithdrawalControl, resolve
from agent_memory.log.anchor import HeadWitness
from agent_memory.log.base import LogEntry, OperationLog
from agent_memory.log.fold import LogFold
from agent_memory.log.jsonl import JsonlLog
from agent_memory.records.record import RECORD_ID_PATTERN, MemoryRecord
from agent_memory.stores.base import RecordStore

__all__ = ["CONTROL_ACTIONS", "Exposure", "Gate", "GateView", "log_controls", "parents_of"]

CONTROL_ACTIONS = ("withdraw", "reinstate")
VersionLookup = Callable[[str], MemoryRecord | None]


@dataclass(frozen=True, slots=True)
class Exposure:
    """The gate's answer for one record.

    Attributes:
        exposed: Whether the record may be shown, exported or used.
        reason: Why not (``withdrawn by memwd-… (namespace user:u1)``, ``derives from mem:…,
            withdrawn by memwd-…``), or ``""`` when exposed.
        controls: The withdrawals in force that exclude it, by id.
    """

    exposed: bool
    reason: str = ""
    controls: tuple[str, ...] = ()


_EXPOSED = Exposure(True)


def parents_of(record: MemoryRecord) -> list[str]:
    """Return the record ids ``record`` derives from: its ``evidence`` and ``mem:`` refs, in order."""
    found: dict[str, None] = {}
    for ref in (*record.evidence, record.provenance.ref, *(record.sources or ())):
        if ref is None:
            continue
        base = ref.split("#", 1)[0]
        if RECORD_ID_PATTERN.match(base) and base != record.id:
            found[base] = None
    return list(found)


def _anchors(record: MemoryRecord) -> list[str]:
    refs = (record.provenance.ref, *(record.sources or ()), *record.evidence)
    return [ref for ref in refs if ref]


def _prefixes(anchor: str) -> list[str]:
    """``a#b#c`` -> ``a``, ``a#b``, ``a#b#c``: every selector that could cover it."""
    parts = anchor.split("#")
    return ["#".join(parts[: n + 1]) for n in range(len(parts))]


class GateView:
    """The gate's decisions for one set of controls in force (a snapshot; cheap to query in a loop).

    Args:
        in_force: The withdrawals in force (:meth:`ControlState.in_force`).
        get: Reads a record's latest version by id (to follow derivation to ancestors).
    """

    def __init__(self, in_force: list[WithdrawalControl], get: Callable[[str], MemoryRecord]) -> None:
        self.in_force = tuple(in_force)
        self._get = get
        self._ids: dict[str, list[str]] = {}
        self._namespaces: dict[str, list[str]] = {}
        self._refs: dict[str, list[tuple[str, str]]] = {}
        for control in self.in_force:
            scope, cid = control.scope, control.withdrawal_id
            for record_id in scope.memory_item_ids:
                self._ids.setdefault(record_id, []).append(cid)
            for namespace in scope.namespaces:
                self._namespaces.setdefault(namespace, []).append(cid)
            for ref in scope.archive_refs:
                self._refs.setdefault(ref, []).append((cid, f"archive ref {ref}"))
            for ref in scope.source_or_run_refs:
                self._refs.setdefault(ref, []).append((cid, f"source {ref}"))
        self._memo: dict[tuple[str, tuple[str, ...]], Exposure] = {}
        self._lock = threading.Lock()

    def is_exposed(self, record: MemoryRecord) -> bool:
        """Return whether ``record`` may be exposed (see :meth:`check`)."""
        return self.check(record).exposed

    def check(self, record: MemoryRecord) -> Exposure:
        """Decide for ``record`` as given.

        Id, namespace, ``provenance.ref`` and ``sources`` never change after birth, but a later
        version may add ``evidence``: pass the latest version (as :meth:`Gate.guard` does for
        an older one) so that derivation added since is seen.
        """
        if not self.in_force:
            return _EXPOSED
        with self._lock:
            return self._check(record, set())

    def _check(self, record: MemoryRecord, visiting: set[str]) -> Exposure:
        key = (record.id, record.evidence)
        known = self._memo.get(key)
        if known is not None:
            return known
        visiting.add(record.id)
        verdict = self._direct(record) or self._derived(record, visiting)
        visiting.discard(record.id)
        self._memo[key] = verdict
        return verdict

    def _direct(self, record: MemoryRecord) -> Exposure | None:
        hits: dict[str, str] = {}
        for cid in self._ids.get(record.id, ()):
            hits.setdefault(cid, "record id")
        for cid in self._namespaces.get(record.effective_namespace, ()):
            hits.setdefault(cid, f"namespace {record.effective_namespace}")
        for anchor in _anchors(record):
            for prefix in _prefixes(anchor):
                for cid, why in self._refs.get(prefix, ()):
                    hits.setdefault(cid, why)
        if not hits:
            return None
        ids = tuple(sorted(hits))
        return Exposure(False, f"withdrawn by {ids[0]} ({hits[ids[0]]})", ids)

    def _derived(self, record: MemoryRecord, visiting: set[str]) -> Exposure:
        for parent_id in parents_of(record):
            if parent_id in visiting:
                continue  # a cycle (impossible with content ids, but never loop)
            parent = self._parent(parent_id, visiting)
            if not parent.exposed:
                first = parent.controls[0] if parent.controls else "an unreadable ancestor"
                return Exposure(False, f"derives from {parent_id}, withdrawn by {first}", parent.controls)
        return _EXPOSED

    def _parent(self, parent_id: str, visiting: set[str]) -> Exposure:
        if parent_id in self._ids:
            cids = tuple(sorted(self._ids[parent_id]))
            return Exposure(False, f"withdrawn by {cids[0]} (record id)", cids)
        try:
            parent = self._get(parent_id)
        except RecordNotFound:
            return _EXPOSED  # nothing held under that id: nothing to withdraw
        except StoreError as exc:
            # Fail closed: while withdrawals are in force, an ancestor we cannot read
            # might be one of them.
            return Exposure(False, f"cannot read ancestor {parent_id} to decide: {exc.detail}")
        return self._check(parent, visiting)


class Gate:
    """Reads the withdrawal controls of a log, incrementally, and decides what may be exposed.

    Args:
        log: The operation log holding ``withdraw`` / ``reinstate`` events.
        store: Where ancestors are read from when following derivation.
        witness: The Home's checkpoint file (:meth:`~agent_memory.home.Home.witness`): while
            the log no longer holds a checkpoint it signed, :meth:`view` refuses. ``None``
            (no key here, or a log that is not a Home's) checks the chain only.
    """

    def __init__(self, log: OperationLog, store: RecordStore, *, witness: HeadWitness | None = None) -> None:
        self._log = log
        self._store = store
        self._witness = witness
        self._lock = threading.Lock()
        self._entries: list[tuple[LogEntry, WithdrawalControl]] = []
        self._state = ControlState()
        self._resolved = True  # whether _state resolves _entries
        self._view: GateView | None = None
        self._standing: tuple[object, str | None] | None = None
        # Every entry is checked to link to the one before (the gate fails closed).
        self._fold = LogFold(log, self._step, restart=self._forget, verify=True)

    def entries(self) -> list[tuple[LogEntry, WithdrawalControl]]:
        """Return every control with the log event that holds it, in log (causal) order.

        Raises:
            LogError: A control event whose details are not a valid control (naming its seq).
        """
        self._catch_up()
        return list(self._entries)

    def state(self) -> ControlState:
        """Return the resolved controls (chains, heads, withdrawals in force) as of the log's head.

        Raises:
            LogError: As for :meth:`entries`.
        """
        self._catch_up()
        return self._state

    def controls(self) -> list[WithdrawalControl]:
        """Return every control in log order (withdrawals and reinstatements, lifted or not)."""
        return list(self.state().controls)

    def view(self) -> GateView:
        """Return the decisions for the controls in force now (reuse it across one read).

        Raises:
            LogError: As for :meth:`entries`; or the log no longer holds a checkpoint its
                witness signed (cut, restored from an older copy, rewritten): nothing is
                exposed until it is restored (the message names the checkpoint).
        """
        head = self._catch_up()
        with self._lock:
            self._refuse_if_cut(head)
            if self._view is None:
                self._view = GateView(self._state.in_force(), self._store.get)
            return self._view

    def check(self, record: MemoryRecord) -> Exposure:
        """Decide for one record against the log's current controls (see :class:`GateView`)."""
        return self.view().check(record)

    def is_exposed(self, record: MemoryRecord) -> bool:
        """Return whether ``record`` may be exposed now."""
        return self.view().is_exposed(record)

    def guard(self, lookup: VersionLookup) -> VersionLookup:
        """Wrap a version lookup so that a withdrawn record reads as absent (``None``).

        The controls are read once, when the guard is made: use one guard per read
        (a recall), so every record of it is judged against the same controls. While a
        withdrawal is in force, an older version (``as_of``) is judged with the latest
        version's ``evidence`` too: current withdrawals always apply (DESIGN.md §9 "Time").
        """
        view = self.view()

        def exposed_version(record_id: str) -> MemoryRecord | None:
            record = lookup(record_id)
            if record is None or not view.in_force:
                return record
            if not view.is_exposed(record):
                return None
            try:
                latest = self._store.get(record_id)
            except StoreError:
                return record  # the version given was readable and is exposed
            return record if latest.evidence == record.evidence or view.is_exposed(latest) else None

        return exposed_version

    def _catch_up(self) -> LogEntry | None:
        with self._lock:
            head, moved = self._fold.catch_up()
            if not self._resolved:
                self._state, self._resolved = resolve([control for _, control in self._entries]), True
            if moved:
                # A new record may be a missing ancestor of an older one: judge afresh.
                self._view = None
            return head

    def _step(self, entry: LogEntry) -> None:
        """Fold one log entry: keep it when it holds a control.

        Raises:
            LogError: A control event whose details are not a valid control (naming its seq).
        """
        if entry.action in CONTROL_ACTIONS:
            self._entries.append((entry, _control_of(entry)))
            self._resolved = False

    def _forget(self) -> None:
        self._entries, self._state, self._resolved, self._view = [], ControlState(), True, None

    def _refuse_if_cut(self, head: LogEntry | None) -> None:
        """Raise while the log no longer holds a checkpoint the witness signed (cached per file and head)."""
        witness, log = self._witness, self._log
        if witness is None or not isinstance(log, JsonlLog):
            return
        key = (witness.stamp(), head.seq if head else 0, head.digest if head else "")
        if self._standing is None or self._standing[0] != key:
            self._standing = (key, witness.cut(log, head))
        why = self._standing[1]
        if why is not None:
            raise LogError(
                f"{why}; withdrawals, erasures and supersedes in the missing entries would not be applied, "
                "so no record is exposed",
                path=str(witness.path),
                hint="restore log/ (git checkout -- log/, or from a backup); agent-memory doctor names "
                "what is missing. If it is lost for good, withdraw or erase again what it held, then "
                "remove the checkpoint file named here to accept the log as it stands",
            )


def log_controls(log: OperationLog) -> list[tuple[LogEntry, WithdrawalControl]]:
    """Return every withdrawal control of ``log`` with the event that holds it, in log order.

    Raises:
        LogError: The log cannot be read, or a control event is malformed (naming its seq).
    """
    return [(entry, _control_of(entry)) for entry in log.entries() if entry.action in CONTROL_ACTIONS]


def _control_of(entry: LogEntry) -> WithdrawalControl:
    try:
        control = WithdrawalControl.from_wire(entry.details.get("control"), field="details.control")
    except RecordError as exc:
        raise LogError(
            f"log entry {entry.seq} ({entry.action}) does not hold a valid withdrawal control: {exc}",
            hint="the gate fails closed: nothing is exposed until the log is repaired",
        ) from None
    if control.action != entry.action:
        raise LogError(
            f"log entry {entry.seq} is a {entry.action} event holding a {control.action} control",
            hint="the gate fails closed: nothing is exposed until the log is repaired",
        )
    return control
