"""connect(): one memory shared by many agents in a SQLite file or a PostgreSQL schema (DESIGN.md §6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_memory.connect import connect
from agent_memory.errors import ConfigError, StoreError
from agent_memory.records.signing import address_of, load_or_create_identity, verify_record
from pg import PgSchema, postgres_cluster, postgres_schema  # noqa: F401 - fixtures


def _url(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if kind == "sqlite":
        return f"sqlite:{tmp_path / 'shared.sqlite'}"
    schema: PgSchema = request.getfixturevalue("postgres_schema")
    return f"{schema.dsn}?schema={schema.schema}"


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return _url(request.param, tmp_path, request)


def test_two_connections_see_each_others_writes_supersedes_and_withdrawals(url: str) -> None:
    with connect(url) as first, connect(url, actor="owner") as second:
        old = first.remember("Staging runs on db-3.", source="t-1", kind="state", subject="host:staging")
        new = second.remember("Staging runs on db-4.", source="t-2", kind="state", subject="host:staging")
        assert new.superseded == old.record_id
        assert [r.record.body for r in first.recall("which host runs staging", k=3).records] == [
            "Staging runs on db-4."
        ]
        control = second.withdraw(memory_item_ids=[new.record_id], reason="wrong ticket")
        assert not first.recall("which host runs staging", k=3).records
        first.reinstate(control.withdrawal_id, "checked again")
        assert [r.record.id for r in second.recall("staging host", k=3).records] == [new.record_id]


def test_records_are_signed_with_the_key_file_given(url: str, tmp_path: Path) -> None:
    key = tmp_path / "agent.key"
    keys = load_or_create_identity(key)
    with connect(url, key_file=key) as memory:
        made = memory.remember("Deploys happen on Fridays.", source="t-3")
        record = memory.get(made.record_id)
    assert record.signature is not None and record.provenance.agent == address_of(keys)
    verify_record(record)


def test_reopening_finds_what_was_written_and_close_twice_is_harmless(url: str) -> None:
    memory = connect(url)
    made = memory.remember("The release train leaves at noon.", source="t-4")
    memory.close()
    memory.close()
    with connect(url) as again:
        assert again.get(made.record_id).body == "The release train leaves at noon."
        assert [r.record.id for r in again.recall("release train", k=1).records] == [made.record_id]


def test_a_file_store_or_a_home_is_refused_with_a_hint(tmp_path: Path) -> None:
    for url in (f"notes:{tmp_path}", f"home:{tmp_path}", f"json:{tmp_path}"):
        with pytest.raises(ConfigError, match="not a"):
            connect(url)


def test_a_missing_key_file_or_a_bad_url_is_a_clear_error_and_nothing_is_made(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no key file"):
        connect(f"sqlite:{tmp_path / 'x.sqlite'}", key_file=tmp_path / "missing.key")
    assert not (tmp_path / "x.sqlite").exists()
    with pytest.raises(StoreError, match="unknown scheme"):
        connect("mysql://somewhere/db")
