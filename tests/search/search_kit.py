"""What the search tests of this folder share: a record maker, hit ids, an embedder that can fail."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search.embedders import EmbeddingError, HashEmbedder
from agent_memory.stores.files import FileStore

if TYPE_CHECKING:
    from agent_memory.search.base import Vectors

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ANCHOR = "archive/2026-01-01.md#mem-2026-01-01-001"


def record(
    body: str, minutes: int = 0, *, at: datetime = T0, tags: tuple[str, ...] = (), ref: str = ANCHOR
) -> MemoryRecord:
    """Return a fact with ``body``, created ``minutes`` after ``at``, from a conversation anchor."""
    provenance = Provenance(kind="conversation", ref=ref)
    return MemoryRecord.create(
        type="fact", body=body, provenance=provenance, created_at=at + timedelta(minutes=minutes), tags=tags
    )


def ids(hits: Iterable[Any]) -> list[str]:
    """Return the record ids of ``hits``, in order."""
    return [hit.record_id for hit in hits]


class ScriptedEmbedder:
    """Hash vectors behind a model that "loads" on its first embed, as MiniLM's does.

    Attributes:
        loaded: Whether anything was embedded yet.
        embedded: Every text embedded, in order.
        down: While set, :meth:`embed` fails as an embedding server that went away does.
    """

    name = "scripted"
    version = "1"
    dimensions = 64

    def __init__(self) -> None:
        self.loaded, self.down = False, False
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return 64 hash dimensions per text, or raise ``EmbeddingError`` while :attr:`down`."""
        if self.down:
            raise EmbeddingError("connection refused", path="http://localhost:9")
        self.loaded = True
        self.embedded.extend(texts)
        return HashEmbedder(64).embed(texts)


def file_store(folder: Path, texts: Sequence[str]) -> FileStore:
    """Return a file store in ``folder`` holding one fact per text, a minute apart."""
    made = FileStore(folder)
    for i, text in enumerate(texts):
        made.put(record(text, i))
    return made
