"""What strict MCP clients check: annotations, schemas and structured results, read over stdio."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp.types import Tool
from mcp_harness import TOOLS, Connect, connect, stdio_params

from agent_memory.home import Home

READERS = {"recall", "status", "nas_recall"}
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


def _nodes(value: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object inside a schema, the schema itself included."""
    if isinstance(value, dict):
        yield value
        for child in value.values():
            yield from _nodes(child)
    elif isinstance(value, list):
        for child in value:
            yield from _nodes(child)


def _is_array(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "array" or (isinstance(kind, list) and "array" in kind)


def _times(schema: dict[str, Any], value: Any, root: dict[str, Any]) -> Iterator[Any]:
    """Yield every value of ``value`` that ``schema`` declares as ``format: date-time``."""
    if "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[1]]
    if schema.get("format") == "date-time" and value is not None:
        yield value
    for option in schema.get("anyOf", []):
        yield from _times(option, value, root)
    if isinstance(value, dict):
        for key, item in value.items():
            if key in schema.get("properties", {}):
                yield from _times(schema["properties"][key], item, root)
    if isinstance(value, list) and "items" in schema:
        for item in value:
            yield from _times(schema["items"], item, root)


@pytest.fixture(scope="module")
def listed(tmp_path_factory: pytest.TempPathFactory) -> list[Tool]:
    """The tools as a client lists them: one server for this module's read-only checks."""
    root = tmp_path_factory.mktemp("listing")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(root / "config"))
        home = Home.init(root / "home", git=False).root
        with connect(stdio_params(home)) as client:
            return client.tools()


def test_every_tool_carries_all_three_hints_and_only_the_readers_are_read_only(listed: list[Tool]) -> None:
    tools = listed
    assert {tool.name for tool in tools} == TOOLS
    for tool in tools:
        hints = tool.annotations
        assert hints is not None, tool.name
        assert None not in (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint), tool.name
        assert hints.read_only_hint is (tool.name in READERS), tool.name
        if hints.read_only_hint:
            assert hints.destructive_hint is False, tool.name
    by_name = {tool.name: tool for tool in tools}
    assert by_name["supersede"].annotations is not None
    assert by_name["supersede"].annotations.destructive_hint is True
    assert by_name["remember"].annotations is not None
    assert by_name["remember"].annotations.idempotent_hint is True


def test_every_schema_is_an_object_whose_arrays_have_items_and_whose_parameters_are_described(
    listed: list[Tool],
) -> None:
    tools = listed
    for tool in tools:
        assert tool.description and len(tool.description) < 800, tool.name
        assert tool.output_schema is not None, f"{tool.name} has no structured output"
        for schema in (tool.input_schema, tool.output_schema):
            Draft202012Validator.check_schema(schema)
            assert schema["type"] == "object", tool.name
            arrays = [node for node in _nodes(schema) if _is_array(node)]
            assert all("items" in node for node in arrays), (tool.name, arrays)
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
    recall = next(tool for tool in tools if tool.name == "recall")
    budget = recall.input_schema["properties"]["budget_tokens"]
    assert (budget["default"], budget["minimum"]) == (2000, 1) and budget["maximum"] >= 2000


def test_every_structured_result_matches_its_output_schema_and_its_times_carry_an_offset(
    home: Path, stdio: Connect
) -> None:
    earlier = (datetime.now(UTC) - timedelta(days=2)).isoformat()
    with stdio(home) as client:
        schemas = {tool.name: tool.output_schema for tool in client.tools()}
        first = client.ok("remember", text="Release notes go in CHANGES.md", occurred_at=earlier)
        live = client.ok("remember", text="The queue is rabbit-1", kind="state", subject="queue")
        old = client.ok(
            "remember", text="The queue is rabbit-0", kind="state", subject="queue", valid_from=earlier
        )
        results = {
            "remember": first,
            "nas_remember": client.ok("nas_remember", text="Release notes go in CHANGES.md"),
            "supersede": client.ok(
                "supersede", old_id=first["record_id"], text="Release notes go in NEWS.md", reason="renamed"
            ),
            "resolve": client.ok(
                "resolve", winner_id=live["record_id"], loser_id=old["record_id"], reason="ok"
            ),
            "review": client.ok("review", record_id=live["record_id"], verdict="stale"),
            "recall": client.ok("recall", query="release notes queue", include_history=True),
            "nas_recall": client.ok("nas_recall", query="queue", include_history=True),
            "status": client.ok("status"),
            "feedback": client.ok(
                "feedback", record_ids=[live["record_id"]], verdict="helpful", evidence_refs=["ticket-9"]
            ),
        }
    assert results["recall"]["records"], "the recall must return records for the check to mean anything"
    seen_times = 0
    for name, content in results.items():
        schema = schemas[name]
        assert schema is not None
        Draft202012Validator(schema).validate(content)
        for value in _times(schema, content, schema):
            seen_times += 1
            assert isinstance(value, str) and RFC3339.match(value), (name, value)
            assert datetime.fromisoformat(value).tzinfo is not None
    assert seen_times >= 2 * len(results["recall"]["records"])
