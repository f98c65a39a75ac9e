"""Hypothesis strategies of hostile input for the parsers: damaged bytes, deep nesting, odd TOML.

Each strategy starts from something valid (a note, a signed MemoryFile, an inbox line, the
``memory.toml`` that ``init`` writes) and damages it a few times with :func:`mutate`, or
builds an input from scratch out of pieces chosen to hit parser edge cases. Generation
stays cheap (a few draws per input) so that a soak of 100,000 inputs per parser fits in
minutes.
"""

from __future__ import annotations

import copy
import json
import re
from datetime import date
from typing import Any

from hypothesis import strategies as st

from agent_memory.jobs.inbox import format_line
from agent_memory.memory_file import MemoryFile
from agent_memory.notes import dump_note
from agent_memory.records import Kind
from strategies import KEYS, json_values, records, texts

# Bytes that parsers of YAML, JSON, TOML and the inbox line format treat specially.
JUNK: tuple[bytes, ...] = (
    *(b"---\n", b"\n---\n", b"...\n", b"\r\n", b"\r", b"\n", b"\x00", b"\xff", b"\xc3", b"\xed\xa0\x80"),
    *(b": ", b"- ", b"&a ", b"*a", b"!!python/object/apply:os.system ", b"!!binary ", b"<<: *a"),
    *(b"{", b"}", b"[", b"]", b'"', b"'", b"\\", b"? ", b"\t", b"#", b"%YAML 1.2\n", b"%TAG ! x\n"),
    *(b"1.0", b"0x1f", b"1e999", b"-0", b"~", b"NaN", b"Infinity", b"9" * 5000, b"\xe2\x80\xa8"),
    *(b"\xef\xbb\xbf", b"\xc2\x85", b"true", b"null", b"=", b"[[x]]", b"[x.y]", b'"""', b"'''"),
    *(b" Source: ", b" Subject: ", b" Taint: ", b"- [2026-11-29] [mem-2026-11-29-001] (state) "),
    *(b"mem:", b"mem:0123456789abcdef0123456789abcdef", b"../../etc/passwd", b"\\u0000", b'\\"'),
)
# Around the limits that matter: ours (100), libyaml's (1,000), Python's recursion; the deepest first
# because Hypothesis favours the first choices of sampled_from.
_DEPTHS = (20_000, 5_000, 1_001, 101, 99)
_VALUE_START = re.compile(rb'":|: |^- ', re.MULTILINE)


def _deep(depth: int, kind: int) -> bytes:
    opener, closer = ((b"[", b"]"), (b"{a: ", b"}"), (b'{"a":', b"}"), (b"- ", b""))[kind]
    if kind == 3:  # block-style YAML: one more indent per level
        return b"".join(b"  " * i + b"- \n" for i in range(min(depth, 2000)))
    return opener * depth + b"1" + closer * depth


def nest(draw: st.DrawFn, data: bytes, at: int = 0) -> bytes:
    """Insert a deeply nested value where a value starts (after a JSON key, ``: `` or a YAML ``- ``).

    There a parser meets the nesting before any syntax error, so recursion limits are tested.
    """
    starts = [m.end() for m in _VALUE_START.finditer(data)] or [at]
    where = starts[draw(st.integers(0, len(starts) - 1))]
    return data[:where] + _deep(draw(st.sampled_from(_DEPTHS)), draw(st.integers(0, 3))) + data[where:]


