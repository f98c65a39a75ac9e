import json
from pathlib import Path

import pytest
from installed import Cli, Seeded, seed, snapshot

from agent_memory.home import Home
from agent_memory.log.sqlite import SQLiteLog
from agent_memory.records.lifecycle import archive
from agent_memory.records.record import MemoryRecord
from agent_memory.stores.base import RecordStore
from agent_memory.stores.files import FileStore
from agent_memory.stores.sqlite import SQLiteStore
from pg import PgSchema


@pytest.fixture
def source(cli: Cli) -> tuple[Path, Seeded]:
    """Home A: three records (the oldest in two versions, signed births), the third one erased."""
    home = cli.home("a")
    opened = Home.open(home)
    seeded = seed(opened.store(), opened.identity())
    opened.store().erase(seeded.tea, "asked to forget")
    return home, seeded


def trusting(target: Path, source: Path) -> Path:
    """Add ``source``'s key to ``target``'s memory.toml [trust]: a Home takes what keys it trusts signed."""
    toml = target / "memory.toml"
    signer = Home.open(source).signer()
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text.replace("trusted_signers = []", f'trusted_signers = ["{signer}"]'), encoding="utf-8")
    return target


def histories(store: RecordStore, ids: list[str]) -> dict[str, list[bytes]]:
    return {record_id: [v.canonical_bytes() for v in store.history(record_id)] for record_id in ids}


def manifest(out: str) -> str:
    """The manifest digest a text report prints: ``(sha256:…)`` at the end of its second line."""
    return out.splitlines()[1].rsplit("(", 1)[1].rstrip(")")


def test_a_home_goes_through_sqlite_and_json_into_a_new_home_unchanged(
    cli: Cli, source: tuple[Path, Seeded]
) -> None:
    home, seeded = source
    expected = histories(Home.open(home).store(), seeded.ids)
    first = cli("migrate", "--to", "sqlite:memory.sqlite", env={"AGENT_MEMORY_HOME": str(home)})
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[0] == (
        f"migrated home:{home} -> sqlite:memory.sqlite: 3 records; 2 copied, 1 erased ones restored, "
        "0 extended, 0 skipped (already there); 4 versions written"
    )
    second = cli.ok("migrate", "--from", "sqlite:memory.sqlite", "--to", "json:records")
    target = trusting(cli.home("b"), home)
    third = cli.ok("migrate", "--from", "json:records", "--to", f"home:{target}")
    assert manifest(first.stdout) == manifest(second) == manifest(third)
    assert second.splitlines()[2] == "logged in: no log at either end"
    assert third.splitlines()[2] == f"logged in: home:{target}"

    with SQLiteStore(cli.root / "memory.sqlite") as sqlite:
        assert histories(sqlite, seeded.ids) == expected
    assert histories(FileStore(cli.root / "records", codec="json"), seeded.ids) == expected
    assert histories(Home.open(target).store(), seeded.ids) == expected
    erased = Home.open(target).store().history(seeded.tea)
    assert len(erased) == 1 and erased[0].redacted
    assert "[redacted]" in cli.ok("show", seeded.tea, "--home", str(target))


def test_every_end_with_a_log_records_the_migration(cli: Cli, source: tuple[Path, Seeded]) -> None:
    home, seeded = source
    cli.ok("migrate", "--home", str(home), "--to", "sqlite:memory.sqlite")
    (event,) = [e for e in Home.open(home).log().entries() if e.action == "migrate"]
    with SQLiteLog(cli.root / "memory.sqlite") as table:
        (copy,) = table.entries()
    assert (copy.action, copy.actor, copy.time) == ("migrate", "owner", event.time)
    assert (copy.record_ids, copy.details) == (event.record_ids, event.details)
    assert sorted(event.record_ids) == sorted(seeded.ids)
    assert event.details["completed"] is True and event.details["versions"] == 4
    assert event.details["from"] == f"home:{home}" and event.details["to"] == "sqlite:memory.sqlite"


def test_running_a_migration_again_writes_nothing(cli: Cli, source: tuple[Path, Seeded]) -> None:
    home, _ = source
    cli.ok("migrate", "--home", str(home), "--to", "json:records")
    before = snapshot(cli.root / "records")
    again = json.loads(cli.ok("migrate", "--home", str(home), "--to", "json:records", "--json"))
    assert snapshot(cli.root / "records") == before
    assert again["versions_written"] == 0 and len(again["skipped"]) == 3
    assert again["copied"] == again["restored"] == again["extended"] == []
    assert again["verified"] is True and again["logged_in"] == [f"home:{home}"]


