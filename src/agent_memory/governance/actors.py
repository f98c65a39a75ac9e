"""Actors and their grants: who may approve, erase, promote and withdraw (DESIGN.md §9 "Actors").

``memory.toml`` names the person the command line acts as and what every other actor may
decide::

    [actors]
    owner = "ada"

    [actors.grants]
    "agent:claude" = ["approve"]
    "bob" = ["approve", "withdraw"]

Invariants:

- the owner holds every grant; every other actor holds exactly the grants listed for it, so
  an MCP session (``agent:<name>``) has none unless the table names it;
- a grant is one of :data:`GRANTS`; an unknown grant word, a malformed actor name or an
  unknown key in the table is a :class:`~agent_memory.errors.ConfigError` naming the file and
  key (a typo never widens or narrows authority silently);
- a refused decision raises :class:`AuthorityError` before anything is written;
- review marks change what is exposed (an approval lets a quarantined record into
  ``MEMORY.md``; a ``stale`` mark or a rejection takes one out), so each needs a grant
  (:data:`REVIEW_GRANTS`) and is refused to a tainted session whoever acts
  (:func:`require_review`).

This module imports only :mod:`agent_memory.errors`, so :mod:`agent_memory.settings` can use it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_memory.errors import AgentMemoryError, ConfigError

__all__ = [
    "GRANTS",
    "REVIEW_GRANTS",
    "Actors",
    "AuthorityError",
    "TaintedDecisionError",
    "check_actor_name",
    "require_review",
]

GRANTS: tuple[str, ...] = ("approve", "erase", "mark", "promote", "withdraw")
"""The decisions an actor may be granted.

- ``approve``: approve or reject a quarantined record (a review event, DESIGN.md §9); it
  covers ``mark`` too;
- ``mark``: mark a record ``stale`` or clear that mark (a review event: seed 000's
  human-only Status, down-weighted in recall and kept out of ``MEMORY.md``);
- ``erase``: authorise an erasure (seed 000 §12.3);
- ``promote``: apply a promotion proposal to ``conventions.md`` (seed 000 §17);
- ``withdraw``: withdraw a scope or reinstate it (seed 000 §12.2: ``decided_by`` must be an
  actor authorised for the scope).
