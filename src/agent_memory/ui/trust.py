"""Why the page believes a record or not, in words a person reads (issue 22: "why a memory is believed").

:func:`trust_of` turns what a record carries (its state, source and writer, signature, taint)
and what is known of it (its review state from the log, a withdrawal in force) into a verdict,
a one-sentence headline and one line per aspect. Where the CLI already words a thing, these
are its words: recall's reasons (:func:`agent_memory.recall.select.review_reasons`, printed by
``agent-memory recall``), the prompt block's ``Source: … (none recorded)``, ``superseded —
kept for history`` and ``quarantined (taint: …; unreviewed)``, ``agent-memory approve``'s
"not tainted, so it … needs no approval", ``remember``'s "resolve with agent-memory resolve".

Invariant: reads only. The signature is checked here again
(:meth:`~agent_memory.stores.verified.Signers.check`), so the page never says a signature
verifies unless it just did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_memory.errors import SignatureError
from agent_memory.recall.select import review_reasons
from agent_memory.records.record import Kind, State
from agent_memory.stores.verified import Signers

if TYPE_CHECKING:
    from agent_memory.records.record import MemoryRecord

__all__ = ["VERDICTS", "Aspect", "Trust", "trust_of"]

VERDICTS = ("believed", "doubted", "history", "not believed")
"""The verdict words, from most to least trusted but ``history`` (true once, replaced since)."""


@dataclass(frozen=True, slots=True)
class Aspect:
    """One reason for or against believing a record.

    Attributes:
        topic: ``status``, ``source``, ``signature``, ``taint``, ``review``, ``recall``,
            ``withdrawal``, ``dispute`` or ``erasure``.
        text: The reason, a sentence for a person.
        doubt: True when it counts against believing the record.
    """

    topic: str
    text: str
    doubt: bool = False


@dataclass(frozen=True, slots=True)
class Trust:
    """Why a record is believed or not.

    Attributes:
        verdict: One of :data:`VERDICTS`.
        headline: One sentence: the verdict and its main reason.
        aspects: Every reason, in a fixed order (status, source, signature, taint, review,
            what recall says, withdrawal, dispute).
        short: The source, signature and taint in a few words, for a list row.
    """

    verdict: str
    headline: str
    aspects: tuple[Aspect, ...]
    short: str


_NO_KEY = Signers()
"""A store without a signing key: only the signatures versions carry are checked."""


def trust_of(record: MemoryRecord, review: str, withdrawn: str = "", *, signers: Signers = _NO_KEY) -> Trust:
    """Return why ``record`` is believed or not.

    Args:
        record: The version shown (its latest, on every page but a version's diff).
        review: Its review state word (``quarantined``, ``approved``, ``rejected``,
            ``stale``, ``none``, or ``pending`` for a record waiting in ``proposals/pending``).
        withdrawn: Why the withdrawal gate hides it, ``""`` when it is exposed.
        signers: Whose signatures the Home takes, as its verified read path takes them
            (``memory.catalog.signers``): a record of a ``memory.toml [trust]`` signer is
            signed and verifies, one of any other key is not trusted.
    """
    if record.redacted:
        why = record.redaction_reason or "no reason recorded"
        text = f"Erased: {why}. Its content is gone; the receipt remains."
        return Trust("not believed", text, (Aspect("erasure", text, doubt=True),), "erased")
    signature, signature_short, forged = _signature(record, signers)
    source, source_short = _source(record, signers.home)
    taint, taint_short = _taint(record, review)
    aspects = [
        _status(record),
        source,
        signature,
        taint,
        _review(record, review),
        *(Aspect("recall", f"Recall says: {why}.", doubt=True) for why in review_reasons(record, review)),
    ]
    if withdrawn:
        aspects.append(
            Aspect(
                "withdrawal",
                f"Withdrawn ({withdrawn}): recall and the views leave it out until it is reinstated; "
                "a withdrawal is not a verdict on truth.",
                doubt=True,
            )
        )
    if record.transition is not None:
        others = [side for side in record.transition.sides if side != record.id]
        aspects.append(
            Aspect(
                "dispute",
                f"Disputed with {', '.join(others) or 'another record'}: {record.transition.reason}. "
                "Resolve with agent-memory resolve (or keep one side on the Review page).",
                doubt=True,
            )
        )
    verdict, headline = _headline(record, review, withdrawn, forged)
    return Trust(verdict, headline, tuple(aspects), " · ".join((source_short, signature_short, taint_short)))


def _headline(record: MemoryRecord, review: str, withdrawn: str, forged: str) -> tuple[str, str]:
    """Return the verdict and its sentence, the strongest reason first."""
    labels = ", ".join(record.taint or ())
    if forged:
        return "not believed", f"Not trusted: its signature does not verify ({forged})."
    if withdrawn:
        return "not believed", f"Not used: {withdrawn}. It is hidden from recall and the views."
    if review == "rejected":
        return "not believed", "Not believed: rejected by review; kept for the record, not to act on."
    if review == "pending":
        return "doubted", "Not stored yet: held back for review because its subject was disputed."
    if review == "quarantined":
        return "doubted", (
            f"Not trusted yet: quarantined (taint: {labels}; unreviewed). "
            "Recall shows it marked; MEMORY.md leaves it out until a person approves it."
        )
    if record.state is State.TRANSITIONAL:
        reason = record.transition.reason if record.transition else "no reason recorded"
        return "doubted", f"In dispute: {reason}. A person keeps one side."
    if record.state is State.SUPERSEDED:
        by = f" by {record.superseded_by}" if record.superseded_by else ""
        return "history", f"No longer current: superseded{by}, kept for history."
    if record.state is State.ARCHIVED:
        return "history", "No longer current: archived (retired), kept for history."
    if review == "stale":
        return "doubted", "Doubted: marked stale by review; recall weighs it like a superseded record."
    why = "approved by review" if review == "approved" else "active and untainted"
    return "believed", f"Believed: {why}, from {record.provenance.ref or 'an unrecorded source'}."


def _status(record: MemoryRecord) -> Aspect:
    state = record.state
    if state is State.ACTIVE:
        current = (
            f"the current value of {record.subject}"
            if record.effective_kind is Kind.STATE and record.subject
            else "the current version"
        )
        text = f"Status: active, {current}."
    elif state is State.SUPERSEDED:
        by = f" by {record.superseded_by}" if record.superseded_by else ""
        text = f"Status: superseded{by} — kept for history."
    elif state is State.ARCHIVED:
        text = "Status: archived — retired; recall shows it only when asked for archived records."
    else:
        text = "Status: transitional — in dispute; neither side is the current value until resolved."
    if record.state_reason:
        text += f" Why: {record.state_reason}."
    if record.flagged:
        text += f" Flagged: {record.flag_reason or 'no reason recorded'}."
    return Aspect("status", text, doubt=state is not State.ACTIVE or record.flagged)


def _source(record: MemoryRecord, home_signer: str | None) -> tuple[Aspect, str]:
    provenance = record.provenance
    if provenance.agent and provenance.agent == home_signer:
        writer = "written by this Home"
    elif provenance.agent:
        writer = f"written by {provenance.agent}"
    else:
        writer = "the writer is not recorded"
    came = _CAME_BY.get(provenance.kind, f"came by {provenance.kind}")
    text = f"Source: {provenance.ref or '(none recorded)'} — {came}, {writer}."
    extra = len(record.sources or ())
    if extra:
        text += f" {extra} more source(s)."
    if record.evidence:
        text += f" It rests on {len(record.evidence)} other record(s) as evidence."
    if record.epistemic_status is not None:
        text += f" Confidence: {record.confidence:.2f} ({record.epistemic_status.value})."
    short = f"source {provenance.ref}" if provenance.ref else "no source recorded"
    return Aspect("source", text, doubt=not provenance.ref), short


_CAME_BY = {
    "cli": "typed at the command line (agent-memory)",
    "ui": "written on this review page",
    "mcp": "written by an agent through the MCP server",
    "conversation": "written from a conversation",
    "import": "imported",
    "file": "read from a file",
    "correction": "a correction",
    "consolidation": "merged by consolidate from other records",
    "redaction": "left by an erasure",
}
"""``provenance.kind`` words the library writes, for a person; another kind reads ``came by KIND``."""


def _signature(record: MemoryRecord, signers: Signers) -> tuple[Aspect, str, str]:
    """Return the signature's aspect, its few words, and why it fails (``""`` when it does not)."""
    try:
        signers.check(record)
    except SignatureError as exc:
        text = f"Signature: does not verify ({exc.detail}); none of its fields can be trusted."
        return Aspect("signature", text, doubt=True), "signature does not verify", exc.detail
    if not (record.signed_by or record.signature):
        text = "Signature: unsigned — nothing vouches for who wrote it (imported, or written without a key)."
        return Aspect("signature", text, doubt=True), "unsigned", ""
    whose = str(record.signed_by)
    if record.signed_by == signers.home:
        whose = "this Home's key"
    elif record.signed_by in signers.trusted:
        whose += ", a signer memory.toml [trust] names"
    return Aspect("signature", f"Signature: signed by {whose}, and the signature verifies."), "signed", ""


def _taint(record: MemoryRecord, review: str) -> tuple[Aspect, str]:
    if not record.taint:
        return Aspect("taint", "Taint: none — it was not marked as text from outside."), "untainted"
    labels = ", ".join(record.taint)
    approved = review == "approved"
    after = "a person approved it since." if approved else "it waits for a person's review."
    text = f"Taint: {labels} — it came from outside the owner's control; {after}"
    return Aspect("taint", text, doubt=not approved), f"tainted: {labels}"


def _review(record: MemoryRecord, review: str) -> Aspect:
    labels = ", ".join(record.taint or ())
    words = {
        "quarantined": (f"Review: quarantined (taint: {labels}; unreviewed).", True),
        "approved": ("Review: approved by a person.", False),
        "rejected": ("Review: rejected by a person.", True),
        "stale": ("Review: marked stale by a person.", True),
        "pending": ("Review: pending — accept writes it, decline drops it.", True),
    }
    if review in words:
        text, doubt = words[review]
        return Aspect("review", text, doubt)
    return Aspect("review", "Review: none needed — it is not tainted, so it needs no approval.")