@st.composite
def mutate(draw: st.DrawFn, base: bytes) -> bytes:
    """Damage ``base`` one to four times: insert junk, cut, flip, repeat, nest deeply, truncate."""
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.integers(0, 7))
        at = draw(st.integers(0, len(data)))
        if op == 0:
            data[at:at] = draw(st.sampled_from(JUNK))
        elif op == 1:
            del data[at : at + draw(st.integers(1, 64))]
        elif op == 2 and data:
            index = min(at, len(data) - 1)
            data[index] ^= 1 << draw(st.integers(0, 7))
        elif op == 3:
            span = data[at : at + draw(st.integers(1, 200))]
            data[at:at] = bytes(span) * draw(st.integers(1, 50))
        elif op == 4:
            # Where a value may start, so that a parser meets the nesting before any syntax error.
            data[:] = nest(draw, bytes(data), at)
        elif op == 5:
            del data[at:]
        elif op == 6:
            data[at:at] = draw(st.binary(max_size=16))
        else:
            data[at:at] = draw(texts()).encode("utf-8", "surrogatepass")
    return bytes(data)


@st.composite
def note_files(draw: st.DrawFn) -> bytes:
    """A note version file: a valid one (maybe hand-written YAML), damaged, or raw bytes."""
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return draw(st.binary(max_size=512))
    note = dump_note(draw(records()))
    if choice == 1:
        return note
    if choice == 2:
        return draw(mutate(_block_yaml(note)))
    if choice == 3:
        return nest(draw, note)
    return draw(mutate(note))


def _block_yaml(note: bytes) -> bytes:
    """Rewrite a note's flow frontmatter as block YAML, the way a person would write it."""
    import yaml

    head, _, body = note[4:].partition(b"\n---\n")
    try:
        fields = yaml.safe_load(head.decode("utf-8"))
        block = yaml.safe_dump(fields, allow_unicode=True, sort_keys=False).encode("utf-8")
    except (yaml.YAMLError, UnicodeDecodeError):
        return note
    return b"---\n" + block + b"---\n" + body


@st.composite
def memory_files(draw: st.DrawFn) -> bytes:
    """MemoryFile bytes: a signed export, damaged as bytes or as a JSON tree, or raw bytes."""
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return draw(st.binary(max_size=512))
    count = draw(st.integers(0, 3))
    chosen = tuple(draw(records()) for _ in range(count))
    # Records that cannot be a first version (not active, tombstones) stay: import must refuse them.
    exported = MemoryFile(created_at=draw(st.sampled_from(_STAMPS)), records=chosen)
    if draw(st.booleans()):
        exported = exported.sign(KEYS)
    data = exported.dumps()
    if choice == 1:
        return data
    if choice == 2:
        return nest(draw, data)
    if choice < 6:
        return draw(mutate(data))
    tree = json.loads(data)
    for _ in range(draw(st.integers(1, 3))):
        _replace_somewhere(draw, tree)
    try:
        return json.dumps(tree, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError):
        return data


_STAMPS = ("2026-01-01T00:00:00.000Z", "2026-11-29T16:00:00.123Z")
_ODD_VALUES: tuple[Any, ...] = (
    *(None, True, 0, -1, 2**64, 0.5, 1e308, "", "0.9", "0.90000", "1.0000", "2026-13-45T99:00:00Z"),
    *("mem:0123456789abcdef0123456789abcdef", "amp:key:", [], {}, [None], {"": None}, "a" * 70_000),
)


def _replace_somewhere(draw: st.DrawFn, tree: Any) -> None:
    """Replace, delete or add one value at a random place of a parsed JSON tree."""
    node = tree
    for _ in range(draw(st.integers(0, 4))):
        children = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        containers = [(k, v) for k, v in children if isinstance(v, dict | list) and v]
        if not containers:
            break
        node = containers[draw(st.integers(0, len(containers) - 1))][1]
    keys = list(node) if isinstance(node, dict) else list(range(len(node)))
    # A copy: the odd values are shared, and a later replacement may descend into this one.
    value = copy.deepcopy(draw(st.sampled_from(_ODD_VALUES) | json_values))
    action = draw(st.integers(0, 2))
    if isinstance(node, dict):
        if action == 0 and keys:
            del node[keys[draw(st.integers(0, len(keys) - 1))]]
        elif action == 1 and keys:
            node[keys[draw(st.integers(0, len(keys) - 1))]] = value
        else:
            node[draw(st.sampled_from(("body", "id", "signature", "x", "state", "records", "taint")))] = value
    elif keys and action < 2:
        node[keys[draw(st.integers(0, len(keys) - 1))]] = value
    else:
        node.append(value)


