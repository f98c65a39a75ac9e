"""What strict MCP clients check: annotations, schemas and structured results, read over stdio.

The rules every listed schema must meet (issue 8 item 3): a top-level object; every array
declares ``items``; every object with properties is closed (``additionalProperties: false``)
and every other ``additionalProperties`` is a typed map, never ``true`` or ``{}``; every
required name is a property; every property that holds a time (``*_at``, ``as_of``,
``valid_*``) is a ``date-time`` string; every ``$ref`` resolves. One server for the module.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp.types import Tool
from mcp_harness import TOOLS, Connected, connect, grant, new_home, stdio_params

READERS = {"status"}
TOUCHERS = {"recall", "nas_recall"}  # they count each record returned: not read-only, not idempotent
DESTRUCTIVE = {"supersede", "resolve", "consolidate", "redact", "decide_pending"}
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
TIME_NAMES = re.compile(r"(_at|^as_of|^valid_from|^valid_to)$")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Connected, list[Tool]]]:
    """One server (agent:mcp with the approve, erase, mark and withdraw grants) and its tools as listed."""
    root = tmp_path_factory.mktemp("schemas")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(root / "config"))
        home = new_home(root / "home")
        grant(home, "agent:mcp", "approve", "erase", "mark", "withdraw")
        with connect(stdio_params(home)) as client:
            yield home, client, client.tools()


@pytest.fixture(scope="module")
def listed(served: tuple[Path, Connected, list[Tool]]) -> list[Tool]:
    return served[2]


def _nodes(value: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every JSON object inside a schema with its path, the schema itself included."""
    if isinstance(value, dict):
        yield where or "/", value
        for key, child in value.items():
            yield from _nodes(child, f"{where}/{key}")
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _nodes(child, f"{where}/{i}")


def _has_type(node: dict[str, Any], name: str) -> bool:
    kind = node.get("type")
    return kind == name or (isinstance(kind, list) and name in kind)


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _is_time(schema: dict[str, Any], root: dict[str, Any]) -> bool:
    options = [_resolve(o, root) for o in schema.get("anyOf", [schema])]
    strings = [o for o in options if _has_type(o, "string")]
    return bool(strings) and all(o.get("format") == "date-time" for o in strings)


def strict_schema_problems(schema: dict[str, Any]) -> list[str]:
    """Return every way ``schema`` breaks the rules of this module's docstring ([] when none)."""
    problems = []
    if not _has_type(schema, "object"):
        problems.append("/: the top level is not an object")
    for where, node in _nodes(schema):
        if where.split("/")[-1] in ("properties", "$defs"):
            continue  # a name -> schema table, not a schema
        if _has_type(node, "array") and "items" not in node:
            problems.append(f"{where}: an array without items")
        extra = node.get("additionalProperties", None)
        if "properties" in node and extra is not False:
            problems.append(f"{where}: an object with properties that is not closed")
        is_map = isinstance(extra, dict) and "type" in extra
        if "properties" not in node and _has_type(node, "object") and where != "/" and not is_map:
            problems.append(f"{where}: an object that is neither closed nor a typed map")
        if extra is True or extra == {}:
            problems.append(f"{where}: additionalProperties allows anything")
        missing = set(node.get("required", [])) - set(node.get("properties", {}))
        if missing:
            problems.append(f"{where}: required names that are not properties: {sorted(missing)}")
        for name, prop in node.get("properties", {}).items():
            if TIME_NAMES.search(name) and not _is_time(prop, schema):
                problems.append(f"{where}/properties/{name}: a time that is not a date-time string")
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.rsplit("/", 1)[-1] not in schema.get("$defs", {}):
            problems.append(f"{where}: $ref {ref} does not resolve")
    return problems


