"""The error tree of agent-memory: one root, shallow branches, structured fields.

Every error a caller may catch derives from :class:`AgentMemoryError` and carries the
file, record and field it concerns, so a message always says *where* the problem is::

    AgentMemoryError
    ├── RecordError            a record, MemoryFile or note file breaks the wire format
    │   ├── SignatureError     a signature is missing, malformed or does not verify
    │   └── ScreenError        a text fails the write screen (a secret, a conflict marker…)
    ├── LifecycleError         an illegal state move (seed 001 lifecycle table)
    ├── ProposalError          a proposal is malformed or names an unknown record
    ├── StoreError             a store cannot read or write a record
    │   └── RecordNotFound     no record with that id (also a ``KeyError``)
    ├── LogError               the operation log cannot be written, or its hash chain is broken
    └── ConfigError            a Home or its memory.toml is missing or invalid

The messages are built here, from the fields, in one format:
``<path>: <record_id>: <field>: <detail>`` with the parts that are unknown left out.
The CLI prints ``str(error)`` as its one-line message (DESIGN.md §8).
"""

from __future__ import annotations

__all__ = [
    "AgentMemoryError",
    "ConfigError",
    "LifecycleError",
    "LogError",
    "ProposalError",
    "RecordError",
    "RecordNotFound",
    "ScreenError",
    "SignatureError",
    "StoreError",
]


class AgentMemoryError(Exception):
    """Root of every error agent-memory raises on purpose.

    Args:
        detail: What is wrong, as a sentence fragment without the location.
        path: The file the problem was found in, if any.
        record_id: The record concerned (``mem:…``), if known.
        field: The wire field concerned, dotted for nested values (``provenance.kind``).
        hint: What the user can do about it; shown by the CLI on a second line.
    """

    def __init__(
        self,
        detail: str,
        *,
        path: str | None = None,
        record_id: str | None = None,
        field: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.detail = detail
        self.path = path
        self.record_id = record_id
        self.field = field
        self.hint = hint
        super().__init__(self._message())

    def _message(self) -> str:
        parts = [p for p in (self.path, self.record_id, self.field) if p]
        return ": ".join([*parts, self.detail])

    def __str__(self) -> str:
        return self._message()

    def located(self, *, path: str | None = None, record_id: str | None = None) -> AgentMemoryError:
        """Fill in the location parts that are still unknown and return the same error.

        Lets a low-level parser raise with the field it knows while the caller, who knows
        the file, adds the path before re-raising.
        """
        if path and not self.path:
            self.path = path
        if record_id and not self.record_id:
            self.record_id = record_id
        self.args = (self._message(),)
        return self


class RecordError(AgentMemoryError):
    """A record, MemoryFile or note file does not follow the wire format (seed 001 §records)."""


class SignatureError(RecordError):
    """A signature is missing where required, not canonical base64, or does not verify."""


class ScreenError(RecordError):
    """A text a door is about to store fails the write screen (:mod:`agent_memory.write.screen`).

    Args:
        detail: What is wrong and where in the text (a 1-based character or line).
        hazard: The hazard of the screen's table (``control``, ``secret``, ``conflict``,
            ``frontmatter``, ``size``, ``empty``).
        **location: ``path``, ``record_id``, ``field`` and ``hint``, as for every error.
    """

    def __init__(self, detail: str, *, hazard: str, **location: str | None) -> None:
        self.hazard = str(hazard)
        super().__init__(detail, **location)


class LifecycleError(AgentMemoryError):
    """A state change outside the seven legal moves, or a guard of a lifecycle helper failed."""


class ProposalError(AgentMemoryError):
    """A proposal is malformed or refers to a record the store does not hold."""


class StoreError(AgentMemoryError):
    """A store cannot read or write a record (corrupt file, refused id, lost lock)."""


class RecordNotFound(StoreError, KeyError):
    """The store holds no record with this id."""

    def __str__(self) -> str:
        # KeyError would wrap the message in quotes; keep the plain sentence.
        return self._message()


class LogError(AgentMemoryError):
    """The operation log cannot be appended to, or a line is edited, missing or out of order."""


class ConfigError(AgentMemoryError):
    """A Home is missing or malformed: no ``memory.toml``, a bad setting, an unknown format."""