_KINDS = st.sampled_from([Kind.STATE, Kind.KNOWLEDGE])
_DAYS = st.dates(min_value=date(1, 1, 1))


@st.composite
def inbox_texts(draw: st.DrawFn) -> str:
    """An ``inbox.md`` text: headers, well-formed lines of odd fields, damaged lines, blank lines."""
    lines = []
    for number in range(draw(st.integers(0, 6))):
        choice = draw(st.integers(0, 5))
        if choice == 0:
            lines.append(draw(st.sampled_from(("", "# Inbox 2026-11-29", "# Inbox 2026-02-31", "  "))))
            continue
        day = draw(_DAYS)
        kind = draw(_KINDS)
        line = format_line(
            day,
            f"mem-{day.isoformat()}-{number + 1:03d}",
            kind,
            draw(texts()),
            draw(texts()),
            draw(texts()) if kind is Kind.STATE else None,
            [draw(texts()) for _ in range(draw(st.integers(0, 2)))],
        )
        if choice > 3:
            line = draw(mutate(line.encode("utf-8", "surrogatepass"))).decode("utf-8", "replace")
        lines.append(line)
    return draw(st.sampled_from(("\n", "\r\n"))).join(lines) + draw(st.sampled_from(("", "\n")))


# ---------------------------------------------------------------------- memory.toml

_TOML_KEYS = (
    *("format", "home_id", "timezone", "identity", "key_file", "actors", "owner", "grants", "trust"),
    *("trusted_signers", "secrets", "on_detect", "search", "recipes", "recipe", "kind", "embedder"),
    *("base_url", "model", "api_key_env", "dimensions", "parts", "k", "agent:claude", "owner.x", ""),
)
_TOML_SCALARS = (
    *('"agent-memory-home/1"', '"Etc/UTC"', '"Mars/Olympus"', '"../../x"', '"~/key"', '"\\u0000"'),
    *('"owner"', '"agent:x"', '["approve", "erase"]', '["nope"]', '["bm25"]', '["bm25", "bm25"]'),
    *('["hybrid", "vectors-hash"]', "[]", "[1, 2]", '["amp:key:x"]', "{}", '{ kind = "bm25" }'),
    *("1", "-1", "0", "1.5", "nan", "inf", "true", "1979-05-27T07:32:00Z", "07:32:00", "1979-05-27"),
    *('"refuse"', '"redact"', '"hash"', '"openai"', '"vector"', '"hybrid"', "'''x'''", '""'),
)


@st.composite
def toml_texts(draw: st.DrawFn, template: str) -> str:
    """A ``memory.toml`` text: the template with lines dropped, changed or added, or a built one."""
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return draw(texts())
    if choice == 1:
        return draw(mutate(template.encode("utf-8"))).decode("utf-8", "replace")
    lines = template.split("\n") if choice < 7 else []
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.integers(0, 3))
        at = draw(st.integers(0, len(lines)))
        if op == 0 and lines:
            del lines[min(at, len(lines) - 1)]
        elif op == 1:
            table = draw(st.sampled_from(_TOML_KEYS))
            if draw(st.booleans()):
                table = f"{table}.{draw(st.sampled_from(_TOML_KEYS))}"
            lines.insert(at, f"[{_toml_key(table)}]" if "." not in table else f"[{table}]")
        else:
            key = draw(st.sampled_from(_TOML_KEYS) | texts())
            value = draw(st.sampled_from(_TOML_SCALARS) | texts().map(json.dumps))
            lines.insert(at, f"{_toml_key(key)} = {value}")
    return "\n".join(lines)


def _toml_key(key: str) -> str:
    if key and all(c.isascii() and (c.isalnum() or c in "-_") for c in key):
        return key
    return json.dumps(key)
