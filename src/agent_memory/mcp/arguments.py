"""The arguments of the MCP tools: limits and reusable parameter types, with the copy the model reads.

Limits are interface limits (issue 8 item 3: "each parameter's unit and limit"): generous for
an agent, small enough that one call cannot flood the Home; the porcelain validates meaning
(a subject only with ``kind=state``, a time with an offset) behind them. Each type carries its
description, so every parameter of every tool is described in its schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import Field

from agent_memory.mcp.results import RecordId, Timestamp

__all__ = [
    "MAX_BUDGET",
    "MAX_EVIDENCE",
    "MAX_JUDGED",
    "MAX_K",
    "MAX_SCOPE",
    "MAX_TAGS",
    "QUERY_CHARS",
    "REASON_CHARS",
    "SOURCE_CHARS",
    "SUBJECT_CHARS",
    "TAG_CHARS",
    "TEXT_CHARS",
    "ArchiveRefs",
    "Moment",
    "Namespaces",
    "Reason",
    "RecordIds",
    "Source",
    "SourceRefs",
    "Statement",
    "Text",
]

# Interface limits: generous for an agent, small enough that one call cannot flood the Home.
TEXT_CHARS = 16_000
QUERY_CHARS = 2_000
SOURCE_CHARS = 500
REASON_CHARS = 1_000
SUBJECT_CHARS = 200
TAG_CHARS = 64
MAX_TAGS = 32
MAX_BUDGET = 32_000
MAX_K = 100
MAX_JUDGED = 50
MAX_EVIDENCE = 20
MAX_SCOPE = 100
REF_CHARS = 1_000

Text = Annotated[str, Field(min_length=1, max_length=TEXT_CHARS)]
Reason = Annotated[str, Field(min_length=1, max_length=REASON_CHARS, description="Why, in a sentence.")]
Source = Annotated[
    str | None,
    Field(
        max_length=SOURCE_CHARS,
        description="Where it came from: a file and line, URL, ticket or conversation id "
        f"(≤ {SOURCE_CHARS} characters). Defaults to this MCP session.",
    ),
]
Moment = Annotated[Timestamp | None, Field(description="RFC 3339 time with an offset, or null.")]
Statement = Annotated[
    str,
    Field(min_length=1, max_length=REASON_CHARS, pattern=r"\S", description="Why, in a sentence."),
]
"""A required text that must hold a visible character (a reason or an authority)."""

_Ref = Annotated[str, Field(min_length=1, max_length=REF_CHARS, pattern=r"^\S+$")]
RecordIds = Annotated[
    Sequence[RecordId],
    Field(max_length=MAX_SCOPE, description=f"Record ids (mem: + 32 hex; ≤ {MAX_SCOPE})."),
]
ArchiveRefs = Annotated[
    Sequence[_Ref],
    Field(
        max_length=MAX_SCOPE,
        description="Archive files or anchors, e.g. archive/2026-11-29.md (covers its #anchors) "
        f"or archive/2026-11-29.md#mem-2026-11-29-003 (≤ {MAX_SCOPE}).",
    ),
]
SourceRefs = Annotated[
    Sequence[_Ref],
    Field(
        max_length=MAX_SCOPE,
        description=f"Source or run refs as remembered (covers their #anchors; ≤ {MAX_SCOPE}).",
    ),
]
Namespaces = Annotated[
    Sequence[_Ref],
    Field(
        max_length=MAX_SCOPE,
        description=f"Namespaces, e.g. user:u1; only their records are covered (≤ {MAX_SCOPE}).",
    ),
]
