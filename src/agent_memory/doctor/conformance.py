"""The conformance report of ``agent-memory doctor``: seed 000 §20 level, §21 checklist, seed 003 MUSTs.

Everything is computed from the Home as it stands (:mod:`agent_memory.doctor.checklist` judges
each item); nothing is written.

Invariant: the level is the highest ``memory:Ln`` whose criteria, and those of every
lower level, the Home meets; a §21 item tagged above that level is ``not-applicable``
(with what was found, so nothing is hidden), except items 11 and 19, which the level
criteria read and which are always reported as found.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_memory.doctor.checklist import NA, PASS, HomeFacts, Item, checklist, golden_count, musts
from agent_memory.home import Home

__all__ = ["Conformance", "Item", "conformance"]


@dataclass(frozen=True, slots=True)
class Conformance:
    """The level met and every item's verdict.

    Attributes:
        level: The highest ``memory:L0``-``L5`` level met (0-5), or ``None`` below L0.
        levels: Per level ``L0``-``L5``: ``(met, reason)``.
        checklist: Seed 000 §21 items 1-21.
        musts: Seed 003's MUSTs (and its one SHOULD), in order.
    """

    level: int | None
    levels: tuple[tuple[bool, str], ...]
    checklist: tuple[Item, ...]
    musts: tuple[Item, ...]

    @property
    def label(self) -> str:
        """``memory:L<n>``, or ``below memory:L0``."""
        return "below memory:L0" if self.level is None else f"memory:L{self.level}"

    def to_json(self) -> dict[str, Any]:
        """Return ``{"level", "levels": [{"level", "met", "reason"}], "checklist", "musts"}``."""
        return {
            "level": self.label,
            "levels": [
                {"level": f"memory:L{n}", "met": m, "reason": r} for n, (m, r) in enumerate(self.levels)
            ],
            "checklist": [item.to_json() for item in self.checklist],
            "musts": [item.to_json() for item in self.musts],
        }


def conformance(home: Home) -> Conformance:
    """Compute the conformance report of ``home`` (read-only; seed 000 §20-§21, seed 003).

    Returns:
        The level met, the reasons per level, the 21 checklist items and seed 003's MUSTs.
        A damaged note, log or view makes the items that depend on it fail with the reason.
    """
    facts = HomeFacts(home)
    checks = checklist(facts)
    levels = _levels(facts, {item.ref: item for item in checks})
    level = None
    for number, (met, _) in enumerate(levels):
        if not met:
            break
        level = number
    applicable = [_applicable(item, tag, level) for item, tag in zip(checks, _TAGS, strict=True)]
    return Conformance(level, tuple(levels), tuple(applicable), tuple(musts(facts)))


# §21's level tags, item by item (untagged items apply from memory:L0).
_TAGS = (0, 1, 0, 3, 3, 1, 1, 1, 4, 4, 0, 0, 5, 5, 5, 5, 0, 0, 1, 1, 0)


# The items the level criteria themselves read: their failure is why a level is not met,
# so it is reported as found, never hidden as not-applicable.
_LEVEL_ITEMS = frozenset({"000 §21.11", "000 §21.19"})


def _applicable(item: Item, tag: int, level: int | None) -> Item:
    if (level is not None and tag <= level) or item.ref in _LEVEL_ITEMS:
        return item
    met = "below memory:L0" if level is None else f"memory:L{level}"
    note = f"applies from memory:L{tag}; this Home meets {met} (found: {item.status}: {item.reason})"
    return Item(item.ref, item.text, NA, note)


def _levels(f: HomeFacts, items: dict[str, Item]) -> list[tuple[bool, str]]:
    def need(*parts: tuple[bool, str]) -> tuple[bool, str]:
        missing = [why for ok, why in parts if not ok]
        return (not missing, "; ".join(missing) if missing else "; ".join(why for _, why in parts))

    l0 = need(
        ((f.root / "MEMORY.md").is_file(), "MEMORY.md present"),
        (items["000 §21.11"].status == PASS, "captured items carry the minimum schema (§21.11)"),
    )
    l1 = need(
        (not f.store_problems, "notes/ holds the structured store and every note parses"),
        (bool(f.index), "index.md rendered"),
        ((f.root / "topics").is_dir(), "topics/ present"),
        ((f.root / "archive").is_dir() and not f.archive_problems, "archive/ present and append-only"),
        (not f.log_error, "the operation log verifies"),
        (items["000 §21.19"].status == PASS, "withdrawal controls read and honoured by the views"),
    )
    l2 = need((f.actions["archive-inbox"] > 0, "the inbox has been archived by archive-inbox"))
    l3 = need((f.actions["distill"] + f.actions["consolidate"] > 0, "a distill or consolidate pass has run"))
    l4 = need(
        (f.actions["review"] > 0, "review events are logged"),
        (golden_count(f) > 0, "golden.yaml holds fresh-session recall tests"),
    )
    l5 = need((f.actions["feedback"] + f.actions["outcome"] > 0, "retrieval outcomes are recorded"))
    return [l0, l1, l2, l3, l4, l5]
