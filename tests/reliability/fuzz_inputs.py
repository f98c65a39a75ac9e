"""Hostile input for the fuzz tests, made from one ``random.Random`` per input.

Hypothesis hands each test input a seeded ``Random`` (``st.randoms(use_true_random=True)``:
one draw per input); everything else is plain Python. That costs microseconds where a
Hypothesis strategy of the same breadth costs milliseconds, so the soak's 100,000 inputs per
parser fit in minutes; a failure still names its seed, so it can be replayed. (Shrinking is
the price: the failing input is printed whole.)

Each generator starts from something valid (a note, a signed MemoryFile, an inbox line, the
``memory.toml`` that ``init`` writes) and damages it with :func:`mutate`, or builds an input
from pieces chosen to hit parser edge cases: YAML 1.1 words, numbers, dates, ``---`` lines,
CRLF, U+2028, NEL, BOMs, controls, keys past YAML's implicit-key limit (the pools of
:mod:`strategies`), values nested thousands deep, integers of thousands of digits.
"""

from __future__ import annotations

import copy
import json
import re
import unicodedata
from datetime import UTC, date, datetime, timedelta, timezone
from random import Random
from typing import Any

from agent_memory.errors import AgentMemoryError
from agent_memory.jobs.inbox import format_line
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.note import dump_note
from agent_memory.records.record import (
    EpistemicStatus,
    Kind,
    MemoryRecord,
    Provenance,
    RecordType,
    Scope,
    State,
    Transition,
)
from agent_memory.records.signing import sign_record
from strategies import HOSTILE_STRINGS, KEYS, LINE_BREAKS, LONG_KEYS, TRICKY_CHARACTERS

PIECES: tuple[str, ...] = ("", "plain words", *HOSTILE_STRINGS, *TRICKY_CHARACTERS, *LINE_BREAKS, *LONG_KEYS)
_TAILS = ("", "", "", " ", *LINE_BREAKS)
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
# Around the limits that matter: ours (100), libyaml's (1,000), Python's recursion.
DEPTHS = (20_000, 5_000, 1_001, 101, 99)
_VALUE_START = re.compile(rb'":|: |^- ', re.MULTILINE)
_ZONES = (UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-11)))
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EXTRA_WORDS = ("custom", "x_note", "_private", "yes", "no", "on", "y", "null", "Key", "x-custom", "a b", "")


# ---------------------------------------------------------------------- values


def char(rng: Random) -> str:
    """One character: mostly ASCII, else Latin-1, the BMP (no surrogates) or an astral plane."""
    band = rng.randrange(8)
    if band < 4:
        return chr(rng.randint(0x20, 0x7E))
    if band == 4:
        return chr(rng.randint(0x80, 0xFF))
    if band < 7:
        code = rng.randint(0x100, 0xFFFD)
        return chr(code) if not 0xD800 <= code <= 0xDFFF else "\ufffd"
    return chr(rng.randint(0x10000, 0x10FFFF))


def text(rng: Random) -> str:
    """A string: a hostile piece, a few arbitrary characters, maybe a line break."""
    return rng.choice(PIECES) + "".join(char(rng) for _ in range(rng.randrange(9))) + rng.choice(_TAILS)


def label(rng: Random) -> str:
    """A non-empty :func:`text`."""
    return text(rng) or "?"


def moment(rng: Random) -> datetime:
    """An aware instant from 1970 to 2200, with microseconds, in one of a few zones."""
    return (_EPOCH + timedelta(microseconds=rng.randrange(7_258_118_400_000_000))).astimezone(
        rng.choice(_ZONES)
    )


def json_value(rng: Random, depth: int = 2) -> Any:
    """Any float-free JSON value nested up to ``depth`` levels, empty containers included."""
    kind = rng.randrange(7 if depth > 0 else 5)
    if kind < 3:
        return (None, False, True)[kind]
    if kind == 3:
        return rng.randint(-(2**70), 2**70)
    if kind == 4:
        return text(rng)
    if kind == 5:
        return [json_value(rng, depth - 1) for _ in range(rng.randrange(3))]
    return {_nfc(text(rng)): json_value(rng, depth - 1) for _ in range(rng.randrange(3))}


