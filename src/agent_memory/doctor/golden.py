"""Golden recall tests: a Home's own questions and the records recall must find (seed 003; DESIGN.md §9).

``golden.yaml`` (created empty by ``agent-memory init``) is a YAML list of questions::

    - query: which host runs staging?
      expect: mem:0123456789abcdef0123456789abcdef   # by id, followed through superseded_by
      k: 5                                           # optional: within the top k records (1-100)
    - query: what does Ada drink in the morning?
      expect: {contains: tea}                        # a record whose body contains this text

An expected id is followed through ``superseded_by`` to its live successor (a corrected
fact is still the answer); an erased or withdrawn record is skipped with a note, and so is
a ``contains`` question whose every matching record is withdrawn. A question is *found*
when its record is among the first ``k`` records :meth:`Memory.recall
<agent_memory.memory.Memory.recall>` returns; recall@k is found ÷ (found + missed).
``contains`` compares case-folded NFC text.

Invariants: the file is parsed strictly (a list of mappings with exactly these keys; no
duplicate keys, aliases or other YAML types), every error naming the file, the entry and
the key; running the questions writes nothing (recall is asked with ``touch=False``, so a
test never changes what it measures).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from agent_memory.errors import ConfigError, RecordNotFound, SignatureError, StoreError

if TYPE_CHECKING:
    from agent_memory.governance.gate import Gate
    from agent_memory.recall.select import RecallResult
    from agent_memory.records.record import MemoryRecord
    from agent_memory.search.catalog import IndexCatalog

__all__ = [
    "DEFAULT_K",
    "Asked",
    "GoldenOutcome",
    "GoldenQuestion",
    "GoldenReport",
    "load_golden",
    "run_golden",
]

DEFAULT_K = 5
MAX_K = 100
_BUDGET = 10**9  # tokens: only k limits a golden recall
_ID = re.compile(r"\Amem:[0-9a-f]{32}\Z")
_KEYS = {"query", "expect", "k"}
_INT = "tag:yaml.org,2002:int"
_NULL = "tag:yaml.org,2002:null"
Verdict = Literal["found", "missed", "skipped"]


class Asked(Protocol):
    """What golden recall asks: an opened :class:`~agent_memory.memory.Memory`.

    ``recall`` takes ``Memory.recall``'s arguments; ``get`` is the verified read; the catalog
    chooses the indexes read and the gate says what is withdrawn.
    """

    @property
    def recall(self) -> Callable[..., RecallResult]:
        """``Memory.recall``."""
        ...

    @property
    def catalog(self) -> IndexCatalog:
        """The Memory's index catalog."""
        ...

    @property
    def gate(self) -> Gate:
        """The Memory's withdrawal gate."""
        ...

    def get(self, record_id: str) -> MemoryRecord:
        """``Memory.get``."""
        ...


@dataclass(frozen=True, slots=True)
class GoldenQuestion:
    """One entry of ``golden.yaml``.

    Attributes:
        number: Its position in the file, from 1.
        query: The question, as recall gets it.
        expect_id: The expected record (``mem:…``), or ``None`` when ``contains`` is given.
        contains: Text the expected record's body contains, or ``None``.
        k: Found only within the first ``k`` records (1-100, default 5).
    """

    number: int
    query: str
    expect_id: str | None = None
    contains: str | None = None
    k: int = DEFAULT_K

    @property
    def expected(self) -> str:
        """The expectation as written: the id, or ``contains: <text>``."""
        return self.expect_id if self.expect_id is not None else f"contains: {self.contains}"


@dataclass(frozen=True, slots=True)
class GoldenOutcome:
    """What one question gave.

    Attributes:
        question: The question.
        verdict: ``found``, ``missed`` or ``skipped`` (erased or withdrawn expectation).
        rank: The expected record's place in the recall (from 1) when found.
        target: The record looked for after following ``superseded_by`` (id questions).
        note: Why it was missed or skipped, and any successor followed.
    """

    question: GoldenQuestion
    verdict: Verdict
    rank: int | None = None
    target: str | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        """Return ``{"number", "query", "expected", "k", "verdict", "rank", "target", "note"}``."""
        q = self.question
        return {
            "number": q.number,
            "query": q.query,
            "expected": q.expected,
            "k": q.k,
            "verdict": self.verdict,
            "rank": self.rank,
            "target": self.target,
            "note": self.note,
        }