def test_a_different_history_in_the_target_is_named_and_nothing_is_written(
    cli: Cli, source: tuple[Path, Seeded]
) -> None:
    home, seeded = source
    other = trusting(cli.home("b"), home)
    first: MemoryRecord = Home.open(home).store().history(seeded.old)[0]
    Home.open(other).store().put(first)
    Home.open(other).store().put(archive(first, "retired by hand"))
    before = snapshot(other / "notes"), snapshot(other / "log")
    result = cli("migrate", "--home", str(home), "--to", f"home:{other}")
    assert result.returncode == 3 and result.stdout == ""
    message = result.stderr.splitlines()[0]
    assert message.startswith("agent-memory: error: the target holds a different history for 1 record(s)")
    assert f"{seeded.old}: version 2 differs" in message
    assert (snapshot(other / "notes"), snapshot(other / "log")) == before


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("ftp://ann:hunter2@example.org/x", "ftp://ann:***@example.org/x"),
        ("ann:hunter2@example.org/db", "ann:***@example.org/db"),
        ("host=db password=hunter2", "host=db password=***"),
    ],
)
def test_a_bad_url_is_named_without_its_password(
    cli: Cli, source: tuple[Path, Seeded], url: str, shown: str
) -> None:
    result = cli("migrate", "--home", str(source[0]), "--to", url)
    assert result.returncode == 3
    assert (
        result.stderr.splitlines()[0] == f"agent-memory: error: not a store URL: {shown!r} (unknown scheme)"
    )
    assert "hunter2" not in result.stderr


def test_an_unreachable_server_is_named_without_the_password(cli: Cli, source: tuple[Path, Seeded]) -> None:
    home, _ = source
    before = snapshot(home / "notes")
    result = cli("migrate", "--home", str(home), "--to", "postgresql://ann:hunter2@127.0.0.1:1/memory")
    assert result.returncode == 3
    assert "cannot connect to PostgreSQL at 127.0.0.1:1 (database memory, user ann)" in result.stderr
    assert "hunter2" not in result.stderr
    assert snapshot(home / "notes") == before


def test_the_same_store_at_both_ends_is_refused(cli: Cli, source: tuple[Path, Seeded]) -> None:
    home, _ = source
    result = cli("migrate", "--home", str(home), "--to", f"notes:{home}/notes")
    assert result.returncode == 3
    assert (
        result.stderr.splitlines()[0]
        == f"agent-memory: error: home:{home} and notes:{home}/notes are the same store"
    )


def test_a_missing_source_is_refused_and_not_created(cli: Cli) -> None:
    result = cli("migrate", "--from", "sqlite:nope.sqlite", "--to", "json:out")
    assert result.returncode == 3
    assert result.stderr.splitlines()[0] == "agent-memory: error: sqlite:nope.sqlite: no such file or folder"
    assert not (cli.root / "nope.sqlite").exists() and not (cli.root / "out").exists()


def test_a_home_goes_to_postgresql_and_back_into_a_new_home(
    cli: Cli, source: tuple[Path, Seeded], postgres_schema: PgSchema
) -> None:
    from agent_memory.log.postgres import PostgresLog
    from agent_memory.stores.postgres import PostgresStore

    home, seeded = source
    url = f"{postgres_schema.dsn}?schema={postgres_schema.schema}"
    out = json.loads(cli.ok("migrate", "--home", str(home), "--to", url, "--json"))
    assert out["versions_written"] == 4 and out["restored"] == [seeded.tea]
    target = trusting(cli.home("b"), home)
    back = json.loads(cli.ok("migrate", "--from", url, "--to", f"home:{target}", "--json"))
    assert back["manifest"] == out["manifest"]
    expected = histories(Home.open(home).store(), seeded.ids)
    with PostgresStore(postgres_schema.dsn, schema=postgres_schema.schema) as server:
        assert histories(server, seeded.ids) == expected
    assert histories(Home.open(target).store(), seeded.ids) == expected
    with PostgresLog(postgres_schema.dsn, schema=postgres_schema.schema) as table:
        (event,) = table.entries()
    assert event.action == "migrate" and event.details["manifest"] == out["manifest"]
