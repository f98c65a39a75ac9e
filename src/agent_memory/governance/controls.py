"""Withdrawal and reinstatement control records, and how their causal chains resolve.

Seed 000 §12.2 (``withdrawal-control-v1``; origin-notes §3 "WithdrawalRecord"): withdrawal is
an attributable control event that removes a bounded scope from ordinary use without
declaring it false or deleting it; reinstatement lifts one withdrawal. A control is::

    withdrawal_id: memwd-2026-11-29-001      # local day (the Home's time zone), NNN = max + 1
    record_type: withdrawal-control-v1
    action: withdraw | reinstate
    scope: {memory_item_ids, archive_refs, source_or_run_refs, namespaces}
    reason: failed-exploration               # explanatory metadata, not a truth verdict
    decided_by: ada
    decided_at: 2026-11-29T10:00:00.000Z
    effect: exclude-from-influence | restore-eligibility
    supersedes: memwd-2026-11-28-002 | null

Invariants kept here:

- a scope is normalised: each selector sorted and deduplicated, empty selectors absent, at
  least one selector; two scopes are the same exact scope only when equal after that
  (``namespaces`` is our extra selector, DESIGN.md §9);
- ``withdraw`` pairs with ``exclude-from-influence``, ``reinstate`` with
  ``restore-eligibility``; a reinstatement names the withdrawal it lifts and has its exact scope;
- the causal chain decides, never wall-clock time (:func:`resolve`): a control supersedes only
  an earlier control of the same exact scope; the heads of the chains are the controls no
  valid control supersedes, and every head that withdraws is in force, so unordered or
  conflicting controls keep their scope excluded (fail closed) until an attributable
  reconciliation;
- a control holds ids and refs, never record content (the log stores it as is).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any

from agent_memory.errors import LifecycleError, RecordError
from agent_memory.records.record import RECORD_ID_PATTERN
from agent_memory.records.wire import format_timestamp, parse_timestamp

__all__ = [
    "ACTIONS",
    "EFFECTS",
    "RECORD_TYPE",
    "SELECTORS",
    "WITHDRAWAL_ID_PATTERN",
    "ControlState",
    "WithdrawalControl",
    "WithdrawalScope",
    "covers",
    "next_withdrawal_id",
    "plan_reinstatement",
    "plan_withdrawal",
    "resolve",
]

RECORD_TYPE = "withdrawal-control-v1"
EFFECTS = {"withdraw": "exclude-from-influence", "reinstate": "restore-eligibility"}
ACTIONS = tuple(EFFECTS)
SELECTORS = ("memory_item_ids", "archive_refs", "source_or_run_refs", "namespaces")
WITHDRAWAL_ID_PATTERN = re.compile(r"\Amemwd-(\d{4}-\d{2}-\d{2})-(\d{3,})\Z")
_WIRE_KEYS = (
    "withdrawal_id", "record_type", "action", "scope", "reason", "decided_by", "decided_at", "effect",
    "supersedes",
)  # fmt: skip
_REF = re.compile(r"\A\S{1,1000}\Z")
_ACTOR = re.compile(r"\A\S{1,200}\Z")
REASON_CHARS = 2000


def covers(selector: str, ref: str) -> bool:
    """Return whether the anchor ``selector`` covers ``ref``: equal, or ``ref`` is an anchor inside it.

    ``archive/2026-11-29.md`` covers ``archive/2026-11-29.md#mem-2026-11-29-003`` (DESIGN.md §9);
    an anchored selector covers only that anchor (and anchors below it, ``#a`` covers ``#a#b``).
    """
    return ref == selector or ref.startswith(selector + "#")


@dataclass(frozen=True, slots=True)
class WithdrawalScope:
    """A bounded scope: the union of its selectors' identifiers (seed 000 §12.2, DESIGN.md §9).

    Attributes:
        memory_item_ids: Record ids (``mem:`` + 32 hex).
        archive_refs: Archive files or anchors (``archive/2026-11-29.md[#anchor]``).
        source_or_run_refs: Source or run anchors (``provenance.ref`` / ``sources`` values).
        namespaces: Record namespaces (``user:u1``, ``default``); ours, not seed 000's.

    Raises:
        RecordError: A selector that is not a list of identifiers, an identifier that is
            empty, holds whitespace or is malformed (``scope.<selector>[i]``), or no
            identifier at all.
    """

    memory_item_ids: tuple[str, ...] = ()
    archive_refs: tuple[str, ...] = ()
    source_or_run_refs: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in SELECTORS:
            object.__setattr__(self, name, _normalise(getattr(self, name), name))
        if not any(getattr(self, name) for name in SELECTORS):
            raise RecordError(
                "a withdrawal scope needs at least one record id, archive ref, source ref or namespace",
                field="scope",
            )

    def to_wire(self) -> dict[str, list[str]]:
        """Return the normalised wire object: non-empty selectors only, each sorted."""
        return {name: list(getattr(self, name)) for name in SELECTORS if getattr(self, name)}

    @classmethod
    def from_wire(cls, value: Any, *, field: str = "scope") -> WithdrawalScope:
        """Parse a scope object; selectors given as empty arrays count as absent.

        Raises:
            RecordError: Not an object, an unknown selector, or as for the class.
        """
        if not isinstance(value, Mapping):
            raise RecordError(f"must be an object of selectors, got {type(value).__name__}", field=field)
        unknown = sorted(set(value) - set(SELECTORS))
        if unknown:
            raise RecordError(
                f"unknown selector {unknown[0]!r} (one of: {', '.join(SELECTORS)})", field=field
            )
        try:
            return cls(**{name: value.get(name, ()) for name in SELECTORS})
        except RecordError as exc:
            exc.field = f"{field}{(exc.field or '')[len('scope') :]}"
            raise exc.located() from None

    def describe(self) -> str:
        """Return a one-line summary, e.g. ``records mem:… ; namespaces user:u1``."""
        words = {"memory_item_ids": "records", "archive_refs": "archive", "source_or_run_refs": "sources"}
        return "; ".join(
            f"{words.get(name, name)} {', '.join(getattr(self, name))}"
            for name in SELECTORS
            if getattr(self, name)
        )


def _normalise(values: Any, name: str) -> tuple[str, ...]:
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise RecordError(
            f"must be a list of identifiers, got {type(values).__name__}", field=f"scope.{name}"
        )
    found: set[str] = set()
    for i, value in enumerate(values):
        where = f"scope.{name}[{i}]"
        if not isinstance(value, str) or not _REF.match(value):
            raise RecordError(f"must be an identifier without whitespace, got {value!r}", field=where)
        value = unicodedata.normalize("NFC", value)
        if name == "memory_item_ids" and not RECORD_ID_PATTERN.match(value):
            raise RecordError(f"must be a record id (mem: + 32 hex), got {value!r}", field=where)
        if name == "archive_refs" and not value.startswith("archive/"):
            raise RecordError(
                f"must be an archive file or anchor (archive/YYYY-MM-DD.md[#anchor]), got {value!r}",
                field=where,
            )
        found.add(value)
    return tuple(sorted(found))


@dataclass(frozen=True, slots=True)
class WithdrawalControl:
    """One ``withdrawal-control-v1`` record (seed 000 §12.2).

    Attributes:
        withdrawal_id: ``memwd-YYYY-MM-DD-NNN``.
        action: ``withdraw`` or ``reinstate``.
        scope: The exact normalised scope.
        reason: Why, in words; explanatory metadata, never a truth verdict (≤ 2000 characters).
        decided_by: The actor who decided it (an actor name, no whitespace).
        decided_at: When it was decided (aware; canonical UTC milliseconds on the wire).
        supersedes: The control this one follows in its scope's chain; required for a
            reinstatement (the withdrawal it lifts).
        effect: ``exclude-from-influence`` for withdraw, ``restore-eligibility`` for
            reinstate; derived from ``action`` when left empty.
        record_type: Always ``withdrawal-control-v1``.

    Raises:
        RecordError: Any field malformed or inconsistent (the field is named).
    """

    withdrawal_id: str
    action: str
    scope: WithdrawalScope
    reason: str
    decided_by: str
    decided_at: datetime
    supersedes: str | None = None
    effect: str = ""
    record_type: str = field(default=RECORD_TYPE)

    def __post_init__(self) -> None:
        if not isinstance(self.withdrawal_id, str) or not WITHDRAWAL_ID_PATTERN.match(self.withdrawal_id):
            raise RecordError(
                f"must be memwd-YYYY-MM-DD-NNN, got {self.withdrawal_id!r}", field="withdrawal_id"
            )
        if self.record_type != RECORD_TYPE:
            raise RecordError(f"must be {RECORD_TYPE}, got {self.record_type!r}", field="record_type")
        if self.action not in EFFECTS:
            raise RecordError(f"must be withdraw or reinstate, got {self.action!r}", field="action")
        if not isinstance(self.scope, WithdrawalScope):
            raise RecordError("must be a WithdrawalScope", field="scope")
        expected = EFFECTS[self.action]
        if self.effect == "":
            object.__setattr__(self, "effect", expected)
        elif self.effect != expected:
            raise RecordError(
                f"action {self.action} requires effect {expected}, got {self.effect!r}", field="effect"
            )
        if not isinstance(self.reason, str) or not self.reason.strip() or len(self.reason) > REASON_CHARS:
            raise RecordError(
                f"must be a non-empty text of at most {REASON_CHARS} characters", field="reason"
            )
        if not isinstance(self.decided_by, str) or not _ACTOR.match(self.decided_by):
            raise RecordError(
                f"must be an actor name without whitespace, got {self.decided_by!r}", field="decided_by"
            )
        object.__setattr__(self, "decided_at", parse_timestamp(self.decided_at, "decided_at", strict=True))
        if self.supersedes is not None and (
            not isinstance(self.supersedes, str) or not WITHDRAWAL_ID_PATTERN.match(self.supersedes)
        ):
            raise RecordError(f"must be a withdrawal id or null, got {self.supersedes!r}", field="supersedes")
        if self.action == "reinstate" and self.supersedes is None:
            raise RecordError("a reinstatement must name the withdrawal it lifts", field="supersedes")
        if self.supersedes == self.withdrawal_id:
            raise RecordError("a control cannot supersede itself", field="supersedes")

    @property
    def day(self) -> str:
        """The ``YYYY-MM-DD`` of the id."""
        return _id_parts(self.withdrawal_id)[0]

    @property
    def withdraws(self) -> bool:
        """Whether this control excludes its scope (``action: withdraw``)."""
        return self.action == "withdraw"

    def to_wire(self) -> dict[str, Any]:
        """Return the wire object in seed 000's field order (``supersedes`` null when absent)."""
        return {
            "withdrawal_id": self.withdrawal_id,
            "record_type": self.record_type,
            "action": self.action,
            "scope": self.scope.to_wire(),
            "reason": self.reason,
            "decided_by": self.decided_by,
            "decided_at": format_timestamp(self.decided_at),
            "effect": self.effect,
            "supersedes": self.supersedes,
        }

    @classmethod
    def from_wire(cls, value: Any, *, field: str = "") -> WithdrawalControl:
        """Parse a control wire object strictly: exactly the nine keys, each valid.

        Args:
            value: The JSON object.
            field: Prefix for error fields (``withdrawal_controls[2]``).

        Raises:
            RecordError: Not an object, a missing or unknown key, or a bad value (field named).
        """
        prefix = f"{field}." if field else ""
        try:
            if not isinstance(value, Mapping):
                raise RecordError(f"must be a control object, got {type(value).__name__}")
            missing = [k for k in _WIRE_KEYS if k not in value]
            unknown = sorted(set(value) - set(_WIRE_KEYS))
            if missing or unknown:
                raise RecordError(f"not a {RECORD_TYPE} record: missing {missing}, unknown {unknown}")
            for key in ("effect", "record_type"):
                if not isinstance(value[key], str) or not value[key]:
                    raise RecordError(f"must be a non-empty string, got {value[key]!r}", field=key)
            return cls(
                withdrawal_id=value["withdrawal_id"],
                action=value["action"],
                scope=WithdrawalScope.from_wire(value["scope"]),
                reason=value["reason"],
                decided_by=value["decided_by"],
                decided_at=parse_timestamp(value["decided_at"], "decided_at", strict=True),
                supersedes=value["supersedes"],
                effect=value["effect"],
                record_type=value["record_type"],
            )
        except RecordError as exc:
            exc.field = prefix + exc.field if exc.field else (field or None)
            raise exc.located() from None


def _id_parts(withdrawal_id: str) -> tuple[str, int]:
    match = WITHDRAWAL_ID_PATTERN.match(withdrawal_id)
    if match is None:
        raise RecordError(f"must be memwd-YYYY-MM-DD-NNN, got {withdrawal_id!r}", field="withdrawal_id")
    return match.group(1), int(match.group(2))


def next_withdrawal_id(taken: Iterable[str], day: str) -> str:
    """Return ``memwd-<day>-NNN`` with NNN one more than the highest taken for that day (001 first)."""
    highest = max((n for d, n in (_id_parts(i) for i in taken) if d == day), default=0)
    return f"memwd-{day}-{highest + 1:03d}"


@dataclass(frozen=True, slots=True)
class ControlState:
    """The controls of a log in causal (log) order, with the valid supersession links between them.

    Built by :func:`resolve`. A link ``i -> j`` exists when control ``j`` names control ``i``
    in ``supersedes``, ``i`` comes first, both have the same exact scope, and a reinstatement
    names a withdrawal; any other ``supersedes`` is inert (it lifts nothing).
    """

    controls: tuple[WithdrawalControl, ...] = ()
    successors: Mapping[int, tuple[int, ...]] = field(default_factory=dict)

    def heads(self) -> list[WithdrawalControl]:
        """Return the controls no valid control supersedes (the latest effect of each chain), in log order."""
        return [c for i, c in enumerate(self.controls) if i not in self.successors]

    def in_force(self) -> list[WithdrawalControl]:
        """Return the withdrawals whose scopes are excluded now (every head that withdraws)."""
        return [c for c in self.heads() if c.withdraws]

    def find(self, withdrawal_id: str) -> list[WithdrawalControl]:
        """Return the controls with this id (one, unless a damaged or merged log repeats it)."""
        return [c for c in self.controls if c.withdrawal_id == withdrawal_id]

    def superseded_by(self, control: WithdrawalControl) -> list[WithdrawalControl]:
        """Return the controls that validly supersede ``control``, in log order."""
        return [
            self.controls[j]
            for i, c in enumerate(self.controls)
            if c is control
            for j in self.successors.get(i, ())
        ]

    def heads_of(self, scope: WithdrawalScope) -> list[WithdrawalControl]:
        """Return the heads whose scope is exactly ``scope``, in log order."""
        return [c for c in self.heads() if c.scope == scope]


def resolve(controls: Sequence[WithdrawalControl]) -> ControlState:
    """Link each control to the earlier ones it validly supersedes (see :class:`ControlState`)."""
    successors: dict[int, list[int]] = {}
    positions: dict[str, list[int]] = {}
    for j, control in enumerate(controls):
        for i in positions.get(control.supersedes or "", []):
            earlier = controls[i]
            if earlier.scope != control.scope:
                continue
            if control.action == "reinstate" and not earlier.withdraws:
                continue
            successors.setdefault(i, []).append(j)
        positions.setdefault(control.withdrawal_id, []).append(j)
    return ControlState(tuple(controls), {i: tuple(js) for i, js in successors.items()})


def _day(now: datetime, zone: tzinfo) -> str:
    return now.astimezone(zone).date().isoformat()


def plan_withdrawal(
    state: ControlState, scope: WithdrawalScope, *, reason: str, actor: str, now: datetime, zone: tzinfo
) -> WithdrawalControl:
    """Return the withdrawal control for ``scope``, chained after the scope's latest reinstatement.

    Raises:
        LifecycleError: The exact scope is already withdrawn (naming the control in force).
        RecordError: A bad reason or actor.
    """
    heads = state.heads_of(scope)
    active = [c.withdrawal_id for c in heads if c.withdraws]
    if active:
        raise LifecycleError(
            f"this exact scope is already withdrawn by {', '.join(active)}",
            field="scope",
            hint="list controls with: agent-memory controls",
        )
    taken = [c.withdrawal_id for c in state.controls]
    return WithdrawalControl(
        withdrawal_id=next_withdrawal_id(taken, _day(now, zone)),
        action="withdraw",
        scope=scope,
        reason=reason,
        decided_by=actor,
        decided_at=now,
        supersedes=heads[-1].withdrawal_id if heads else None,
    )


def plan_reinstatement(
    state: ControlState,
    withdrawal_id: str,
    *,
    reason: str,
    actor: str,
    now: datetime,
    zone: tzinfo,
    scope: WithdrawalScope | None = None,
) -> WithdrawalControl:
    """Return the reinstatement that lifts ``withdrawal_id`` (same exact scope, ``supersedes`` it).

    Args:
        state: The resolved controls.
        withdrawal_id: The withdrawal to lift; it must be the head of its chain.
        reason: Why.
        actor: Who decides.
        now: The clock (aware).
        zone: The Home's time zone (the id's local day).
        scope: The scope the caller means to lift; when given it must equal the withdrawal's
            exact scope.

    Raises:
        LifecycleError: Unknown id, a reinstatement named instead of a withdrawal, a repeated
            id, a withdrawal already lifted or superseded, or a different scope; nothing written.
    """
    found = state.find(withdrawal_id)
    if not found:
        raise LifecycleError(f"no withdrawal {withdrawal_id} in the log", field="supersedes")
    if len(found) > 1:
        raise LifecycleError(
            f"{withdrawal_id} appears {len(found)} times in the log: reconcile by withdrawing its scope anew",
            field="supersedes",
        )
    target = found[0]
    if not target.withdraws:
        raise LifecycleError(
            f"{withdrawal_id} is a reinstatement; name the withdrawal it lifted", field="supersedes"
        )
    if scope is not None and scope != target.scope:
        raise LifecycleError(
            f"refused: a reinstatement must have the exact scope of {withdrawal_id} "
            f"({target.scope.describe()}), not {scope.describe()}",
            field="scope",
        )
    later = state.superseded_by(target)
    if later:
        names = ", ".join(c.withdrawal_id for c in later)
        raise LifecycleError(
            f"{withdrawal_id} is no longer in force: superseded by {names}",
            field="supersedes",
        )
    return WithdrawalControl(
        withdrawal_id=next_withdrawal_id([c.withdrawal_id for c in state.controls], _day(now, zone)),
        action="reinstate",
        scope=target.scope,
        reason=reason,
        decided_by=actor,
        decided_at=now,
        supersedes=withdrawal_id,
    )