def _nfc(key: str) -> str:
    return unicodedata.normalize("NFC", key)


def record(rng: Random) -> MemoryRecord:
    """A valid record: any type and state, optional and extension fields or not, maybe erased or signed."""
    for _ in range(20):
        try:
            return _record(rng)
        except AgentMemoryError:
            continue  # an invalid combination of drawn fields: draw again
    return _record_pool(rng)


def _record(rng: Random) -> MemoryRecord:
    record_type = rng.choice(list(RecordType))
    state = rng.choice(list(State))
    kind = rng.choice([None, Kind.KNOWLEDGE, Kind.STATE])

    def maybe(make: Any) -> Any:
        return make(rng) if rng.random() < 0.5 else None

    def some(make: Any, at_least: int = 0) -> tuple[Any, ...]:
        return tuple(make(rng) for _ in range(rng.randint(at_least, 3)))

    superseded_by = maybe(label) if state is State.ARCHIVED else None
    if state is State.SUPERSEDED:
        superseded_by = label(rng)
    transition = None
    if state is State.TRANSITIONAL:
        first, second = "mem:" + rng.randbytes(16).hex(), label(rng)
        transition = Transition(sides=(first, second + "'" * (second == first)), reason=label(rng))
    made = MemoryRecord(
        type=record_type,
        body=text(rng),
        slots={_nfc(text(rng)): json_value(rng) for _ in range(rng.randrange(3))},
        state=state,
        confidence=rng.randint(0, 10_000) / 10_000,
        created_at=moment(rng),
        updated_at=maybe(moment),
        provenance=Provenance(kind=label(rng), ref=maybe(text), agent=maybe(text)),
        evidence=some(text, at_least=1 if record_type is RecordType.RULE else 0),
        supersedes=maybe(text),
        superseded_by=superseded_by,
        transition=transition,
        state_reason=maybe(text),
        tags=some(text),
        flagged=record_type is RecordType.RULE and rng.random() < 0.5,
        flag_reason=maybe(text),
        occurred_at=maybe(moment),
        kind=kind,
        subject=label(rng) if kind is Kind.STATE else None,
        namespace=maybe(lambda r: "".join(c for c in text(r) if ord(c) >= 32).strip() or "default"),
        scope=maybe(lambda r: r.choice(list(Scope))),
        valid_from=maybe(moment),
        valid_to=maybe(moment),
        taint=some(label) if rng.random() < 0.3 else None,
        sources=some(label) if rng.random() < 0.3 else None,
        epistemic_status=maybe(lambda r: r.choice(list(EpistemicStatus))),
        extra={_extra_key(rng): json_value(rng) for _ in range(rng.randrange(3))},
    )
    if rng.randrange(8) == 7:
        made = made.tombstone(label(rng), now=moment(rng))
    signing = rng.randrange(3)
    if signing == 1:
        made = sign_record(made, KEYS)
    elif signing == 2:
        made = made.evolve(signed_by=text(rng) or None, signature=text(rng))
    return made


def _extra_key(rng: Random) -> str:
    from agent_memory.records.record import EXTENSION_FIELDS, WIRE_FIELDS

    key = rng.choice(_EXTRA_WORDS) if rng.random() < 0.7 else text(rng)
    known = {*WIRE_FIELDS, *EXTENSION_FIELDS, "occurred_at", "redacted", "redaction_reason", "birth_digest"}
    return _nfc(f"x_{key}" if key in known else key)


_POOL: list[MemoryRecord] = []


def _record_pool(rng: Random) -> MemoryRecord:
    """A plain valid record, for the rare seed whose draws never make a valid one."""
    if not _POOL:
        _POOL.append(
            MemoryRecord.create(
                type="fact",
                body="The staging host is db-2.",
                provenance=Provenance(kind="conversation", ref="s-1"),
                created_at=datetime(2026, 1, 1, tzinfo=UTC),
            )
        )
    return _POOL[0]


# ---------------------------------------------------------------------- damage


def _deep(depth: int, kind: int) -> bytes:
    opener, closer = ((b"[", b"]"), (b"{a: ", b"}"), (b'{"a":', b"}"), (b"- ", b""))[kind]
    if kind == 3:  # block-style YAML, one more space of indent per level: past libyaml's 1,000 levels
        return b"".join(b" " * i + b"- \n" for i in range(min(depth, 1_100)))
    return opener * depth + b"1" + closer * depth


