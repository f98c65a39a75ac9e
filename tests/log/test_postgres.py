"""PostgresLog beyond the contract suite: concurrent writers, foreign tables, a locked table, no server."""

import threading
from datetime import UTC, datetime

import psycopg
import pytest
from psycopg import sql

from agent_memory.errors import LogError
from agent_memory.log import JsonlLog, MemoryLog
from agent_memory.log.postgres import PostgresLog
from pg import PgSchema, postgres_cluster, postgres_schema  # noqa: F401 - fixtures

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_writers_on_separate_connections_never_fork_the_chain(request: pytest.FixtureRequest) -> None:
    where: PgSchema = request.getfixturevalue("postgres_schema")
    writers = [PostgresLog(where.dsn, schema=where.schema) for _ in range(4)]
    start = threading.Barrier(len(writers))
    failures: list[BaseException] = []

    def append_many(log: PostgresLog, name: int) -> None:
        try:
            start.wait()
            for i in range(25):
                log.append("put", actor=f"agent:w{name}", record_ids=[f"mem:{name:016x}{i:016x}"], now=T0)
        except BaseException as exc:  # reported below, with the thread's own traceback
            failures.append(exc)

    threads = [threading.Thread(target=append_many, args=(log, n)) for n, log in enumerate(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert writers[0].verify() == 100
    entries = list(writers[1].entries())
    assert [e.seq for e in entries] == list(range(1, 101))
    assert sorted(e.actor for e in entries) == sorted(f"agent:w{n}" for n in range(4) for _ in range(25))
    for log in writers:
        log.close()


def test_the_same_events_give_the_same_lines_as_the_other_adapters(
    request: pytest.FixtureRequest, tmp_path: object
) -> None:
    where: PgSchema = request.getfixturevalue("postgres_schema")
    reference, folder = MemoryLog(), JsonlLog(f"{tmp_path}/log")
    with PostgresLog(where.dsn, schema=where.schema) as table:
        for log in (reference, folder, table):
            log.append("init", actor="owner", now=T0)
            log.append("review", actor="owner", record_ids=["mem:" + "a" * 32], details={"n": 2**70}, now=T0)
        assert [e.line for e in table.entries()] == reference.lines == [e.line for e in folder.entries()]


def test_an_oplog_table_of_another_shape_is_refused_and_left_alone(request: pytest.FixtureRequest) -> None:
    where: PgSchema = request.getfixturevalue("postgres_schema")
    with psycopg.connect(where.dsn, autocommit=True) as db:
        db.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(where.schema)))
        table = sql.SQL("{}.oplog").format(sql.Identifier(where.schema))
        db.execute(sql.SQL("CREATE TABLE {} (seq integer, line text)").format(table))
        db.execute(sql.SQL("INSERT INTO {} VALUES (1, 'mine')").format(table))
        with pytest.raises(LogError, match=r"the oplog table has columns \[\('seq', 'integer'\)") as info:
            PostgresLog(where.dsn, schema=where.schema)
        assert info.value.path == f"postgresql:{where.schema}"
        assert db.execute(sql.SQL("SELECT seq, line FROM {}").format(table)).fetchall() == [(1, "mine")]


def test_an_append_that_cannot_get_the_table_in_time_writes_nothing(request: pytest.FixtureRequest) -> None:
    where: PgSchema = request.getfixturevalue("postgres_schema")
    with PostgresLog(where.dsn, schema=where.schema, timeout=0.2) as log:
        log.append("init", actor="owner", now=T0)
        with psycopg.connect(where.dsn) as other, other.transaction():
            table = sql.SQL("{}.oplog").format(sql.Identifier(where.schema))
            other.execute(sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(table))
            with pytest.raises(LogError, match=r"cannot append: .*lock timeout"):
                log.append("put", actor="owner", now=T0)
        assert log.verify() == 1
        assert log.append("put", actor="owner", now=T0).seq == 2  # the connection recovers


@pytest.mark.parametrize("schema", ["Upper", "with-dash", "x" * 64, "public; DROP TABLE x"])
def test_a_schema_name_that_is_not_a_plain_identifier_is_refused_before_connecting(schema: str) -> None:
    with pytest.raises(LogError, match="refused schema name"):
        PostgresLog("postgresql://nobody@127.0.0.1:1/none", schema=schema)


def test_an_unreachable_server_is_a_log_error_that_hides_the_password() -> None:
    with pytest.raises(LogError) as info:
        PostgresLog("postgresql://ann:hunter2@127.0.0.1:1/memory", schema="agent_memory")
    assert "cannot connect to PostgreSQL at 127.0.0.1:1 (database memory, user ann)" in str(info.value)
    assert "hunter2" not in str(info.value) + str(info.value.hint)
