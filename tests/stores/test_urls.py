from pathlib import Path

import pytest

from agent_memory.errors import ConfigError, StoreError
from agent_memory.home import Home
from agent_memory.log.jsonl import JsonlLog
from agent_memory.log.sqlite import SQLiteLog
from agent_memory.stores.files import FileStore
from agent_memory.stores.sqlite import SQLiteStore
from agent_memory.stores.urls import AdapterStore, open_store, opened_store, parse_store_url, redact_url
from pg import PgSchema


@pytest.mark.parametrize(
    ("url", "codec"),
    [("notes:{}", "markdown"), ("file:{}", "markdown"), ("file://{}", "markdown"), ("json:{}", "json")],
)
def test_file_urls_open_a_file_store_with_the_codec_they_name(tmp_path: Path, url: str, codec: str) -> None:
    store = open_store(url.format(tmp_path / "records"))
    assert isinstance(store, FileStore) and isinstance(store, AdapterStore)
    assert store.root == tmp_path / "records" and store.codec == codec


def test_a_file_url_may_name_localhost_but_no_other_host(tmp_path: Path) -> None:
    store = open_store(f"file://localhost{tmp_path}")
    assert isinstance(store, FileStore) and store.root == tmp_path
    with pytest.raises(StoreError, match="a file URL on another host 'elsewhere'"):
        parse_store_url("file://elsewhere/srv/notes")


def test_a_sqlite_url_opens_that_database_file(tmp_path: Path) -> None:
    with opened_store(f"sqlite:{tmp_path / 'memory.sqlite'}") as store:
        assert isinstance(store, SQLiteStore) and store.path == str(tmp_path / "memory.sqlite")
        assert isinstance(store, AdapterStore)
    assert (tmp_path / "memory.sqlite").is_file()


def test_a_home_url_opens_the_notes_of_that_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    home = Home.init(tmp_path / "home", git=False)
    store = open_store(f"home:{home.root}")
    assert isinstance(store, FileStore) and store.root == home.root / "notes" and store.codec == "markdown"
    with pytest.raises(ConfigError, match="not a Home"):
        open_store(f"home:{tmp_path / 'elsewhere'}")


def test_a_tilde_is_expanded_in_paths(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert parse_store_url("sqlite:~/m.sqlite").location == str(tmp_path / "m.sqlite")


def test_a_postgresql_url_keeps_libpq_parts_and_takes_the_schema_out() -> None:
    parsed = parse_store_url("postgresql://ann@db.example:5433/memory?schema=team_a&sslmode=require")
    assert parsed.kind == "postgresql" and parsed.schema == "team_a"
    assert parsed.location == "postgresql://ann@db.example:5433/memory?sslmode=require"
    plain = parse_store_url("postgres://ann@db.example/memory")
    assert plain.schema is None and plain.location == "postgres://ann@db.example/memory"
    with pytest.raises(StoreError, match="schema given twice"):
        parse_store_url("postgresql://db/memory?schema=a&schema=b")


def test_a_postgresql_url_opens_the_schema_it_names(postgres_schema: PgSchema) -> None:
    from agent_memory.log.postgres import PostgresLog
    from agent_memory.stores.postgres import PostgresStore

    parsed = parse_store_url(f"{postgres_schema.dsn}?schema={postgres_schema.schema}")
    with opened_store(parsed.text) as store:
        assert isinstance(store, PostgresStore) and store.schema == postgres_schema.schema
        assert store.list() == []
    log = parsed.open_log()
    assert isinstance(log, PostgresLog) and log.schema == postgres_schema.schema
    log.close()


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("", ""),
        ("notes", "unknown scheme"),
        ("/srv/memory", "unknown scheme"),
        ("s3://bucket/memory", "unknown scheme"),
        ("sqlite:", "the path is empty"),
        ("notes:a\0b", "holds NUL"),
        ("postgresql:db", "expected postgresql://"),
    ],
)
def test_a_bad_url_is_a_store_error_that_quotes_it_with_a_hint(url: str, why: str) -> None:
    with pytest.raises(StoreError) as info:
        open_store(url)
    assert str(info.value).startswith(f"not a store URL: {url!r}")
    assert why in str(info.value)
    assert info.value.hint and "notes:PATH" in info.value.hint


@pytest.mark.parametrize(
    "url",
    [
        "mysql://ann:hunter2@db/memory",
        "ann:hunter2@db/memory",
        "host=db password=hunter2 dbname=memory",
        "host=db password='hunter2 x' dbname=memory",
        "postgresql:ann:hunter2@db/memory",
        "postgresql://ann:hunter2@db/memory?schema=a&schema=b",
    ],
)
def test_no_error_quotes_a_password(url: str) -> None:
    with pytest.raises(StoreError) as info:
        open_store(url)
    assert "hunter2" not in str(info.value) and "***" in str(info.value)


def test_an_unreachable_server_is_named_without_the_password() -> None:
    with pytest.raises(StoreError) as info:
        open_store("postgresql://ann:hunter2@127.0.0.1:1/memory?connect_timeout=5")
    assert "cannot connect to PostgreSQL at 127.0.0.1:1 (database memory, user ann)" in str(info.value)
    assert "hunter2" not in str(info.value) + str(info.value.hint)


def test_a_parsed_url_never_shows_its_password() -> None:
    parsed = parse_store_url("postgresql://ann:hunter2@db/memory?password=hunter2&schema=s")
    assert "hunter2" not in repr(parsed) and "hunter2" not in parsed.display()
    assert parsed.display() == "postgresql://ann:***@db/memory?password=***&schema=s"
    assert redact_url("notes:/srv/a@b/notes") == "notes:/srv/a@b/notes"  # an @ in a path is not a login


def test_the_identity_tells_when_two_urls_name_the_same_records(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert parse_store_url(f"home:{home}").identity == parse_store_url(f"notes:{home}/notes").identity
    assert parse_store_url(f"json:{tmp_path}/r").identity == parse_store_url(f"notes:{tmp_path}/r/").identity
    assert parse_store_url(f"sqlite:{tmp_path}/m").identity != parse_store_url(f"notes:{tmp_path}/m").identity
    a = parse_store_url("postgresql://db/memory?schema=a")
    assert a.identity != parse_store_url("postgresql://db/memory?schema=b").identity
    assert parse_store_url("postgresql://db/memory").identity[2] == "agent_memory"


def test_only_homes_and_sql_stores_have_a_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    home = Home.init(tmp_path / "home", git=False)
    assert parse_store_url(f"notes:{tmp_path}/n").open_log() is None
    assert parse_store_url(f"json:{tmp_path}/j").open_log() is None
    home_log = parse_store_url(f"home:{home.root}").open_log()
    assert isinstance(home_log, JsonlLog) and home_log.folder == home.root / "log"
    with opened_store(f"sqlite:{tmp_path}/m.sqlite"):
        pass  # the store creates its tables first; the log's table goes beside them
    sqlite_log = parse_store_url(f"sqlite:{tmp_path}/m.sqlite").open_log()
    assert isinstance(sqlite_log, SQLiteLog) and sqlite_log.path == f"{tmp_path}/m.sqlite"
    sqlite_log.close()
    with opened_store(f"sqlite:{tmp_path}/m.sqlite") as reopened:  # the store still opens beside it
        assert reopened.list() == []
