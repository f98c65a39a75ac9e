"""Interop with the origin library itself, ``fg-agent-memory`` 0.2.0 (wire 0.1; issue 18).

Its export after ``redact()`` imports here, tombstone included; our export, tombstones
included, loads there and every record comes back byte for byte (canonical bytes).
"""

from __future__ import annotations

from pathlib import Path

import fg_agent_memory as origin
import pytest
from fg_agent_id import KeyPair

from agent_memory.home import Home
from agent_memory.memory import Memory
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.signing import address_of
from agent_memory.records.wire import canonical_json


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def _home(path: Path, *, trusts: str | None = None) -> Path:
    Home.init(path, timezone="UTC", git=False)
    if trusts is not None:
        toml = path / "memory.toml"
        text = toml.read_text(encoding="utf-8")
        toml.write_text(text.replace("trusted_signers = []", f'trusted_signers = ["{trusts}"]'), "utf-8")
    return path


def test_the_origins_export_after_redact_imports_here_with_its_tombstone(tmp_path: Path) -> None:
    keys = KeyPair.generate()
    theirs = origin.Memory(tmp_path / "origin", identity=keys, auto_consolidate=False)
    kept = theirs.remember("The build server is ci-7.", tags=["infra"], source="chat-1").record_id
    gone = theirs.remember("The old gateway is vpn-1.", source="chat-1").record_id
    theirs.redact(gone, "wrong value")
    exported = tmp_path / "origin.json"
    theirs.export(exported)

    home = _home(tmp_path / "home", trusts=address_of(keys))
    with Memory.open(home) as memory:
        report = memory.import_file(MemoryFile.loads(exported.read_bytes()), path=str(exported))
        assert report.added == [kept] and report.tombstones == [gone] and report.tainted == []
        assert memory.get(gone).redacted and memory.get(kept).body == "The build server is ci-7."
        file_bytes = {r.id: r.canonical_bytes() for r in MemoryFile.loads(exported.read_bytes()).records}
        assert memory.get(kept).canonical_bytes() == file_bytes[kept]
        assert memory.get(gone).canonical_bytes() == file_bytes[gone]


def test_our_export_with_a_tombstone_loads_in_the_origin_byte_for_byte(tmp_path: Path) -> None:
    home = _home(tmp_path / "home")
    with Memory.open(home) as memory:
        kept = memory.remember("The build server is ci-7.", source="chat-1", tags=("infra",)).record_id
        gone = memory.remember("The old gateway is vpn-1.", source="chat-1").record_id
        memory.erase([gone], reason="wrong value", authority="owner")
    exported = tmp_path / "ours.json"
    from agent_memory.cli.common import open_home
    from agent_memory.transfer.exchange import export_memory_file

    opened = open_home(str(home))
    ours = export_memory_file(opened.store(), keys=opened.identity(), log=opened.log())
    exported.write_bytes(ours.dumps())

    loaded = origin.Memory.load(exported, path=tmp_path / "origin")
    theirs = {record.id: record for record in loaded._store.list()}
    assert set(theirs) == {kept, gone}
    for record in ours.records:
        assert canonical_json(theirs[record.id].model_dump()) == record.canonical_bytes()
    assert theirs[gone].redacted
    again = tmp_path / "again.json"
    loaded.export(again)
    assert MemoryFile.loads(again.read_bytes()).records == tuple(
        sorted(ours.records, key=lambda r: [record.id for record in loaded._store.list()].index(r.id))
    )
