"""Topic pages ``topics/*.md`` (seed 000 §11): which records form a topic, and the page text.

Grouping is deterministic (:func:`topic_of`): a record's first tag; else, for a ``state``
record, its subject up to the first ``:`` (``host:staging`` → ``host``); else its type
(``facts``, ``episodes``, ``procedures``, ``rules``); each slugified (:func:`slugify`), so two
spellings of one word share a page. A page lists every exposed record of its topic by
category (:func:`agent_memory.jobs.pages.category`): superseded, archived and rejected records
stay on it as history, never dropped.

Triggers (when to read the topic, seed 000 §10) are derived from the records alone: the
subjects of usable state records, the other tags they carry, then their most frequent words
of four letters or more (ties alphabetical), at most 12. Quarantined and rejected records
contribute no trigger, so their words never reach ``index.md``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from datetime import date, tzinfo

from agent_memory.jobs.inert import inert_code, inert_inline
from agent_memory.jobs.pages import (
    CATEGORIES,
    GENERATED,
    Entry,
    TopicSummary,
    category,
    day_of,
    newest_first,
    row,
)
from agent_memory.records.record import Kind, MemoryRecord, RecordType

__all__ = ["TopicSummary", "slugify", "summarize", "topic_of", "topic_page"]

_WORD = re.compile(r"\w{4,}")
_ARCHIVE_DAY = re.compile(r"\Aarchive/(\d{4}-\d{2}-\d{2})\.md(?:#|\Z)")
# Frequent words of four letters or more that say nothing about when to read a topic.
_STOPWORD_TEXT = (
    "about after again also because been before being both could does doing each from have having here "
    "into just like made more most much must only other over same should some such than that "
    "their them then there these they this those through under until very were what when where "
    "which while will with would your uses used using"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_MAX_TRIGGERS = 12
_TYPE_TOPICS = {
    RecordType.FACT: "facts",
    RecordType.EPISODE: "episodes",
    RecordType.PROCEDURE: "procedures",
    RecordType.RULE: "rules",
}


def summarize(slug: str, entries: Sequence[Entry], zone: tzinfo) -> TopicSummary:
    """Return the :class:`TopicSummary` of one topic's entries (at least one)."""
    counts = Counter(category(entry) for entry in entries)
    usable = [e for e in entries if category(e) in ("current", "cleanup")]
    triggers: list[str] = sorted({e.record.subject for e in usable if e.record.subject})
    tags = Counter(tag for e in usable for tag in e.record.tags if slugify(tag) != slug)
    triggers += [tag for tag, _ in sorted(tags.items(), key=lambda kv: (-kv[1], kv[0]))]
    words = Counter(
        word
        for e in usable
        for word in _WORD.findall(e.record.body.casefold())
        if word not in _STOPWORDS and not word.isdigit()
    )
    triggers += [word for word, _ in sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))]
    unique = list(dict.fromkeys(t for t in triggers if t))[:_MAX_TRIGGERS] or [slug]
    return TopicSummary(
        slug=slug,
        title=slug.replace("-", " ").capitalize(),
        triggers=tuple(unique),
        counts={word: counts.get(word, 0) for word in CATEGORIES},
        last_updated=max(day_of(e.record.updated_at or e.record.created_at, zone) for e in entries),
        source_dates=tuple(sorted({_source_day(e.record, zone) for e in entries})),
    )


def topic_page(summary: TopicSummary, entries: Sequence[Entry], *, zone: tzinfo) -> str:
    """Return one topic page (seed 000 §11): frontmatter, summary, and its entries by category.

    Frontmatter values are JSON (valid YAML), so no value can be misread. Sections: facts and
    lessons (current), pending cleanup (disputes side by side, stale marks, flagged rules),
    awaiting review (quarantined, marked), history (superseded, archived, rejected; kept as
    history, never dropped).
    """

    def dump(value: object) -> str:
        return json.dumps(value, ensure_ascii=False)

    counts = summary.counts
    lines = [
        "---",
        f"title: {dump(summary.title)}",
        'layer: "warm"',
        f"triggers: {dump(list(summary.triggers))}",
        f"last_updated: {dump(summary.last_updated.isoformat())}",
        f"source_dates: {dump([d.isoformat() for d in summary.source_dates])}",
        "---",
        GENERATED,
        f"# {summary.title}",
        "",
        "## Summary",
        "",
        f"Read when the task involves: {inert_inline(', '.join(summary.triggers))}. "
        f"{counts['current']} current item(s), {counts['cleanup']} disputed or marked, "
        f"{counts['review']} awaiting review, {counts['history']} in history.",
    ]
    by_category = {word: [e for e in entries if category(e) == word] for word in CATEGORIES}
    titles = {
        "current": "Facts and lessons",
        "cleanup": "Pending cleanup",
        "review": "Awaiting review",
        "history": "History",
    }
    for word in CATEGORIES:
        chosen = by_category[word]
        if not chosen:
            continue
        lines += ["", f"## {titles[word]}", ""]
        if word == "cleanup":
            lines += _cleanup_rows(chosen, zone)
        else:
            lines += [row(e, zone) for e in newest_first(chosen)]
    return "\n".join(lines) + "\n"


def topic_of(record: MemoryRecord) -> str:
    """Return the topic stem of a record (rules in the module docstring)."""
    if record.tags:
        return slugify(record.tags[0])
    if record.effective_kind is Kind.STATE and record.subject:
        return slugify(record.subject.split(":", 1)[0])
    return _TYPE_TOPICS[record.type]


def slugify(word: str) -> str:
    """Return a topic file stem: NFC, case-folded, runs of non-word characters as ``-``, ≤ 60 characters."""
    slug = re.sub(r"[\W_]+", "-", unicodedata.normalize("NFC", word).casefold()).strip("-")
    return slug[:60].strip("-") or "misc"


def _cleanup_rows(entries: Sequence[Entry], zone: tzinfo) -> list[str]:
    by_id = {e.record.id: e for e in entries}
    lines: list[str] = []
    done: set[str] = set()
    for entry in newest_first(entries):
        record = entry.record
        if record.id in done:
            continue
        if record.transition is None:
            lines.append(row(entry, zone))
            done.add(record.id)
            continue
        sides = [by_id[s] for s in record.transition.sides if s in by_id]
        done.update(record.transition.sides)
        subject = inert_code(f"subject: {record.subject}")
        header = f"Conflict on {subject}:" if record.subject else "Conflict (knowledge):"
        lines.append(f"- {header}")
        lines += [row(side, zone, "  ") for side in sides]
        lines += [
            f"  - the other side, {s}, is in another topic" for s in record.transition.sides if s not in by_id
        ]
    return lines


def _source_day(record: MemoryRecord, zone: tzinfo) -> date:
    for ref in (record.provenance.ref, *(record.sources or ())):
        match = _ARCHIVE_DAY.match(ref or "")
        if match:
            try:
                return date.fromisoformat(match[1])
            except ValueError:
                continue
    return day_of(record.created_at, zone)
