"""Ports of the search layer: `SearchIndex` and `Embedder`, and the values that cross them.

Indexes are disposable caches derived from the notes (seed 003): each carries its
:class:`Recipe` (how it was built) and its :class:`IndexInputs` (what it was built from), so
a Home can tell a stale index from a fresh one and rebuild it. An index holds the latest
version of each record it was given, keyed by record id; recall decides which states to show.

Scores are "higher is better" and only comparable within one index; fusion normalises them.
This module imports no adapter.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

from agent_memory.records.record import MemoryRecord

__all__ = [
    "EMBED_BATCH",
    "Embedder",
    "Hit",
    "IndexInputs",
    "Recipe",
    "SearchIndex",
    "document_text",
    "embedder_cold",
    "inputs_digest",
    "version_digest",
]

if TYPE_CHECKING:
    # Under TYPE_CHECKING only: numpy is paid for by vector work alone (a `remember` in a CLI
    # process never imports it; issue 24 item 3), so importers name it under TYPE_CHECKING too.
    import numpy as np
    import numpy.typing as npt

    Vectors: TypeAlias = npt.NDArray[np.float32]
    """float32 × (rows, dimensions): what an :class:`Embedder` returns."""


EMBED_BATCH = 256
"""Texts a vector index hands its embedder per call: as many as one catch-up chunk reads.

An embedder that batches inside (MiniLM: sorted by length, at most 32 texts and 256 padded
tokens a run, several runs side by side) does better with more at once: 419 LoCoMo turns
embedded 1.6× faster in calls of 256 than of 64 (issue 21 item 5, docs/benchmarks.md
"Importers")."""


@dataclass(frozen=True, slots=True, order=True)
class Hit:
    """One ranked result: the record id and its score in this index (higher is better)."""

    record_id: str
    score: float


@dataclass(frozen=True, slots=True)
class Recipe:
    """How an index is built; written to ``recipe.json`` beside the index (seed 003).

    Attributes:
        kind: ``bm25``, ``vector`` or ``hybrid``.
        name: The index's folder name under ``.cache/indexes/``.
        params: Everything else that changes results: tokenizer, fields, embedder name,
            version and dimensions, fusion method and constants. Plain JSON, no floats
            other than fusion weights rendered as strings.
    """

    kind: str
    name: str
    params: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Return the ``recipe.json`` object."""
        return {"kind": self.kind, "name": self.name, **self.params}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Recipe:
        """Parse a ``recipe.json`` object (``kind`` and ``name`` required)."""
        params = {k: v for k, v in data.items() if k not in ("kind", "name")}
        return cls(kind=str(data["kind"]), name=str(data["name"]), params=params)


@dataclass(frozen=True, slots=True)
class IndexInputs:
    """What an index was built from; written to ``inputs.json`` (seed 003).

    Attributes:
        count: How many records the index holds.
        digest: :func:`inputs_digest` over the (record id, version digest) pairs it holds.
        built_at: When the index was last brought up to date (aware UTC), or ``None``.
    """

    count: int
    digest: str
    built_at: datetime | None = None


def version_digest(record: MemoryRecord) -> str:
    """Return a short digest of one record version (sha256 of its canonical bytes, 32 hex)."""
    return hashlib.sha256(record.canonical_bytes()).hexdigest()[:32]


def inputs_digest(pairs: Iterable[tuple[str, str]]) -> str:
    """Return the sha256 hex over sorted ``(record id, version digest)`` pairs, one per line."""
    digest = hashlib.sha256()
    for record_id, version in sorted(pairs):
        digest.update(f"{record_id} {version}\n".encode())
    return digest.hexdigest()


def document_text(record: MemoryRecord) -> str:
    """Return the text an index sees for a record: its body, then its tags on a last line."""
    return record.body if not record.tags else f"{record.body}\n{' '.join(record.tags)}"


@runtime_checkable
class SearchIndex(Protocol):
    """A disposable index over the latest versions of records (the port every index implements)."""

    @property
    def recipe(self) -> Recipe:
        """How this index is built."""
        ...

    def index(self, records: Iterable[MemoryRecord]) -> None:
        """Add records, replacing any version of the same id already held."""
        ...

    def remove(self, record_ids: Iterable[str]) -> None:
        """Forget these ids (unknown ids are ignored); their text never matches again."""
        ...

    def query(self, text: str, *, k: int = 32) -> list[Hit]:
        """Return up to ``k`` hits for any user text, best first, ties by record id.

        Never raises on odd input (syntax characters, empty or whitespace text, any
        Unicode): such text is searched literally, and nothing matching gives ``[]``.
        """
        ...

    def inputs(self) -> IndexInputs:
        """Return what the index holds: count and digest of (id, version digest) pairs."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors (the port every embedding model implements)."""

    @property
    def name(self) -> str:
        """Model name, e.g. ``hash`` or ``all-MiniLM-L6-v2``."""
        ...

    @property
    def version(self) -> str:
        """Version of the model weights and the code around them; a change means a rebuild."""
        ...

    @property
    def dimensions(self) -> int:
        """Length of each vector."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return an array of shape ``(len(texts), dimensions)``, float32, rows L2-normalised (or zero)."""
        ...


def embedder_cold(embedder: Embedder) -> bool:
    """Return whether embedding now would first load ``embedder``'s model in this process.

    True for a :class:`~agent_memory.search.embedders.MiniLMEmbedder` not yet loaded (about
    0.3 s): the catalog then leaves new versions to the next query, which loads the model
    anyway (:mod:`agent_memory.search.freshness`, "Deferred"). An embedder without a
    ``loaded`` attribute (hash, an endpoint) is never cold.
    """
    return not getattr(embedder, "loaded", True)
