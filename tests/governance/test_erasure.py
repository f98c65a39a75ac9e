"""Authorized erasure: the receipt agrees with a scan of the whole Home (seed 000 §12.3)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from erasure_scan import places, scan

from agent_memory.errors import LifecycleError, RecordError, RecordNotFound
from agent_memory.governance.actors import Actors, AuthorityError
from agent_memory.governance.erasure.receipt import ErasureReceipt, next_erasure_id
from agent_memory.home import Home
from agent_memory.memory import Memory
from agent_memory.search.recipes import SearchSettings, splice_search
from agent_memory.transfer.exchange import export_memory_file
from memory.conftest import T0, at

UNIQUE = "Zanzibar-quokka-7731 lives at the old lighthouse"


def make_home(path: Path, *, git: bool) -> Path:
    Home.init(path, git=git, now=T0)
    toml = path / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25", "vectors-hash"))), "utf-8")
    return path


def not_completed(receipt: ErasureReceipt) -> set[str]:
    return {
        h.holder_ref
        for h in receipt.holders
        if h.result != "completed" and not h.holder_ref.startswith(("record:", "store:", "export:"))
    }


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_erased_text_is_gone_everywhere_the_receipt_says_and_nowhere_else(tmp_path: Path) -> None:
    root = make_home(tmp_path / "home", git=True)
    with Memory.open(root) as memory:
        kept = memory.remember("The staging host is db-2.", source="session-1", now=T0).record_id
        gone = memory.remember(UNIQUE, source="session-1", tags=("places",), now=T0).record_id
        assert memory.recall("Zanzibar quokka lighthouse", now=at(1)).ids  # indexed and touched
        exported = export_memory_file(memory.store, keys=memory.identity, now=at(1), log=memory.log)
        (root / "exports").mkdir()
        (root / "exports" / "all.json").write_bytes(exported.dumps())
        Home.open(root).commit("before erasure")
        assert {"git-history", "git:refs/heads/main"} <= places(root, UNIQUE)

        receipt = memory.erase([gone], reason="user request", authority="ticket-42", now=at(2))

    assert receipt.erasure_id == "memerase-2026-11-03-001"
    assert receipt.scope_refs == (gone,)
    assert UNIQUE not in json.dumps(receipt.to_wire()) and "Zanzibar" not in json.dumps(receipt.to_wire())
    remaining = places(root, UNIQUE)
    # Where the text still is <=> a holder that is not completed.
    assert remaining == not_completed(receipt) == {"git-history", "git:refs/heads/main"}
    by_ref = {h.holder_ref: h for h in receipt.holders}
    assert by_ref["git-history"].limitation_ref == "git-history-not-rewritten"
    assert by_ref["notes/"].result == by_ref["indexes"].result == by_ref["exports/"].result == "completed"
    assert receipt.sanitized_replacement_refs == ("exports/all.json",)
    logged = [e for e in Home.open(root).log().entries() if e.action == "erase"]
    assert [e.details["erasure_id"] for e in logged] == [receipt.erasure_id]

    # Never back from any index: after a restart, and after deleting .cache and rebuilding.
    for rebuild in (False, True):
        if rebuild:
            shutil.rmtree(root / ".cache")
        with Memory.open(root) as reopened:
            assert gone not in reopened.recall("Zanzibar quokka lighthouse", now=at(3)).ids
            assert list(reopened.recall("staging host", now=at(3)).ids) == [kept]
            assert reopened.get(gone).redacted
    assert places(root, UNIQUE) == {"git-history", "git:refs/heads/main"}


def test_a_home_without_git_reports_every_holder_completed(tmp_path: Path) -> None:
    root = make_home(tmp_path / "home", git=False)
    with Memory.open(root) as memory:
        gone = memory.remember(UNIQUE, source="s", now=T0).record_id
        receipt = memory.erase([gone], reason="user request", authority="ada", now=at(1))
    assert receipt.complete and scan(root, UNIQUE) == set()
    assert "git-history" not in {h.holder_ref for h in receipt.holders}


def test_dependents_are_listed_and_erased_only_when_passed(memory: Memory) -> None:
    gone = memory.remember(UNIQUE, source="s", now=T0).record_id
    quoting = memory.remember(f"Ada said: {UNIQUE}", source="s", now=T0).record_id
    pointing = memory.remember("Derived from that note.", source=gone, now=T0).record_id
    unrelated = memory.remember("Tea at four.", source="s", now=T0).record_id

    first = memory.erase([gone], reason="user request", authority="ada", now=at(1))
    dependents = {h.holder_ref for h in first.holders if h.limitation_ref == "dependent-not-erased"}
    assert {ref for ref in dependents if ref.startswith("record:")} == {
        f"record:{quoting}",
        f"record:{pointing}",
    }
    # In a Home the quoting record keeps the text in its note, the indexes and the views.
    assert dependents - {f"record:{quoting}", f"record:{pointing}"} <= {"notes/", "indexes", "views"}
    assert not first.complete
    assert not memory.get(quoting).redacted and not memory.get(unrelated).redacted

    other = memory.remember("Another note to erase.", source="s", now=at(1)).record_id
    second = memory.erase([other], reason="user request", authority="ada", now=at(1, hours=1))
    assert (first.erasure_id, second.erasure_id) == ("memerase-2026-11-02-001", "memerase-2026-11-02-002")
    with pytest.raises(RecordError, match="does not quote or point"):
        memory.erase([quoting], reason="r", authority="ada", cascade=[unrelated], now=at(4))
    third = memory.erase([quoting], reason="r", authority="ada", now=at(4))
    assert memory.get(quoting).redacted and third.scope_refs == (quoting,)


def test_cascade_erases_the_dependents_named(memory: Memory) -> None:
    gone = memory.remember(UNIQUE, source="s", now=T0).record_id
    quoting = memory.remember(f"Ada said: {UNIQUE}", source="s", now=T0).record_id
    receipt = memory.erase([gone], reason="user request", authority="ada", cascade=[quoting], now=at(1))
    assert receipt.scope_refs == tuple(sorted([gone, quoting]))
    assert memory.get(gone).redacted and memory.get(quoting).redacted
    assert memory.recall("Zanzibar quokka", now=at(2)).ids == ()
    assert receipt.complete


def test_a_refused_erasure_writes_nothing(memory: Memory) -> None:
    gone = memory.remember(UNIQUE, source="s", now=T0).record_id
    head = memory.log.last()
    before = memory.history(gone)
    memory.actor, memory.actors = "agent:claude", Actors(owner="ada")
    with pytest.raises(AuthorityError):
        memory.erase([gone], reason="r", authority="ada", now=at(1))
    memory.actor = "ada"
    with pytest.raises(RecordError, match="reason"):
        memory.erase([gone], reason=" ", authority="ada", now=at(1))
    with pytest.raises(RecordError, match="authority"):
        memory.erase([gone], reason="r", authority="", now=at(1))
    with pytest.raises(RecordError, match="at least one"):
        memory.erase([], reason="r", authority="ada", now=at(1))
    with pytest.raises(RecordNotFound):
        memory.erase([gone, "mem:" + "0" * 32], reason="r", authority="ada", now=at(1))
    assert memory.history(gone) == before and memory.log.last() == head
    memory.erase([gone], reason="r", authority="ada", now=at(1))
    with pytest.raises(LifecycleError, match="already erased"):
        memory.erase([gone], reason="r", authority="ada", now=at(2))


def test_erasure_ids_count_per_local_day() -> None:
    assert next_erasure_id([], "2026-11-29") == "memerase-2026-11-29-001"
    taken = ["memerase-2026-11-29-001", "memerase-2026-11-29-007", "memerase-2026-11-28-009", ""]
    assert next_erasure_id(taken, "2026-11-29") == "memerase-2026-11-29-008"
