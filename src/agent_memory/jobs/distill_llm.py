"""The optional LLM distill operator: any OpenAI-compatible chat endpoint, through the official client.

``agent-memory distill --operator llm`` (issue 7 item 3; seed 000 §14.4; DESIGN.md §4
"operators"). The ``[llm]`` table of ``memory.toml`` (:class:`LLMSettings`) names the base URL,
the model and the *name* of the environment variable that holds the API key (the key itself
never sits in a Home). Archived lines go to the model in batches as JSON; it must answer with
one JSON object ``{"items": [{"anchor", "text", "type"?, "tags"?}]}``.

The model only *extracts*. Everything it returns is checked before it becomes a
:class:`~.distill_rules.Candidate`, and refused with a reason in the run's report otherwise:

- the whole reply: not JSON, or not an object with an ``items`` list (those lines are not
  distilled and are read again next run);
- one item: not an object or an unknown field; an illegal move (an ``action`` other than
  ``create``, or ``supersedes``/``target``/``delete``…: supersede is decided by exact subject,
  never by a model, seed 000 §14.2 constraint 4); an anchor that is not one of the lines sent
  (outside the archive); empty text; a type outside ``fact|episode|procedure|preference``
  (and seed 003's words) — a ``rule`` needs evidence, which only promotion supplies; a
  ``kind`` or ``subject`` other than the line's (they come from the capture, seed 000 §12);
  a second item for a ``state`` line; text not grounded in its line (:func:`~.distill_rules.grounded`).

Accepted candidates are marked generated (seed 003: generative derivations are "marked"):
provenance kind ``generated``, ``epistemic_status`` ``inferred``, confidence 0.5 (the origin's
extractor default, origin-notes §1.10). They then pass the same proposal gate as the
heuristic's. The endpoint failing (unreachable, an HTTP error) raises :class:`OperatorError`
before anything is written.

Invariant: this module imports ``openai`` only when a request is made; the line texts go to
the endpoint the user configured and nowhere else.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agent_memory.errors import AgentMemoryError, ConfigError
from agent_memory.jobs.distill_rules import Candidate, Extraction, grounded
from agent_memory.records.record import EpistemicStatus, Kind, Scope
from agent_memory.settings import LLMSettings

if TYPE_CHECKING:
    from agent_memory.jobs.inbox import InboxItem

__all__ = ["GENERATED", "LLMOperator", "LLMSettings", "OperatorError", "parse_reply"]

GENERATED = "generated"
"""Provenance kind of a model's candidates (seed 003 "marked generated")."""
_CONFIDENCE = 0.5
_TYPES = frozenset({"fact", "episode", "procedure", "preference", "semantic", "episodic", "procedural"})
_FIELDS = frozenset({"anchor", "text", "type", "tags", "kind", "subject", "action"})
_MOVES = frozenset({"supersedes", "superseded_by", "target", "target_id", "delete", "archive", "merge"})
_LABEL = re.compile(r"\A[a-z0-9][a-z0-9._-]{0,63}\Z")
_FENCE = re.compile(r"\A```(?:json)?\s*\n(?P<body>.*)\n```\Z", re.S)
_SYSTEM = (
    "You maintain an agent's long-term memory. You get archived memory lines as JSON. "
    "Extract the items worth remembering across sessions: preferences, decisions, stable "
    "facts, lessons, notable events. Use only what a line says; never invent, merge lines or "
    "guess. Skip greetings, small talk, questions and passing emotions. Each item is one short "
    "statement that makes sense on its own later, naming who it is about. Never propose "
    "supersedes, merges or deletions: only extract. A line of kind state gets at most one item, "
    "its current value. Reply with one JSON object and nothing else: "
    '{"items": [{"anchor": "<the line\'s anchor>", "text": "...", '
    '"type": "fact|episode|procedure|preference"}]}. A line with nothing worth keeping gets no item.'
)


class OperatorError(AgentMemoryError):
    """The LLM endpoint could not be used (unreachable, an HTTP error); ``path`` is its URL, never a key."""