def nest(rng: Random, data: bytes) -> bytes:
    """Insert a deeply nested value where a value starts (after a JSON key, ``: `` or a YAML ``- ``).

    There a parser meets the nesting before any syntax error, so recursion limits are tested.
    """
    starts = [m.end() for m in _VALUE_START.finditer(data)] or [0]
    where = rng.choice(starts)
    return data[:where] + _deep(rng.choice(DEPTHS), rng.randrange(4)) + data[where:]


def mutate(rng: Random, base: bytes) -> bytes:
    """Damage ``base`` one to four times: insert junk, cut, flip, repeat, nest deeply, truncate."""
    data = bytearray(base)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(8)
        at = rng.randint(0, len(data))
        if op == 0:
            data[at:at] = rng.choice(JUNK)
        elif op == 1:
            del data[at : at + rng.randint(1, 64)]
        elif op == 2 and data:
            data[min(at, len(data) - 1)] ^= 1 << rng.randrange(8)
        elif op == 3:
            data[at:at] = bytes(data[at : at + rng.randint(1, 200)]) * rng.randint(1, 50)
        elif op == 4:
            data[:] = nest(rng, bytes(data))
        elif op == 5:
            del data[at:]
        elif op == 6:
            data[at:at] = rng.randbytes(rng.randrange(17))
        else:
            data[at:at] = text(rng).encode("utf-8")
    return bytes(data)


# ---------------------------------------------------------------------- inputs


def note_file(rng: Random) -> bytes:
    """A note version file: valid (maybe hand-written YAML), damaged, deeply nested, or raw bytes."""
    choice = rng.randrange(10)
    if choice == 0:
        return rng.randbytes(rng.randrange(512))
    note = dump_note(record(rng))
    if choice == 1:
        return note
    if choice == 2:
        return mutate(rng, _block_yaml(note))
    if choice == 3:
        return nest(rng, note)
    return mutate(rng, note)


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


_STAMPS = ("2026-01-01T00:00:00.000Z", "2026-11-29T16:00:00.123Z")
_ODD_VALUES: tuple[Any, ...] = (
    *(None, True, 0, -1, 2**64, 0.5, 1e308, "", "0.9", "0.90000", "1.0000", "2026-13-45T99:00:00Z"),
    *("mem:0123456789abcdef0123456789abcdef", "amp:key:", [], {}, [None], {"": None}, "a" * 70_000),
)


def memory_file(rng: Random) -> bytes:
    """MemoryFile bytes: an export, signed or not, damaged as bytes or as a JSON tree, or raw bytes."""
    choice = rng.randrange(10)
    if choice == 0:
        return rng.randbytes(rng.randrange(512))
    # Records that cannot be a first version (not active, tombstones) stay: import must refuse them.
    exported = MemoryFile(
        created_at=rng.choice(_STAMPS), records=tuple(record(rng) for _ in range(rng.randrange(4)))
    )
    if rng.random() < 0.5:
        exported = exported.sign(KEYS)
    data = exported.dumps()
    if choice == 1:
        return data
    if choice == 2:
        return nest(rng, data)
    if choice < 6:
        return mutate(rng, data)
    tree = json.loads(data)
    for _ in range(rng.randint(1, 3)):
        _replace_somewhere(rng, tree)
    try:
        return json.dumps(tree, ensure_ascii=rng.random() < 0.5).encode("utf-8")
    except (TypeError, ValueError):
        return data


def _replace_somewhere(rng: Random, tree: Any) -> None:
    """Replace, delete or add one value at a random place of a parsed JSON tree."""
    node = tree
    for _ in range(rng.randrange(5)):
        children = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        containers = [v for _, v in children if isinstance(v, dict | list) and v]
        if not containers:
            break
        node = rng.choice(containers)
    # A copy: the odd values are shared, and a later replacement may descend into this one.
    value = copy.deepcopy(rng.choice(_ODD_VALUES)) if rng.random() < 0.5 else json_value(rng)
    keys = list(node) if isinstance(node, dict) else list(range(len(node)))
    action = rng.randrange(3)
    if isinstance(node, dict):
        if action == 0 and keys:
            del node[rng.choice(keys)]
        elif action == 1 and keys:
            node[rng.choice(keys)] = value
        else:
            node[rng.choice(("body", "id", "signature", "x", "state", "records", "taint"))] = value
    elif keys and action < 2:
        node[rng.choice(keys)] = value
    else:
        node.append(value)


