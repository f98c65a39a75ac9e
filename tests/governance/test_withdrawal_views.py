"""Withdrawal fails closed on the views, hand edits included (DESIGN.md §4, §9; seed 000 §12.2).

Withdraw, forget and erase all go through one view path
(:func:`agent_memory.jobs.view_scrub.refresh_views`): untouched views are rendered again and a
view edited by hand loses exactly the lines that show a withdrawn record.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_memory.errors import StoreError
from agent_memory.home import Home
from agent_memory.jobs.view_scrub import WithdrawnMarks, drop_lines
from agent_memory.jobs.views import check_views, render
from agent_memory.memory import Memory
from agent_memory.search.recipes import SearchSettings, splice_search
from memory.conftest import T0, at

DARK = "User prefers dark mode in every editor."
TABS = "User prefers tabs over spaces."
TERSE = "User prefers terse answers without preamble."


def bare_home(tmp_path: Path) -> Path:
    """A Home searched by BM25 and hashed vectors only (no model to load), without git."""
    root = tmp_path / "home"
    Home.init(root, git=False, now=T0)
    toml = root / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25", "vectors-hash"))), "utf-8")
    return root


def views_text(root: Path) -> str:
    files = [root / "MEMORY.md", root / "index.md", *sorted((root / "topics").glob("*.md"))]
    return "".join(path.read_text("utf-8") for path in files if path.is_file())


def three_preferences(memory: Memory) -> tuple[str, str, str]:
    return tuple(  # type: ignore[return-value]
        memory.remember(text, type="preference", source="chat", now=T0).record_id
        for text in (DARK, TABS, TERSE)
    )


def test_a_withdrawal_takes_the_record_out_of_a_hand_edited_view_and_keeps_the_other_edits(
    tmp_path: Path,
) -> None:
    root = bare_home(tmp_path)
    with Memory.open(root) as memory:
        dark, tabs, terse = three_preferences(memory)
        render(Home.open(root))
        hot = root / "MEMORY.md"
        with hot.open("a", encoding="utf-8") as handle:
            handle.write(f"- my hand note\n- copied by hand: {DARK}\n")
        memory.withdraw(memory_item_ids=[dark], reason="private", now=at(1))
        note = memory.withdrawals.views_note
    text = views_text(root)
    assert dark not in text and DARK not in text
    memory_md = hot.read_text("utf-8")
    assert "- my hand note\n" in memory_md and tabs in memory_md and terse in memory_md
    # The untouched views were rendered at once: only the hand-edited one is still an edit.
    assert [p.path for p in check_views(Home.open(root))] == ["MEMORY.md"]
    assert note is not None and "MEMORY.md" in note and "removed 2 line(s)" in note
    assert "re-rendered index.md, topics/preference.md" in note


def test_a_withdrawal_with_no_hand_edit_re_renders_and_says_nothing(tmp_path: Path) -> None:
    root = bare_home(tmp_path)
    with Memory.open(root) as memory:
        dark, _, _ = three_preferences(memory)
        render(Home.open(root))
        memory.withdraw(memory_item_ids=[dark], reason="private", now=at(1))
        assert memory.withdrawals.views_note is None
    assert DARK not in views_text(root) and check_views(Home.open(root)) == []


def test_a_hand_made_topic_page_loses_the_lines_naming_a_withdrawn_record(tmp_path: Path) -> None:
    root = bare_home(tmp_path)
    with Memory.open(root) as memory:
        dark, tabs, _ = three_preferences(memory)
        render(Home.open(root))
        mine = root / "topics" / "mine.md"
        mine.write_text(f"# Mine\n\nsee {dark}\nsee {tabs}\n", "utf-8")
        memory.withdraw(memory_item_ids=[dark], reason="private", now=at(1))
    assert mine.read_text("utf-8") == f"# Mine\n\nsee {tabs}\n"


def test_forget_says_what_it_did_to_a_hand_edited_view(tmp_path: Path) -> None:
    root = bare_home(tmp_path)
    with Memory.open(root) as memory:
        _, tabs, _ = three_preferences(memory)
        render(Home.open(root))
        with (root / "index.md").open("a", encoding="utf-8") as handle:
            handle.write("my index note\n")
        receipt = memory.withdrawals.forget(memory_item_ids=[tabs], now=at(1))
    assert TABS not in views_text(root) and tabs not in views_text(root)
    assert "my index note\n" in (root / "index.md").read_text("utf-8")
    assert receipt.withdrawal_id is not None
    assert "views edited by hand (index.md)" in receipt.lines["Memory"]


def test_an_erasure_also_drops_lines_a_hand_edit_copied_from_a_withdrawn_record(tmp_path: Path) -> None:
    root = bare_home(tmp_path)
    with Memory.open(root) as memory:
        dark, tabs, _ = three_preferences(memory)
        render(Home.open(root))
        memory.withdraw(memory_item_ids=[dark], reason="private", now=at(1))
        hot = root / "MEMORY.md"
        with hot.open("a", encoding="utf-8") as handle:
            handle.write(f"- mine: {DARK}\n- my hand note\n")
        receipt = memory.erase([tabs], reason="user request", authority="ada", now=at(2))
    memory_md = hot.read_text("utf-8")
    assert DARK not in memory_md and TABS not in views_text(root) and "- my hand note\n" in memory_md
    assert "MEMORY.md" in receipt.sanitized_replacement_refs
    assert {h.holder_ref: h.result for h in receipt.holders}["views"] == "completed"


def test_views_that_cannot_be_brought_in_line_fail_the_withdrawal_loudly(tmp_path: Path) -> None:
    root = bare_home(tmp_path)
    with Memory.open(root) as memory:
        dark, _, _ = three_preferences(memory)
        render(Home.open(root))
        (note,) = [p for p in (root / "notes").rglob("*.md") if TERSE.encode() in p.read_bytes()]
        note.write_bytes(note.read_bytes().replace(b"terse", b"tense"))
        with pytest.raises(StoreError, match=r"memwd-\S+ is in force .* views could not be updated"):
            memory.withdraw(memory_item_ids=[dark], reason="private", now=at(1))
        assert [c.withdrawal_id for c in memory.controls()] != []


def test_drop_lines_matches_ids_long_texts_and_whole_short_lines_only() -> None:
    marks = WithdrawnMarks(
        ids=frozenset({b"mem:abc"}), texts=frozenset({b"dark mode everywhere"}), short=frozenset({b"db-9"})
    )
    data = b"keep me\nrow mem:abc here\nI like dark mode everywhere!\n- db-9\nmove db-9 later\ndb-9\n"
    assert drop_lines(data, marks) == (b"keep me\nmove db-9 later\n", 4)
    assert drop_lines(data, WithdrawnMarks()) == (data, 0)
