"""What a distill operator hands back, and the default one: a deterministic, model-free extractor.

Distill (autodream, seed 000 §14, ``memory:L3``) reads archived inbox lines and proposes
records. An operator (:class:`DistillOperator`) only *reads lines and suggests text*
(:class:`Candidate`); :mod:`.distill` decides kind, subject, taint, time, supersede and the
proposal, through the proposal gate. This module holds that contract and
:class:`HeuristicOperator`, whose rules are these, in order, for each line:

1. **State lines are kept whole.** A ``(state)`` line names its subject at capture (seed 000
   §12 rule 4): it is a current value by declaration, so its text is the record's body as
   captured. Type ``fact``.
2. **Knowledge lines are read sentence by sentence.** A leading speaker label
   (``Caroline: …``, a capitalised name of up to four words and a colon) is set aside and put
   back in front of the body. Sentences end at whitespace after ``.``, ``!`` or ``?`` (the
   origin's ``HeuristicExtractor`` split, origin-notes §1.10).
3. **Chit-chat and questions are dropped.** A sentence ending in ``?`` asserts nothing; a
   sentence with fewer than :data:`MIN_TERMS` content terms (stemmed by
   :func:`~.text.content_terms`, two letters or more) outside :data:`FILLER_WORDS`
   (greetings, thanks, reactions, pronouns, vague verbs) is chit-chat (seed 000 §12 rules
   6-7: no transcripts, no one-time emotion). A line left with no sentence is *skipped*
   with that reason. The speaker label does not count as a content term.
4. **The body is the kept sentences, verbatim, in order** (nothing is reworded or invented,
   seed 000 §14.1); a line whose every sentence is kept becomes its own text exactly.
5. **Type and tags** from the kept text, first match wins: a preference (:data:`PREFERENCE`:
   prefer, favourite, "from now on", or a pronoun or capitalised name followed by like, love,
   hate, dislike, enjoy) → seed 003's ``preference`` (a ``fact`` tagged ``preference``, scope
   ``user-preference``); a decision (:data:`DECISION`: decided, agreed, chose, settled on) →
   ``fact`` tagged ``decision``; a procedure (:data:`PROCEDURE`: "how to", or an imperative
   such as "run …") → ``procedure``; an event (:data:`EVENT`, the origin's past-tense verbs)
   → ``episode``; otherwise ``fact``.

Confidence is 0.9, as for ``remember``: the body is the captured text itself. Provenance kind
``distill``. Invariant: the same line always gives the same candidate or the same skip reason;
nothing here reads the clock, the store or the environment.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from agent_memory.jobs.text import content_terms, stem
from agent_memory.records.record import EpistemicStatus, Kind, Scope

if TYPE_CHECKING:
    from agent_memory.jobs.inbox import InboxItem

__all__ = [
    "DECISION",
    "EVENT",
    "FILLER_WORDS",
    "MIN_TERMS",
    "PREFERENCE",
    "PROCEDURE",
    "Candidate",
    "DistillOperator",
    "Extraction",
    "HeuristicOperator",
    "grounded",
    "substantive_terms",
]

MIN_TERMS = 2
"""Content terms outside :data:`FILLER_WORDS` a sentence needs to be kept."""

FILLER_WORDS: frozenset[str] = frozenset(
    {
        *("hey", "hi", "hello", "bye", "goodbye", "thanks", "thank", "ok", "okay", "yes", "yeah"),
        *("yep", "yup", "nope", "sure", "wow", "oh", "ah", "aw", "hmm", "haha", "lol", "omg", "cool"),
        *("nice", "great", "awesome", "amazing", "wonderful", "lovely", "sweet", "fantastic", "fun"),
        *("totally", "really", "very", "too", "pretty", "quite", "good", "well", "glad", "happy"),
        *("sorry", "welcome", "agree", "true", "right", "indeed", "exactly", "absolutely", "soon"),
        *("definitely", "talk", "see", "look", "care", "hear", "heard", "feel", "excited", "exciting"),
        *("guess", "think", "know", "mean", "bet", "gonna", "wanna", "kinda", "anyway", "way"),
        *("lot", "lots", "much", "thing", "stuff", "something", "anything", "everything", "nothing"),
        *("one", "got", "get", "let", "lets", "tell", "say", "said", "keep", "go", "going", "off"),
        *("take", "come", "up", "what", "whats", "how", "why", "who", "where", "which", "i", "im"),
        *("ive", "id", "ill", "me", "my", "mine", "myself", "you", "your", "yours", "youre", "youve"),
        *("yourself", "we", "us", "our", "ours", "ourselves", "he", "him", "his", "she", "her"),
        *("hers", "they", "them", "their", "theirs", "themselves", "ll", "ve", "re"),
    }
)
"""Words that carry no memory on their own (compared by their :func:`~.text.stem`)."""

_FILLER_STEMS = frozenset(stem(word) for word in FILLER_WORDS)
PREFERENCE = re.compile(
    r"(?i:\b(?:prefer(?:s|red)?|favou?rite|from now on)\b)"
    r"|(?:\b(?i:i|we|you|he|she|they)|\b[A-Z][a-z]+)\s+(?i:(?:really|also|truly)\s+)?"
    r"(?i:(?:like|love|hate|dislike|enjoy)[sd]?)\b"
)
DECISION = re.compile(r"\b(?:decided|decide|decision|agreed|chose|settled on)\b", re.I)
PROCEDURE = re.compile(
    r"\bhow to\b|\A(?:to \w+[^,]*, )?(?:run|use|install|set|call|open|restart|check|add) ", re.I
)
EVENT = re.compile(r"\b(?:did|ran|tried|failed|succeeded|happened|deployed|fixed|broke|met|went)\b", re.I)
_SPEAKER = re.compile(r"\A(?P<speaker>[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,3}): (?P<rest>\S.*)\Z", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True, slots=True)
class Candidate:
    """Text an operator suggests for one archived line; :mod:`.distill` makes the record.

    Attributes:
        anchor: The line's anchor ``archive/YYYY-MM-DD.md#mem-YYYY-MM-DD-NNN``.
        text: The body to propose (one statement from the line, not rewritten by the heuristic).
        type: A record type word of either vocabulary (``fact``, ``episode``, ``procedure``,
            ``preference``, ``semantic`` …; DESIGN.md §2).
        tags: Labels (``decision``…); a ``preference`` type adds its own tag.
        scope: Seed 000's Scope, when the text says (``user-preference``).
        confidence: In [0, 1].
        provenance_kind: ``distill`` (the heuristic) or ``generated`` (a model's text, seed 003).
        epistemic_status: ``inferred`` for generated text; ``None`` when the text is the line's own.
        rule: Which rule chose the type (for the report).
    """

    anchor: str
    text: str
    type: str = "fact"
    tags: tuple[str, ...] = ()
    scope: Scope | None = None
    confidence: float = 0.9
    provenance_kind: str = "distill"
    epistemic_status: EpistemicStatus | None = None
    rule: str = ""


@dataclass(slots=True)
class Extraction:
    """What an operator made of a batch of lines.

    Attributes:
        candidates: Suggested texts, each naming its line's anchor.
        skipped: ``{anchor: reason}`` for lines read and found to hold nothing to keep; such
            a line counts as distilled (it is not read again).
        rejected: ``(anchors, reason)`` for output refused (a bad model reply); those lines
            are not distilled yet and are read again by the next run.
    """

    candidates: list[Candidate] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    rejected: list[tuple[tuple[str, ...], str]] = field(default_factory=list)


class DistillOperator(Protocol):
    """Reads archived lines and suggests texts; never writes (DESIGN.md §4 "operators").

    Attributes:
        name: ``heuristic``, ``llm`` … (logged with each run).
        model: The model asked, or ``None`` for a deterministic operator (logged).
    """

    name: str
    model: str | None

    def extract(self, lines: Sequence[InboxItem]) -> Extraction:
        """Return candidates, skips and rejections for ``lines`` (all of them accounted for)."""
        ...


def substantive_terms(text: str) -> frozenset[str]:
    """Return the stemmed content terms of ``text`` outside :data:`FILLER_WORDS`, two letters or more."""
    terms, _ = content_terms(text)
    return frozenset(t for t in terms if len(t) >= 2 and t not in _FILLER_STEMS)


def grounded(text: str, line_text: str, *, share: float = 0.5) -> bool:
    """Return whether at least ``share`` of ``text``'s content terms occur in the line it came from.

    The check a model's candidate must pass (seed 000 §14.1: "do not invent facts not present
    in the archive"); a text without content terms is not grounded.
    """
    terms, _ = content_terms(text)
    if not terms:
        return False
    source, _ = content_terms(line_text)
    return len(terms & source) >= share * len(terms)


def _classify(text: str) -> tuple[str, tuple[str, ...], Scope | None, str]:
    if PREFERENCE.search(text):
        return "preference", (), Scope.USER_PREFERENCE, "preference"
    if DECISION.search(text):
        return "fact", ("decision",), None, "decision"
    if PROCEDURE.search(text):
        return "procedure", (), None, "procedure"
    if EVENT.search(text):
        return "episode", (), None, "event"
    return "fact", (), None, "fact"


class HeuristicOperator:
    """The default distill operator: the deterministic rules of the module docstring (no model)."""

    name = "heuristic"
    model: str | None = None

    def extract(self, lines: Sequence[InboxItem]) -> Extraction:
        """Return one candidate per line that holds something to keep; skip the rest with a reason."""
        result = Extraction()
        for item in lines:
            if item.kind is Kind.STATE:
                result.candidates.append(Candidate(item.anchor, item.text, rule="state"))
                continue
            kept = self.keep(item.text)
            if kept is None:
                result.skipped[item.anchor] = "chit-chat or questions only: no content terms (rule 3)"
                continue
            type_, tags, scope, rule = _classify(kept)
            result.candidates.append(Candidate(item.anchor, kept, type_, tags, scope, rule=rule))
        return result

    @staticmethod
    def keep(text: str) -> str | None:
        """Return the sentences of ``text`` worth keeping (rules 2-4), or ``None`` when none is."""
        speaker, rest = "", text
        match = _SPEAKER.match(text)
        if match is not None:
            speaker, rest = match["speaker"] + ": ", match["rest"]
        sentences = [s for s in _SENTENCE_END.split(rest.strip()) if s]
        kept = [s for s in sentences if not s.endswith("?") and len(substantive_terms(s)) >= MIN_TERMS]
        if not kept:
            return None
        if len(kept) == len(sentences):
            return text  # every sentence kept: the line's own text, byte for byte
        return speaker + " ".join(kept)