def inbox_text(rng: Random) -> str:
    """An ``inbox.md`` text: headers, well-formed lines of odd fields, damaged lines, blank lines."""
    lines = []
    for number in range(rng.randrange(7)):
        choice = rng.randrange(6)
        if choice == 0:
            lines.append(rng.choice(("", "# Inbox 2026-11-29", "# Inbox 2026-02-31", "  ")))
            continue
        day = date.fromordinal(rng.randint(1, date(9999, 12, 31).toordinal()))
        kind = rng.choice([Kind.STATE, Kind.KNOWLEDGE])
        line = format_line(
            day,
            f"mem-{day.isoformat()}-{number + 1:03d}",
            kind,
            text(rng),
            text(rng),
            text(rng) if kind is Kind.STATE else None,
            [text(rng) for _ in range(rng.randrange(3))],
        )
        if choice > 3:
            line = mutate(rng, line.encode("utf-8")).decode("utf-8", "replace")
        lines.append(line)
    return rng.choice(("\n", "\r\n")).join(lines) + rng.choice(("", "\n"))


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
    *('"refuse"', '"redact"', '"hash"', '"openai"', '"vector"', '"hybrid"', "'''x'''", '""', "9" * 5000),
    *('"' + "k" * 300 + '"', '"' + "/d" * 3000 + '"'),
)


def toml_text(rng: Random, template: str) -> str:
    """A ``memory.toml`` text: the template with lines dropped, changed or added, or a built one."""
    choice = rng.randrange(10)
    if choice == 0:
        return text(rng)
    if choice == 1:
        return mutate(rng, template.encode("utf-8")).decode("utf-8", "replace")
    lines = template.split("\n") if choice < 7 else []
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(4)
        at = rng.randint(0, len(lines))
        if op == 0 and lines:
            del lines[min(at, len(lines) - 1)]
        elif op == 1:
            table = rng.choice(_TOML_KEYS)
            if rng.random() < 0.5:
                table = f"{table}.{rng.choice(_TOML_KEYS)}"
            lines.insert(at, f"[{table}]" if "." in table else f"[{_toml_key(table)}]")
        else:
            key = rng.choice(_TOML_KEYS) if rng.random() < 0.7 else text(rng)
            value = rng.choice(_TOML_SCALARS) if rng.random() < 0.7 else json.dumps(text(rng))
            lines.insert(at, f"{_toml_key(key)} = {value}")
    return "\n".join(lines)


def _toml_key(key: str) -> str:
    if key and all(c.isascii() and (c.isalnum() or c in "-_") for c in key):
        return key
    return json.dumps(key)


# ---------------------------------------------------------------------- queries

# Pieces of the query languages under the indexes: FTS5 (SQLite) and tsquery (PostgreSQL).
FTS_SYNTAX = (
    *('"', '""', "'", "*", "^", ":", "-", "+", "(", ")", "{", "}", "[", "]", "NEAR(", "NEAR/2", "AND"),
    *("OR", "NOT", "and", "col:x", "body:", "x*", "*x", "a NEAR b", "&", "|", "!", "<->", "<2>", ":*"),
    *(":A", "\\", "\x00", "%", "_", ";", "--", "/*", "*/", "' OR 1=1 --", "\u3000", "ǅ", "İ", "ß"),
)
WORDS = ("staging", "host", "db-2", "deploy", "tea", "lighthouse", "the", "a", "is", "on")


def query(rng: Random) -> str:
    """A query: arbitrary text, or words and query-language pieces run together, maybe very long."""
    if rng.randrange(4) == 0:
        return text(rng)
    parts = [
        rng.choice((rng.choice(FTS_SYNTAX), rng.choice(WORDS), text(rng))) for _ in range(rng.randint(1, 8))
    ]
    return rng.choice(("", " ", "  ", "\t")).join(parts) * rng.choice((1, 1, 1, 200))