class LLMOperator:
    """Distill through a chat model (module docstring); ``name`` ``llm``, ``model`` from the settings.

    Args:
        settings: The ``[llm]`` table.
        environ: Where the API key variable is looked up (``os.environ`` by default).

    Raises:
        ConfigError: The ``openai`` package is not installed, or the variable
            ``settings.api_key_env`` names is unset or empty.
    """

    name = "llm"

    def __init__(self, settings: LLMSettings, *, environ: Mapping[str, str] | None = None) -> None:
        self.settings = settings
        self.model: str | None = settings.model
        if importlib.util.find_spec("openai") is None:
            raise ConfigError(
                "the llm operator needs the official openai client, which is not installed",
                field="llm",
                hint="pip install 'agent-memory[llm]'",
            )
        env = os.environ if environ is None else environ
        if settings.api_key_env:
            key = env.get(settings.api_key_env, "")
            if not key:
                raise ConfigError(
                    f"the environment variable {settings.api_key_env} (memory.toml [llm] api_key_env) "
                    "is not set",
                    field="llm.api_key_env",
                    hint='export it, or set api_key_env = "" for an endpoint that needs no key',
                )
        self._key = env.get(settings.api_key_env, "") if settings.api_key_env else "not-needed"

    def extract(self, lines: Sequence[InboxItem]) -> Extraction:
        """Send ``lines`` in batches of ``batch_lines`` and check every reply (module docstring).

        Raises:
            OperatorError: The endpoint is unreachable or answers with an HTTP error.
        """
        result = Extraction()
        size = self.settings.batch_lines
        for start in range(0, len(lines), size):
            batch = lines[start : start + size]
            part = parse_reply(self._ask(batch), batch)
            result.candidates.extend(part.candidates)
            result.skipped.update(part.skipped)
            result.rejected.extend(part.rejected)
        return result

    def _ask(self, batch: Sequence[InboxItem]) -> str | None:
        import openai

        client = openai.OpenAI(
            base_url=self.settings.base_url,
            api_key=self._key,
            timeout=float(self.settings.timeout_seconds),
            max_retries=self.settings.max_retries,
        )
        lines = [
            {"anchor": i.anchor, "kind": i.kind.value, "subject": i.subject, "text": i.text} for i in batch
        ]
        options: dict[str, Any] = {}
        if self.settings.json_mode:
            options["response_format"] = {"type": "json_object"}
        try:
            with client:
                completion = client.chat.completions.create(
                    model=self.settings.model,
                    temperature=0,
                    messages=[
                        {"role": "system", "content": _SYSTEM},
                        {"role": "user", "content": json.dumps({"lines": lines}, ensure_ascii=False)},
                    ],
                    **options,
                )
        except openai.APIStatusError as exc:
            raise OperatorError(
                f"the endpoint answered HTTP {exc.status_code}",
                path=self.settings.base_url,
                hint="check [llm] model and base_url; json_mode = false for servers without JSON mode",
            ) from None
        except openai.APIError as exc:
            raise OperatorError(f"the endpoint failed: {exc}", path=self.settings.base_url) from None
        choices = getattr(completion, "choices", None) or []
        return choices[0].message.content if choices else None


def parse_reply(content: str | None, lines: Sequence[InboxItem]) -> Extraction:
    """Check one model reply for ``lines`` and return what it yields (rules: module docstring).

    Never raises for a bad reply: a refused reply puts all ``lines`` in ``rejected``; a refused
    item puts its line there (when it is one of ``lines``). A line the reply names in no item
    is ``skipped`` ("the model kept nothing").
    """
    result = Extraction()
    anchors = tuple(item.anchor for item in lines)
    items = _items(content)
    if isinstance(items, str):
        result.rejected.append((anchors, items))
        return result
    by_anchor = {item.anchor: item for item in lines}
    named: set[str] = set()
    for index, raw in enumerate(items):
        anchor = raw.get("anchor") if isinstance(raw, Mapping) else None
        line = by_anchor.get(anchor) if isinstance(anchor, str) else None
        if line is not None:
            named.add(line.anchor)
        problem = _problem(raw, line, result.candidates)
        if problem is not None or line is None:
            where = (line.anchor,) if line is not None else ()
            result.rejected.append((where, f"item {index}: {problem}"))
            continue
        word = str(raw.get("type", "fact"))
        preference = word == "preference"
        tags = tuple(dict.fromkeys(str(t) for t in raw.get("tags", ())))
        result.candidates.append(
            Candidate(
                line.anchor,
                str(raw["text"]).strip(),
                type=word,
                tags=tags,
                scope=Scope.USER_PREFERENCE if preference else None,
                confidence=_CONFIDENCE,
                provenance_kind=GENERATED,
                epistemic_status=EpistemicStatus.INFERRED,
                rule="llm",
            )
        )
    for anchor in anchors:
        if anchor not in named:
            result.skipped[anchor] = "the model kept nothing from this line"
    return result


def _items(content: str | None) -> list[Any] | str:
    """Return the reply's ``items`` list, or why the reply is refused as a whole."""
    if content is None:
        return "bad reply: no message content"
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced is not None:
        text = fenced["body"]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"bad reply: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        return 'bad reply: wrong shape, expected {"items": [...]}'
    items: list[Any] = data["items"]
    return items


def _problem(raw: Any, line: InboxItem | None, earlier: Sequence[Candidate]) -> str | None:
    """Return why one item is refused, or ``None`` when it makes a candidate."""
    if not isinstance(raw, Mapping):
        return "not an object"
    moves = sorted(set(raw) & _MOVES)
    action = raw.get("action", "create")
    if moves or action != "create":
        what = moves[0] if moves else f"action {action!r}"
        return f"illegal move ({what}): distill only extracts; supersede follows the exact subject"
    unknown = sorted(set(raw) - _FIELDS)
    if unknown:
        return f"unknown fields {unknown}"
    if line is None:
        return f"anchor {raw.get('anchor')!r} is not one of the archive lines sent"
    text = raw.get("text")
    if not isinstance(text, str) or not text.strip():
        return "text must be a non-empty string"
    if raw.get("type", "fact") not in _TYPES:
        return f"type {raw.get('type')!r} is not one of {', '.join(sorted(_TYPES))}"
    tags = raw.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) and _LABEL.match(t) for t in tags):
        return "tags must be a list of lower-case labels"
    if raw.get("kind", line.kind.value) != line.kind.value:
        return f"kind {raw.get('kind')!r} differs from the line's {line.kind.value} (kept from the capture)"
    if raw.get("subject", line.subject) != line.subject:
        return "subject differs from the line's (kept from the capture)"
    if line.kind is Kind.STATE and any(c.anchor == line.anchor for c in earlier):
        return "a state line gives at most one value"
    if not grounded(text, line.text):
        return "not grounded in its line: most of its content terms are not there"
    return None