def test_the_rules_catch_what_strict_clients_reject() -> None:
    assert strict_schema_problems({"type": "object", "properties": {}, "additionalProperties": False}) == []
    bad = {
        "type": "object",
        "properties": {
            "tags": {"type": "array"},
            "when_at": {"type": "string"},
            "blob": {"type": "object", "additionalProperties": True},
            "inner": {"type": "object", "properties": {"x": {"type": "integer"}}},
            "ref": {"$ref": "#/$defs/Missing"},
        },
        "required": ["nope"],
    }
    found = "\n".join(strict_schema_problems(bad))
    for fragment in (
        "/properties/tags: an array without items",
        "when_at: a time that is not a date-time string",
        "/properties/blob: an object that is neither closed nor a typed map",
        "/properties/blob: additionalProperties allows anything",
        "/properties/inner: an object with properties that is not closed",
        "/: an object with properties that is not closed",
        "required names that are not properties: ['nope']",
        "$ref #/$defs/Missing does not resolve",
    ):
        assert fragment in found, fragment
    assert strict_schema_problems({"type": "array", "items": {}}) == ["/: the top level is not an object"]


def test_every_tool_carries_all_three_hints_and_only_the_readers_are_read_only(listed: list[Tool]) -> None:
    assert {tool.name for tool in listed} == TOOLS
    for tool in listed:
        hints = tool.annotations
        assert hints is not None, tool.name
        assert None not in (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint), tool.name
        assert hints.read_only_hint is (tool.name in READERS), tool.name
        assert hints.destructive_hint is (tool.name in DESTRUCTIVE), tool.name
        assert hints.open_world_hint is False, tool.name
    by_name = {tool.name: tool.annotations for tool in listed}
    assert by_name["remember"] is not None and by_name["remember"].idempotent_hint is True
    assert by_name["consolidate"] is not None and by_name["consolidate"].idempotent_hint is False
    for name in TOUCHERS:
        touch = by_name[name]
        assert touch is not None and (touch.read_only_hint, touch.idempotent_hint) == (False, False), name


def test_recall_is_annotated_as_it_behaves_a_repeat_scores_the_records_it_touched_higher(
    served: tuple[Path, Connected, list[Tool]],
) -> None:
    home, client, listed = served
    client.ok("remember", text="The pager rotation changes every Tuesday", source="wiki")
    notes_before = {p: p.read_bytes() for p in (home / "notes").rglob("*") if p.is_file()}
    first, second = (client.ok("recall", query="pager rotation Tuesday")["records"] for _ in range(2))
    assert [r["id"] for r in first] == [r["id"] for r in second] and first
    assert second[0]["score"] > first[0]["score"]  # a repeat answers differently: not idempotent
    assert {
        p: p.read_bytes() for p in (home / "notes").rglob("*") if p.is_file()
    } == notes_before  # no record changed
    [recall] = [tool for tool in listed if tool.name == "recall"]
    assert recall.annotations is not None and recall.annotations.idempotent_hint is False
    assert recall.annotations.read_only_hint is False


def test_every_listed_schema_meets_the_strict_client_rules_and_every_parameter_is_described(
    listed: list[Tool],
) -> None:
    for tool in listed:
        assert tool.description and len(tool.description) < 800, tool.name
        assert tool.output_schema is not None, f"{tool.name} has no structured output"
        for kind, schema in (("input", tool.input_schema), ("output", tool.output_schema)):
            Draft202012Validator.check_schema(schema)
            assert strict_schema_problems(schema) == [], (tool.name, kind)
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
    recall = next(tool for tool in listed if tool.name == "recall")
    budget = recall.input_schema["properties"]["budget_tokens"]
    assert (budget["default"], budget["minimum"]) == (2000, 1) and budget["maximum"] >= 2000


def test_an_argument_the_schema_does_not_name_is_refused_by_name_and_nothing_runs(
    served: tuple[Path, Connected, list[Tool]],
) -> None:
    _, client, _ = served
    text = client.error("remember", text="Typos must not be dropped silently", tagz=["x"])
    assert "\n" not in text and "tagz: not an argument of remember" in text, text
    assert "hint: remember takes text, tags, source," in text, text
    assert not client.ok("recall", query="typos dropped silently")["records"]


DOCS = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