@dataclass(frozen=True, slots=True)
class GoldenReport:
    """The outcome of every question, and recall@k over them.

    Attributes:
        outcomes: One per question, in file order.
        recipes: The indexes recall read.
    """

    outcomes: tuple[GoldenOutcome, ...]
    recipes: tuple[str, ...]

    def count(self, verdict: Verdict) -> int:
        """Return how many questions had ``verdict``."""
        return sum(1 for outcome in self.outcomes if outcome.verdict == verdict)

    @property
    def found(self) -> int:
        """Questions whose record was found."""
        return self.count("found")

    @property
    def evaluated(self) -> int:
        """Questions found or missed (skipped ones do not count)."""
        return self.found + self.count("missed")

    @property
    def recall(self) -> float | None:
        """recall@k in [0, 1]: found ÷ evaluated; ``None`` when nothing was evaluated."""
        return self.found / self.evaluated if self.evaluated else None

    def summary(self) -> str:
        """Return one line, e.g. ``recall@k 0.917: 11 of 12 found, 1 skipped (indexes: hybrid)``."""
        score = "n/a" if self.recall is None else f"{self.recall:.3f}"
        return (
            f"recall@k {score}: {self.found} of {self.evaluated} found, {self.count('skipped')} skipped"
            f" (indexes: {', '.join(self.recipes)})"
        )

    def to_json(self) -> dict[str, Any]:
        """Return ``{"recipes", "recall", "found", "missed", "skipped", "questions": [...]}``."""
        return {
            "recipes": list(self.recipes),
            "recall": self.recall,
            "found": self.found,
            "missed": self.count("missed"),
            "skipped": self.count("skipped"),
            "questions": [outcome.to_json() for outcome in self.outcomes],
        }


# ---------------------------------------------------------------------- reading golden.yaml


def load_golden(path: Path) -> list[GoldenQuestion]:
    """Read and validate ``golden.yaml``.

    Raises:
        ConfigError: The file is missing or unreadable, is not YAML, is not a list, or an
            entry is not a mapping of ``query``, ``expect`` and optional ``k``, has a
            duplicate or unknown key, an empty query, an ``expect`` that is neither a
            ``mem:`` id nor ``{contains: text}``, or ``k`` outside 1-100. The file, entry
            number and line are named.
    """
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        hint = "agent-memory init creates it; add questions as the comment in it shows"
        raise ConfigError("no golden.yaml in this Home", path=name, hint=hint) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read: {exc}", path=name) from None
    try:
        root = yaml.compose(text, Loader=yaml.CSafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}" if mark else ""
        raise ConfigError(f"not valid YAML{where}: {exc.problem}", path=name) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"not valid YAML: {exc}", path=name) from None
    if root is None or (isinstance(root, ScalarNode) and root.tag == _NULL):
        return []
    if not isinstance(root, SequenceNode):
        raise ConfigError("golden.yaml must be a list of questions (- query: …)", path=name)
    seen: set[int] = set()
    return [_question(node, number, name, seen) for number, node in enumerate(root.value, start=1)]


def _question(node: Node, number: int, path: str, seen: set[int]) -> GoldenQuestion:
    def bad(detail: str, key: str | None = None, at: Node = node) -> ConfigError:
        where = f"entry {number}" + (f".{key}" if key else "")
        return ConfigError(f"{detail} (line {at.start_mark.line + 1})", path=path, field=where)

    for inner in _nodes(node):
        if id(inner) in seen:
            raise bad("anchors and aliases are not supported: write the value out", at=inner)
        seen.add(id(inner))
    if not isinstance(node, MappingNode):
        raise bad("an entry must be a mapping with query and expect")
    fields: dict[str, Node] = {}
    for key_node, value in node.value:
        key = key_node.value if isinstance(key_node, ScalarNode) else None
        if key not in _KEYS:
            raise bad(f"unknown key {key!r} (an entry has query, expect and optional k)", at=key_node)
        if key in fields:
            raise bad("duplicate key", key, key_node)
        fields[key] = value
    for key in ("query", "expect"):
        if key not in fields:
            raise bad("missing", key)
    query = _text(fields["query"])
    if not query:
        raise bad("must be non-empty text", "query", fields["query"])
    expect = fields["expect"]
    expect_id = contains = None
    if isinstance(expect, ScalarNode) and _ID.match(expect.value):
        expect_id = expect.value
    elif isinstance(expect, MappingNode) and [_text(k) for k, _ in expect.value] == ["contains"]:
        contains = _text(expect.value[0][1])
        if not contains:
            raise bad("contains must be non-empty text", "expect", expect)
    else:
        raise bad("must be a record id (mem: and 32 hex digits) or {contains: text}", "expect", expect)
    k = DEFAULT_K
    if "k" in fields:
        value = fields["k"]
        if not (isinstance(value, ScalarNode) and value.tag == _INT and value.value.isdigit()):
            raise bad(f"must be a whole number from 1 to {MAX_K}", "k", value)
        k = int(value.value)
        if not 1 <= k <= MAX_K:
            raise bad(f"must be a whole number from 1 to {MAX_K}", "k", value)
    return GoldenQuestion(number, query, expect_id, contains, k)