"""

REVIEW_GRANTS: Mapping[str, tuple[str, ...]] = {
    "approve": ("approve",),
    "reject": ("approve",),
    "stale": ("mark", "approve"),
    "clear": ("mark", "approve"),
}
"""The grants that allow each review verdict (any one of them suffices)."""

# The log's actor shape (agent_memory.log.base), without control characters (TOML keys).
_ACTOR_NAME = re.compile(r"\A[^\s\x00-\x1f\x7f]{1,200}\Z")


class AuthorityError(AgentMemoryError):
    """An actor attempted a decision it holds no grant for (DESIGN.md §9 "Actors").

    Attributes:
        actor: Who attempted it.
        grant: The grant it needed (one of :data:`GRANTS`).
    """

    def __init__(self, actor: str, grant: str, *, record_id: str | None = None, action: str = "") -> None:
        self.actor = actor
        self.grant = grant
        what = action or grant
        super().__init__(
            f"{actor} may not {what}: it holds no {grant!r} grant",
            record_id=record_id,
            field="actor",
            hint=f'the owner decides, or grants it in memory.toml: [actors.grants] "{actor}" = ["{grant}"]',
        )


class TaintedDecisionError(AuthorityError):
    """A tainted session attempted a decision that changes what is exposed (seed 003 trust).

    A session that read outside content (``taint``) may be steered by it, so its review marks
    are refused whatever its grants: a person decides from an untainted session.

    Attributes:
        actor: Who attempted it.
        grant: The grant the decision needs.
        taint: The session's taint labels.
    """

    def __init__(
        self,
        actor: str,
        grant: str,
        taint: tuple[str, ...],
        *,
        record_id: str | None = None,
        action: str = "",
    ) -> None:
        self.actor = actor
        self.grant = grant
        self.taint = taint
        AgentMemoryError.__init__(
            self,
            f"{actor} may not {action or grant} from a tainted session ({', '.join(taint)}): "
            "it changes what is exposed, and outside content may be steering this session",
            record_id=record_id,
            field="taint",
            hint="decide it from a session that has read no outside content (no --taint)",
        )


def require_review(
    actors: Actors, actor: str, verdict: str, *, record_id: str | None = None, taint: tuple[str, ...] = ()
) -> None:
    """Return if ``actor`` may log the review ``verdict``; raise otherwise (DESIGN.md §9).

    Args:
        actors: Who holds which grants.
        actor: Who attempts the review.
        verdict: ``approve``, ``reject``, ``stale`` or ``clear`` (others are not review marks
            and are left to the caller's own check).
        record_id: The record concerned, named in the error.
        taint: The session's taint labels; any label refuses the mark.

    Raises:
        TaintedDecisionError: The session is tainted.
        AuthorityError: ``actor`` holds none of the verdict's :data:`REVIEW_GRANTS`.
    """
    grants = REVIEW_GRANTS.get(verdict)
    if grants is None:
        return
    action = f"{verdict} {record_id}" if verdict in ("approve", "reject") else f"mark {record_id} {verdict}"
    if taint:
        raise TaintedDecisionError(actor, grants[0], tuple(taint), record_id=record_id, action=action)
    if not any(actors.may(actor, grant) for grant in grants):
        raise AuthorityError(actor, grants[0], record_id=record_id, action=action)


def check_actor_name(name: object, *, field: str = "actor", path: str | None = None) -> str:
    """Return ``name`` if it is a valid actor name (1-200 characters, no whitespace).

    Raises:
        ConfigError: Not text, empty, too long, or holding whitespace (``field`` and ``path`` named).
    """
    if not isinstance(name, str) or not _ACTOR_NAME.match(name):
        raise ConfigError(
            f"must be an actor name without whitespace (ada, agent:claude), got {name!r}",
            path=path,
            field=field,
        )
    return name


@dataclass(frozen=True, slots=True)
class Actors:
    """The ``[actors]`` table: the owner (all grants) and every other actor's grants.

    Attributes:
        owner: The person the command line acts as; holds every grant.
        grants: ``{actor name: grants}``; grants sorted, each one of :data:`GRANTS`.

    Raises:
        ConfigError: A malformed actor name or an unknown grant (field named).
    """

    owner: str = "owner"
    grants: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_actor_name(self.owner, field="actors.owner")
        normalised: dict[str, tuple[str, ...]] = {}
        for actor in sorted(self.grants):
            check_actor_name(actor, field="actors.grants")
            normalised[actor] = _check_grants(self.grants[actor], f"actors.grants.{actor}", None)
        object.__setattr__(self, "grants", normalised)

    def __hash__(self) -> int:
        return hash((self.owner, tuple(self.grants.items())))

    def grants_of(self, actor: str) -> tuple[str, ...]:
        """Return the grants ``actor`` holds (all of :data:`GRANTS` for the owner), sorted."""
        if actor == self.owner:
            return tuple(sorted(GRANTS))
        return self.grants.get(actor, ())

    def may(self, actor: str, grant: str) -> bool:
        """Return whether ``actor`` holds ``grant``.

        Raises:
            ValueError: ``grant`` is not one of :data:`GRANTS` (a programming error).
        """
        if grant not in GRANTS:
            raise ValueError(f"unknown grant {grant!r}")
        return grant in self.grants_of(actor)

    def require(self, actor: str, grant: str, *, record_id: str | None = None, action: str = "") -> None:
        """Return if ``actor`` holds ``grant``; raise otherwise.

        Args:
            actor: Who attempts the decision.
            grant: The grant it needs.
            record_id: The record concerned, named in the error.
            action: The decision in words (``approve mem:…``), for the message.

        Raises:
            AuthorityError: ``actor`` does not hold ``grant``.
        """
        if not self.may(actor, grant):
            raise AuthorityError(actor, grant, record_id=record_id, action=action)

    @classmethod
    def from_toml(cls, table: Any, path: str | None = None) -> Actors:
        """Read the ``[actors]`` table of ``memory.toml`` (``{}`` when absent).

        Raises:
            ConfigError: Not a table, an unknown key (only ``owner`` and ``grants``), an owner
                that is not a name, ``grants`` not a table of lists of :data:`GRANTS`
                (``path`` and the dotted key named).
        """
        if not isinstance(table, Mapping):
            raise ConfigError("must be a table", path=path, field="actors")
        unknown = sorted(set(table) - {"owner", "grants"})
        if unknown:
            raise ConfigError(f"unknown settings {unknown}", path=path, field=f"actors.{unknown[0]}")
        owner = check_actor_name(table.get("owner", "owner"), field="actors.owner", path=path)
        raw = table.get("grants", {})
        if not isinstance(raw, Mapping):
            raise ConfigError("must be a table of actor = [grants]", path=path, field="actors.grants")
        grants: dict[str, tuple[str, ...]] = {}
        for actor, words in raw.items():
            check_actor_name(actor, field="actors.grants", path=path)
            grants[actor] = _check_grants(words, f"actors.grants.{actor}", path)
        return cls(owner=owner, grants=grants)

    def to_toml(self) -> str:
        """Render the commented ``[actors]`` section (and ``[actors.grants]``) of the template."""
        lines = [
            "[actors]",
            "# The person the command line acts as; the owner holds every grant.",
            f'owner = "{_escape(self.owner)}"',
            "",
            "[actors.grants]",
            "# What other actors may decide: approve (quarantined records; stale marks too),",
            "# mark (stale marks only), erase, promote, withdraw (withdraw and reinstate).",
            "# MCP sessions act as agent:<name> with no grant",
            '# unless listed here, e.g. "agent:claude" = ["approve"]',
        ]
        for actor, words in self.grants.items():
            listed = ", ".join(f'"{w}"' for w in words)
            lines.append(f'"{_escape(actor)}" = [{listed}]')
        return "\n".join(lines) + "\n"


def _check_grants(words: Any, field: str, path: str | None) -> tuple[str, ...]:
    if isinstance(words, str) or not isinstance(words, list | tuple):
        raise ConfigError(f"must be a list of grants ({', '.join(GRANTS)})", path=path, field=field)
    unknown = [w for w in words if w not in GRANTS]
    if unknown:
        raise ConfigError(
            f"unknown grant {unknown[0]!r} (one of: {', '.join(GRANTS)})", path=path, field=field
        )
    return tuple(sorted(set(words)))


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
