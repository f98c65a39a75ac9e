"""The arguments of the MCP tools: limits and reusable parameter types, with the copy the model reads.

Limits are interface limits (issue 8 item 3: "each parameter's unit and limit"): generous for
an agent, small enough that one call cannot flood the Home; the porcelain validates meaning
(a subject only with ``kind=state``, a time with an offset) behind them. Each type carries its
description, so every parameter of every tool is described in its schema.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from agent_memory.mcp.results import Timestamp

__all__ = [
    "MAX_BUDGET",
    "MAX_EVIDENCE",
    "MAX_JUDGED",
    "MAX_K",
    "MAX_TAGS",
    "QUERY_CHARS",
    "REASON_CHARS",
    "SOURCE_CHARS",
    "SUBJECT_CHARS",
    "TAG_CHARS",
    "TEXT_CHARS",
    "Moment",
    "Reason",
    "Source",
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
