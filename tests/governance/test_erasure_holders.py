"""Erasure reaches every holder of a Home, and its receipt agrees with an independent scan (issue 6).

One Home holds a unique text in every place agent-memory writes it: a note, the inbox, an
archive segment, a pending consolidation proposal, a promotion proposal, a policy proposal,
the views, the indexes and salience sidecar, a MemoryFile in the Home, a MemoryFile exported
outside it (known from the log), the main branch and a maintenance branch. After ``erase``
the scan of :mod:`erasure_scan` (files; git objects decompressed with zlib and through
``git cat-file``; each ref's commits) must find the text exactly where the receipt says it is
not ``completed``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from erasure_scan import places, scan

from agent_memory.governance.erasure.receipt import ErasureReceipt
from agent_memory.governance.erasure.sanitize import is_redacted
from agent_memory.governance.erasure.sweep import export_location
from agent_memory.home import Home
from agent_memory.jobs.archive import archive_inbox, archived_items, check_archive, find_anchor
from agent_memory.jobs.branches import commit_maintenance_branch
from agent_memory.jobs.inbox import capture
from agent_memory.jobs.pending import PENDING_FOLDER, load_pending
from agent_memory.memory import Memory
from agent_memory.search.recipes import SearchSettings, splice_search
from agent_memory.transfer.exchange import export_memory_file
from memory.conftest import T0, at

UNIQUE = "Zanzibar-quokka-7731 lives at the old lighthouse"
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def bare_home(tmp_path: Path, *, git: bool = False) -> Path:
    """A Home searched by BM25 and hashed vectors only (no model to load)."""
    root = tmp_path / "home"
    Home.init(root, git=git, now=T0)
    toml = root / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25", "vectors-hash"))), "utf-8")
    return root


def not_completed(receipt: ErasureReceipt) -> set[str]:
    """The file and git holders the receipt does not call completed (records and stores aside)."""
    return {
        h.holder_ref
        for h in receipt.holders
        if h.result != "completed" and not h.holder_ref.startswith(("record:", "store:", "export:"))
    }


@dataclass
class Planted:
    root: Path
    outside: Path
    anchor: str
    ids: list[str]
    kept: str
    branch: str


def plant(tmp_path: Path) -> Planted:
    """Write UNIQUE into every holder of a git Home; commit it on main and on a maintenance branch."""
    root = bare_home(tmp_path, git=True)
    home = Home.open(root)
    item = capture(home, UNIQUE, source="chat-1", at=T0)
    capture(home, "Tea is served at four.", source="chat-1", at=T0)
    archive_inbox(home, now=at(0, hours=1))
    capture(home, f"Seen again: {UNIQUE} today", source="chat-2", at=at(0, hours=2))
    outside = tmp_path / "backup" / "all.json"
    outside.parent.mkdir()
    with Memory.open(root) as memory:
        first = memory.remember(UNIQUE, source=item.anchor, now=T0).record_id
        near = memory.remember(UNIQUE + ".", source="chat-3", now=T0).record_id
        kept = memory.remember("The staging host is db-2.", source="chat-1", now=T0).record_id
        assert memory.recall("Zanzibar quokka lighthouse", now=at(1)).ids
        report = memory.maintenance.consolidate(now=at(1))
        assert report.proposals, "a near-duplicate merge proposal quoting the text"
        memory.promotions.propose(first, reason="confirmed twice", now=at(1))
        memory.metamemory.propose_policy_change(
            "recall.weights", f"Boost notes like {UNIQUE}", [first], expected_benefit="b", risk="r", now=at(1)
        )
        exported = export_memory_file(memory.store, keys=memory.identity, now=at(1), log=memory.log)
        (root / "exports").mkdir()
        (root / "exports" / "all.json").write_bytes(exported.dumps())
        outside.write_bytes(exported.dumps())
        where = export_location(root, outside)  # as `agent-memory export` logs it: with this Home's root
        memory.log.append("export", actor="owner", details={**where, "records": 3})
        from agent_memory.jobs.views import render

        render(home)
    home.commit("before erasure")
    branch = commit_maintenance_branch(root, home.store(), report.proposals, now=at(1, hours=1))
    assert branch is not None
    return Planted(root, outside, item.anchor, [first, near], kept, branch)


@needs_git
@pytest.mark.parametrize("rewrite_git", [False, True], ids=["git-kept", "git-rewritten"])
def test_every_holder_is_cleaned_and_the_receipt_agrees_with_the_scan(
    tmp_path: Path, rewrite_git: bool
) -> None:
    planted = plant(tmp_path)
    root = planted.root
    before = places(root, UNIQUE)
    assert {"notes/", "archive/", "inbox.md", "proposals/", "views", "indexes", "exports/"} <= before
    assert {"git-history", "git:refs/heads/main", f"git:refs/heads/{planted.branch}"} <= before
    with Memory.open(root) as memory:
        first, near = planted.ids
        receipt = memory.erase(
            [first],
            cascade=[near],
            reason="user request",
            authority="ticket-42",
            rewrite_git=rewrite_git,
            now=at(2),
        )
    wire = json.dumps(receipt.to_wire())
    assert "Zanzibar" not in wire and "quokka" not in wire and "lighthouse" not in wire
    after = places(root, UNIQUE)
    assert after == not_completed(receipt)
    assert after == (set() if rewrite_git else {p for p in before if p.startswith("git")})
    by_ref = {h.holder_ref: h for h in receipt.holders}
    for area in ("notes/", "archive/", "inbox.md", "proposals/", "pending", "views", "indexes", "salience"):
        assert by_ref[area].result == "completed", area
    assert by_ref[f"export:{planted.outside}"].result == "completed"
    assert UNIQUE.encode() not in planted.outside.read_bytes()
    assert by_ref["git-history"].result == ("completed" if rewrite_git else "partially-completed")
    if not rewrite_git:
        assert by_ref["git-history"].limitation_ref == "git-history-not-rewritten"
    assert {"archive/2026-11-01.md", "inbox.md", "exports/all.json", str(planted.outside)} <= set(
        receipt.sanitized_replacement_refs
    )
    assert [ref.split("/")[1] for ref in receipt.removed_refs] == ["pending-consolidation"]
    assert load_pending(root / PENDING_FOLDER) == []
    assert Home.open(root).store().get(planted.kept).body == "The staging host is db-2."


@needs_git
def test_an_archive_line_keeps_its_id_and_anchor_and_the_ledger_follows_the_lineage(tmp_path: Path) -> None:
    planted = plant(tmp_path)
    home = Home.open(planted.root)
    segment_before = archived_items(home, T0.date())
    with Memory.open(planted.root) as memory:
        receipt = memory.erase(planted.ids, reason="user request", authority="ada", now=at(2))
    item = find_anchor(home, planted.anchor)
    assert item.id == planted.anchor.split("#")[1] and item.text == f"(erased by {receipt.erasure_id})"
    assert item.source == "source-erased" and is_redacted(item)
    assert not is_redacted(archived_items(home, T0.date())[1])
    assert [i.id for i in archived_items(home, T0.date())] == [i.id for i in segment_before]
    assert archived_items(home, T0.date())[1].raw == segment_before[1].raw  # the other line is kept
    (lineage,) = receipt.archive_lineage
    assert lineage.items == (planted.anchor.split("#")[1],)
    ((old, new),) = lineage.segments
    data = (planted.root / "archive" / "2026-11-01.md").read_bytes()
    assert (new.offset, new.length, new.sha256) == (0, len(data), hashlib.sha256(data).hexdigest())
    assert old.sha256 != new.sha256 and (old.offset, old.length) != (new.offset, new.length)
    assert check_archive(home) == []
    logged = [e for e in home.log().entries() if e.action == "erase"]
    assert logged[-1].details["archive_lineage"] == [lineage.to_json()]
    # The archive stays append-only afterwards: a new run appends; a hand edit is still caught.
    capture(home, "Lunch is at noon.", source="chat-9", at=at(0, hours=3))
    archive_inbox(home, now=at(0, hours=4))
    assert check_archive(home) == []
    path = planted.root / "archive" / "2026-11-01.md"
    path.write_bytes(path.read_bytes().replace(b"Tea is served", b"Tea IS served"))
    assert [p.kind for p in check_archive(home)] == ["edited"]


def test_only_the_erased_words_leave_a_line_that_merely_quotes_them(tmp_path: Path) -> None:
    root = bare_home(tmp_path)
    home = Home.open(root)
    capture(home, f"Ada said {UNIQUE} twice", source="chat-1", at=T0)
    archive_inbox(home, now=at(0, hours=1))
    with Memory.open(root) as memory:
        gone = memory.remember(UNIQUE, source="chat-7", now=T0).record_id
        receipt = memory.erase([gone], reason="user request", authority="ada", now=at(1))
    (line,) = archived_items(home, T0.date())
    assert line.text == f"Ada said (erased by {receipt.erasure_id}) twice" and line.source == "chat-1"
    assert receipt.complete and scan(root, UNIQUE) == set() and check_archive(home) == []


def test_a_record_sourced_from_a_redacted_line_is_disclosed_as_losing_its_source(tmp_path: Path) -> None:
    root = bare_home(tmp_path)
    home = Home.open(root)
    item = capture(home, UNIQUE, source="chat-1", at=T0)
    archive_inbox(home, now=at(0, hours=1))
    with Memory.open(root) as memory:
        gone = memory.remember(UNIQUE, source=item.anchor, now=T0).record_id
        other = memory.remember("A lighthouse keeper was mentioned.", source=item.anchor, now=T0).record_id
        receipt = memory.erase([gone], reason="user request", authority="ada", now=at(1))
    holder = {h.holder_ref: h for h in receipt.holders}[f"record:{other}"]
    assert (holder.result, holder.limitation_ref) == ("completed", "source-anchor-erased")
    assert scan(root, UNIQUE) == set()


def test_hand_edited_views_lose_the_text_without_losing_the_edit(tmp_path: Path) -> None:
    root = bare_home(tmp_path)
    from agent_memory.jobs.views import render

    with Memory.open(root) as memory:
        gone = memory.remember(UNIQUE, source="s", now=T0).record_id
        render(Home.open(root))
        index = root / "index.md"
        index.write_bytes(index.read_bytes() + b"\nMy own note.\n")
        receipt = memory.erase([gone], reason="user request", authority="ada", now=at(1))
    assert b"My own note." in index.read_bytes() and scan(root, UNIQUE) == set()
    assert {h.holder_ref: h.result for h in receipt.holders}["views"] == "completed"
    assert "index.md" in receipt.sanitized_replacement_refs


def test_residue_the_erasure_must_not_touch_is_reported_where_the_scan_finds_it(tmp_path: Path) -> None:
    root = bare_home(tmp_path)
    with Memory.open(root) as memory:
        gone = memory.remember(UNIQUE, source="s", now=T0).record_id
        short = memory.remember("db-9", source="s", now=T0).record_id
        conventions = root / "conventions.md"
        conventions.write_text(conventions.read_text("utf-8") + f"\n- {UNIQUE}\n", "utf-8")
        (root / "notes.txt").write_text(f"copied by hand: {UNIQUE}\n", "utf-8")
        capture(Home.open(root), "Move the cache to db-9 soon.", source="chat", at=T0)
        memory.log.append("export", actor="owner", details={"path": "../relative/out.json", "records": 1})
        first = memory.erase([gone], reason="user request", authority="ada", now=at(1))
        second = memory.erase([short], reason="user request", authority="ada", now=at(1, hours=1))
    assert places(root, UNIQUE) == not_completed(first) == {"conventions.md", "notes.txt"}
    holders = {h.holder_ref: h for h in first.holders}
    assert holders["conventions.md"].limitation_ref == "human-owned-file"
    assert holders["notes.txt"].limitation_ref == "unmanaged-file"
    exported = holders["export:../relative/out.json"]
    assert (exported.result, exported.limitation_ref) == ("unevaluated", "export-path-unknown")
    # A short text is never cut out of other text: the inbox line stays whole and is reported.
    assert places(root, "db-9") == not_completed(second) == {"inbox.md"}
    assert {h.holder_ref: h.limitation_ref for h in second.holders}["inbox.md"] == "short-text-kept"


def test_a_sqlite_backed_memory_scans_its_database_files(tmp_path: Path) -> None:
    from agent_memory.log.inmemory import MemoryLog
    from agent_memory.search.catalog import IndexCatalog
    from agent_memory.stores.sqlite import SQLiteStore

    store = SQLiteStore(tmp_path / "memory.sqlite")
    with Memory(store, MemoryLog(), IndexCatalog.in_memory(store)) as memory:
        gone = memory.remember(UNIQUE, source="s", now=T0).record_id
        receipt = memory.erase([gone], reason="user request", authority="ada", now=at(1))
    holder = receipt.holders[0]
    assert (holder.holder_ref, holder.result) == ("store:SQLiteStore", "completed")
    files = [p for p in tmp_path.iterdir() if p.name.startswith("memory.sqlite")]
    assert files and not any(UNIQUE.encode() in p.read_bytes() for p in files)
    store.close()


def test_a_malformed_archive_lineage_in_the_log_is_refused_naming_its_event(tmp_path: Path) -> None:
    from agent_memory.errors import LogError

    root = bare_home(tmp_path)
    home = Home.open(root)
    capture(home, "Tea is served at four.", source="chat-1", at=T0)
    archive_inbox(home, now=at(0, hours=1))
    before = (root / "archive" / "2026-11-01.md").read_bytes()
    entry = home.log().append("erase", actor="owner", details={"archive_lineage": [{"file": "x"}]})
    with pytest.raises(LogError, match="malformed archive_lineage") as info:
        check_archive(home)
    assert info.value.field == f"seq {entry.seq}"
    assert (root / "archive" / "2026-11-01.md").read_bytes() == before