def test_the_tools_table_of_docs_mcp_md_matches_the_listed_tools(listed: list[Tool]) -> None:
    text = DOCS.read_text(encoding="utf-8")
    rows = {
        cells[0].strip("` "): [c.strip() for c in cells[1:]]
        for line in text.splitlines()
        if line.startswith("| `")
        for cells in [line.strip("|").split("|")]
    }
    assert set(rows) == TOOLS
    by_name = {tool.name: tool for tool in listed}
    for name, (read_only, destructive, idempotent, arguments, *_) in rows.items():
        tool = by_name[name]
        hints = tool.annotations
        assert hints is not None
        flags = (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint)
        assert (read_only, destructive, idempotent) == tuple("yes" if f else "no" for f in flags), name
        if arguments.startswith("as `"):
            tool = by_name[arguments[4:].split("`")[0]]
            assert tool.input_schema == by_name[name].input_schema, name
            continue
        required = set(tool.input_schema.get("required", []))
        documented = re.findall(r"`(\w+)(\??)`", arguments)
        assert [n for n, _ in documented] == list(tool.input_schema.get("properties", {})), name
        assert {n for n, optional in documented if not optional} == required, name
    results = text.split("### Results", 1)[1].split("### Errors", 1)[0]
    for tool in listed:
        [entry] = [e for e in results.split("\n- ") if f"`{tool.name}`" in e.split(":", 1)[0]]
        assert tool.output_schema is not None
        for key in tool.output_schema["properties"]:
            assert f"`{key}`" in entry or f"{key}," in entry, (tool.name, key)


def _times(schema: dict[str, Any], value: Any, root: dict[str, Any]) -> Iterator[Any]:
    """Yield every value of ``value`` that ``schema`` declares as ``format: date-time``."""
    schema = _resolve(schema, root)
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


def test_every_structured_result_matches_its_output_schema_and_its_times_carry_an_offset(
    served: tuple[Path, Connected, list[Tool]],
) -> None:
    _, client, tools = served
    schemas = {tool.name: tool.output_schema for tool in tools}
    earlier = (datetime.now(UTC) - timedelta(days=2)).isoformat()
    first = client.ok("remember", text="Release notes go in CHANGES.md", occurred_at=earlier)
    live = client.ok("remember", text="The queue is rabbit-1", kind="state", subject="queue")
    old = client.ok(
        "remember", text="The queue is rabbit-0", kind="state", subject="queue", valid_from=earlier
    )
    held = client.ok("remember", text="The queue is rabbit-2", kind="state", subject="queue")
    assert held["pending"] is True, "the queue subject is disputed: a new value waits for review"
    doomed = client.ok("remember", text="The temporary door code is 4711")["record_id"]
    hidden = client.ok("remember", text="The old VPN profile is vpn-legacy")["record_id"]
    withdrawn = client.ok("withdraw", memory_item_ids=[hidden], reason="obsolete")
    results = {
        "remember": first,
        "nas_remember": client.ok("nas_remember", text="Release notes go in CHANGES.md"),
        "supersede": client.ok(
            "supersede", old_id=first["record_id"], text="Release notes go in NEWS.md", reason="renamed"
        ),
        "resolve": client.ok("resolve", winner_id=live["record_id"], loser_id=old["record_id"], reason="ok"),
        "review": client.ok("review", record_id=live["record_id"], verdict="stale"),
        "recall": client.ok("recall", query="release notes queue", include_history=True),
        "nas_recall": client.ok("nas_recall", query="queue", include_history=True),
        "status": client.ok("status"),
        "feedback": client.ok(
            "feedback", record_ids=[live["record_id"]], verdict="helpful", evidence_refs=["ticket-9"]
        ),
        "consolidate": client.ok("consolidate", dry_run=True),
        "withdraw": withdrawn,
        "reinstate": client.ok("reinstate", withdrawal_id=withdrawn["withdrawal_id"], reason="still used"),
        "forget": client.ok("forget", memory_item_ids=[hidden]),
        "redact": client.ok("redact", record_id=doomed, reason="expired", authority="facilities"),
        "decide_pending": client.ok("decide_pending", record_id=held["record_id"], verdict="accept"),
    }
    assert set(results) == TOOLS
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
    assert seen_times >= 2 * len(results["recall"]["records"]) + 5
