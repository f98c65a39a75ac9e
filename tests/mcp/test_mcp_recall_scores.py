"""Recall's scores through the real MCP client over stdio: the current value first, no match at 0.

Issue 21: over MCP, with the default recipes, the superseded API rate limit ranked first and
the current one scored ``0.0`` ("matched query (relevance 0.0000)"); anything filtering on
score dropped the right answer.
"""

from __future__ import annotations

from pathlib import Path

from mcp_harness import Connect

OLD = "The API rate limit is 100 requests per minute per token."
NEW = "The API rate limit was raised to 250 requests per minute per token."
QUESTION = "What is the API rate limit?"


def test_the_current_rate_limit_ranks_first_and_every_record_scores_above_zero(
    default_home: Path, stdio: Connect
) -> None:
    with stdio(default_home) as client:
        old = client.ok("remember", text=OLD, kind="state", subject="api:rate-limit")
        new = client.ok("remember", text=NEW, kind="state", subject="api:rate-limit")
        history = client.ok("recall", query=QUESTION, include_history=True)
        current = client.ok("recall", query=QUESTION)
    assert [r["id"] for r in history["records"]] == [new["record_id"], old["record_id"]]
    assert [r["state"] for r in history["records"]] == ["active", "superseded"]
    scores = [r["score"] for r in history["records"]]
    assert all(score > 0 for score in scores) and scores == sorted(scores, reverse=True)
    [only] = current["records"]
    assert only["id"] == new["record_id"] and only["score"] > 0
    assert "relevance 0.0000" not in " ".join(only["reasons"])