def _nodes(node: Node) -> Iterator[Node]:
    yield node
    if isinstance(node, SequenceNode):
        for item in node.value:
            yield from _nodes(item)
    elif isinstance(node, MappingNode):
        for key, value in node.value:
            yield from _nodes(key)
            yield from _nodes(value)


def _text(node: Node) -> str:
    """Return a scalar's text as written (a query ``2024`` is text here), stripped; else ``""``."""
    if not isinstance(node, ScalarNode) or node.tag == _NULL:
        return ""
    return str(node.value).strip()


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


# ---------------------------------------------------------------------- running


def run_golden(
    memory: Asked,
    questions: Sequence[GoldenQuestion],
    *,
    recipes: Sequence[str] | None = None,
    now: datetime | None = None,
) -> GoldenReport:
    """Ask recall every question and judge each answer (module docstring).

    Args:
        memory: The Memory to ask.
        questions: From :func:`load_golden`.
        recipes: Read these open indexes of ``memory.catalog`` instead of the active ones.
        now: The recall clock.

    Raises:
        ConfigError: A name in ``recipes`` is not an open index.
    """
    catalog = memory.catalog
    using: AbstractContextManager[None] = catalog.using(recipes) if recipes else nullcontext()
    with using:
        chosen = catalog.active
        outcomes = tuple(_judge(memory, question, now) for question in questions)
    return GoldenReport(outcomes, tuple(chosen))


def _judge(memory: Asked, question: GoldenQuestion, now: datetime | None) -> GoldenOutcome:
    target, note = None, ""
    if question.expect_id is not None:
        target, note, skip = _follow(memory, question.expect_id)
        if skip:
            return GoldenOutcome(question, "skipped", target=target, note=note)
        if target is None:
            return GoldenOutcome(question, "missed", note=note)
    result = memory.recall(question.query, k=question.k, budget_tokens=_BUDGET, touch=False, now=now)
    for rank, recalled in enumerate(result.records, start=1):
        record = recalled.record
        if record.id == target or (
            question.contains is not None and _fold(question.contains) in _fold(record.body)
        ):
            return GoldenOutcome(question, "found", rank, target or record.id, note)
    why = f"not in the top {question.k}"
    if question.contains is not None:
        holders = [r for r in memory.catalog.readable_records() if _fold(question.contains) in _fold(r.body)]
        if holders and not any(memory.gate.is_exposed(r) for r in holders):
            return GoldenOutcome(question, "skipped", note="every record containing this text is withdrawn")
        if not holders:
            why = "no record contains this text"
    elif target is not None:
        state = memory.get(target).state.value
        why += "" if state in ("active", "transitional") else f" (the record is {state})"
    return GoldenOutcome(question, "missed", target=target, note="; ".join(filter(None, [note, why])))


def _follow(memory: Asked, record_id: str) -> tuple[str | None, str, bool]:
    """Follow ``superseded_by`` to the live successor: (target id or None, note, skipped)."""
    chain = [record_id]
    while True:
        try:
            record = memory.get(chain[-1])
        except RecordNotFound:
            return None, f"no record {chain[-1]} in this Home", False
        except (StoreError, SignatureError) as exc:
            return None, f"{chain[-1]} cannot be read: {exc.detail}", False
        if record.redacted:
            return record.id, f"{record.id} was erased", True
        successor = record.superseded_by
        if successor is None or successor in chain:
            note = f"followed {' → '.join(chain)}" if len(chain) > 1 else ""
            exposure = memory.gate.check(record)
            if not exposure.exposed:
                return record.id, "; ".join(filter(None, [note, f"{record.id} is {exposure.reason}"])), True
            return record.id, note, False
        chain.append(successor)
