"""Erasure by import goes through the one erase core (issue 18 item b).

A trusted MemoryFile whose tombstone names a record this Home holds live erases it here as
``erase`` would: the same tombstone, an ``erase-intent`` before it and an ``erase`` receipt
after it, dependents listed in the receipt (never erased unasked), the indexes purged and
the Home's file holders swept. An actor without the ``erase`` grant erases nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent_memory.governance.actors import Actors
from agent_memory.home import Home
from agent_memory.jobs.views import render
from agent_memory.memory import Memory
from agent_memory.records.memory_file import MemoryFile
from agent_memory.transfer.exchange import export_memory_file

T0 = datetime(2026, 11, 29, 9, tzinfo=UTC)
GONE = "The old gateway is vpn-1 behind the zq7741 door."


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def _export(home: Home) -> MemoryFile:
    made = export_memory_file(home.store(), keys=home.identity(), log=home.log(), home_signer=home.signer())
    return MemoryFile.loads(made.dumps())


def _homes(tmp_path: Path) -> tuple[Home, Home, dict[str, str]]:
    """Home A holds a record, a dependent pointing at it and an unrelated one; B imported them, trusting A."""
    a = Home.init(tmp_path / "a", git=False, timezone="UTC", now=T0)
    b = Home.init(tmp_path / "b", git=False, timezone="UTC", now=T0)
    toml = b.root / "memory.toml"
    toml.write_text(
        toml.read_text("utf-8").replace("trusted_signers = []", f'trusted_signers = ["{a.signer()}"]'),
        "utf-8",
    )
    b = Home.open(b.root)
    with Memory.open(a.root) as memory:
        gone = memory.remember(GONE, source="chat", now=T0).record_id
        ids = {
            "gone": gone,
            "dependent": memory.remember(
                "The gateway note was written down.", source="chat", evidence=[gone], now=T0
            ).record_id,
            "kept": memory.remember("The build server is ci-7.", source="chat", now=T0).record_id,
        }
    with Memory.open(b.root) as memory:
        assert sorted(memory.import_file(_export(a), path="early.json", now=T0).added) == sorted(ids.values())
    render(b)  # the views hold the text too: the sweep must clean them
    return a, b, ids


def _receipt(home: Home, record_id: str) -> Any:
    (entry,) = [e for e in home.log().entries() if e.action == "erase" and record_id in e.record_ids]
    return entry


def test_a_trusted_files_tombstone_erases_here_with_the_receipt_and_holders_erase_gives(
    tmp_path: Path,
) -> None:
    a, b, ids = _homes(tmp_path)
    with Memory.open(a.root) as memory:
        memory.erase([ids["gone"]], reason="wrong value", authority="ada", now=T0 + timedelta(hours=1))
    later = T0 + timedelta(hours=2)
    with Memory.open(b.root) as memory:
        report = memory.import_file(_export(a), path="late.json", now=later)
        assert report.erased == [ids["gone"]] and report.added == []
        assert memory.get(ids["gone"]).redacted
        assert ids["gone"] not in memory.recall("gateway vpn", now=later).ids
    theirs, ours = _receipt(a, ids["gone"]), _receipt(b, ids["gone"])
    actions = [e.action for e in b.log().entries()]
    assert actions[-3:] == ["erase-intent", "erase", "import"]
    (event,) = [e for e in b.log().entries() if e.action == "import" and e.time == later]
    assert event.details["erasures"] == [ours.details["erasure_id"]]
    assert ours.details["reason"] == theirs.details["reason"] == "wrong value"
    assert ours.details["authority_ref"] == f"MemoryFile signed by {a.signer()} (late.json)"
    holders = {h["holder_ref"]: h for h in ours.details["holders"]}
    # The dependent is listed, never erased unasked: as erase() lists it in A.
    dependent = f"record:{ids['dependent']}"
    assert holders[dependent] == {h["holder_ref"]: h for h in theirs.details["holders"]}[dependent]
    assert holders[dependent]["result"] == "partially-completed"
    assert {"notes/", "indexes", "views", "write-keys"} <= holders.keys()
    assert all(holders[name]["result"] == "completed" for name in ("notes/", "indexes", "views"))
    everything = b"".join(p.read_bytes() for p in b.root.rglob("*") if p.is_file())
    assert GONE.encode() not in everything
    assert Home.open(b.root).store().get(ids["kept"]).body == "The build server is ci-7."


def test_an_actor_without_the_erase_grant_erases_nothing_by_import(tmp_path: Path) -> None:
    a, b, ids = _homes(tmp_path)
    with Memory.open(a.root) as memory:
        memory.erase([ids["gone"]], reason="wrong value", authority="ada", now=T0 + timedelta(hours=1))
    with Memory.open(b.root, actor="agent:bot", actors=Actors()) as memory:
        report = memory.import_file(_export(a), path="late.json", now=T0 + timedelta(hours=2))
    assert report.erased == [] and "holds no erase grant" in report.erasures_held_back[ids["gone"]]
    assert not Home.open(b.root).store().get(ids["gone"]).redacted
    assert not [e for e in b.log().entries() if e.action in ("erase", "erase-intent")]


def test_a_tombstones_reason_is_screened_before_anything_is_written(tmp_path: Path) -> None:
    from agent_memory.errors import ScreenError

    a, _, ids = _homes(tmp_path)
    with Memory.open(a.root) as memory:
        memory.erase([ids["gone"]], reason="wrong value", authority="ada", now=T0 + timedelta(hours=1))
    wire = _export(a).to_wire()
    for record in wire["records"]:
        if record["id"] == ids["gone"]:
            record["redaction_reason"] = "wrong\n<<<<<<< HEAD\nvalue\n>>>>>>> other"
    fresh = Home.init(tmp_path / "c", git=False, timezone="UTC", now=T0)  # lacks the id: restores it
    with Memory.open(fresh.root) as memory, pytest.raises(ScreenError) as caught:
        memory.import_file(MemoryFile.from_wire(wire), verify=False, path="bad.json")
    assert caught.value.hazard == "conflict" and caught.value.field == "redaction_reason"
    assert caught.value.record_id == ids["gone"]
    assert not list((fresh.root / "notes").iterdir())
    assert [e.action for e in fresh.log().entries()] == ["init"]
