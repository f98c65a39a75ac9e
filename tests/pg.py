"""A private PostgreSQL cluster for the test session, and a fresh schema per test.

The cluster is real (STYLE.md: "PostgreSQL runs for real in CI"): ``initdb`` into a temporary
directory, listening only on 127.0.0.1 at a free non-default port, ``fsync=off``, no Unix
socket; started with ``pg_ctl -w`` and stopped when the session ends. As root, the server runs
as the ``postgres`` OS user (PostgreSQL refuses to run as root).

Without PostgreSQL binaries the tests that need it skip with the reason, except when the
environment variable ``CI`` is set: CI always installs PostgreSQL (``.ci/run``), so there a
missing server is a failure, never a silent skip.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import psycopg
import pytest
from psycopg import sql

from agent_memory.stores.postgres import PostgresStore

__all__ = [
    "PgSchema",
    "PostgresCluster",
    "find_bin_dir",
    "postgres_cluster",
    "postgres_schema",
    "unavailable",
]

_SUPERUSER = "postgres"


@dataclass(frozen=True)
class PostgresCluster:
    """A running private cluster: its directory, port and the DSN of its ``postgres`` database."""

    root: Path
    bin_dir: Path
    port: int
    run_as: str | None
    started_in_s: float

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def dsn(self) -> str:
        return f"postgresql://{_SUPERUSER}@127.0.0.1:{self.port}/postgres"


def find_bin_dir() -> Path | None:
    """Return the newest ``/usr/lib/postgresql/<major>/bin`` holding initdb and pg_ctl, else PATH's."""
    candidates = sorted(
        (Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")),
        key=lambda d: int(d.parent.name) if d.parent.name.isdigit() else 0,
        reverse=True,
    )
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    for directory in candidates:
        if (directory / "pg_ctl").exists():
            return directory
    return None


def unavailable(reason: str) -> NoReturn:
    """Skip the test for ``reason``, or fail it when running under CI (``CI`` is set)."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so PostgreSQL must be installed: see .ci/run)", pytrace=False)
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _pg_command(run_as: str | None, tool: Path, *args: str) -> list[str]:
    return [*(["runuser", "-u", run_as, "--"] if run_as else []), str(tool), *args]


def _run(argv: list[str], cwd: Path) -> None:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


# No autovacuum: its snapshots could keep erased row versions through VACUUM FULL (a stated
# limitation of the store) and make the erasure test depend on timing.
_SETTINGS = """
listen_addresses = '127.0.0.1'
port = {port}
unix_socket_directories = ''
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 40
autovacuum = off
"""


_cluster: PostgresCluster | None = None
_not_started: str | None = None
_start_error: str | None = None


def shared_cluster() -> PostgresCluster:
    """Return the session's cluster, starting it on first use; :func:`stop_shared_cluster` ends it.

    Skips (or fails under CI) when PostgreSQL is not installed or, as root, when there is no
    ``postgres`` OS user to run it; fails when the installed server does not start. The
    outcome of the first call is kept, so a missing server is looked for once per session.
    """
    global _cluster, _not_started, _start_error
    if _start_error is not None:
        pytest.fail(_start_error, pytrace=False)
    if _cluster is None and _not_started is None:
        bin_dir = find_bin_dir()
        if bin_dir is None:
            _not_started = (
                "PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin or on PATH)"
            )
        elif os.geteuid() == 0 and (shutil.which("runuser") is None or _user_missing(_SUPERUSER)):
            _not_started = "running as root needs the 'postgres' OS user and runuser to start PostgreSQL"
        else:
            try:
                _cluster = _start(bin_dir, _SUPERUSER if os.geteuid() == 0 else None)
            except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
                _start_error = f"PostgreSQL is installed but did not start: {exc}"
                pytest.fail(_start_error, pytrace=False)
            atexit.register(stop_shared_cluster)
    if _cluster is None:
        unavailable(_not_started or "PostgreSQL did not start")
    return _cluster


def _start(bin_dir: Path, run_as: str | None) -> PostgresCluster:
    # Not under pytest's tmp_path: its parents are private to root and the server user must enter.
    root = Path(tempfile.mkdtemp(prefix="agent-memory-pg-"))
    data, log = root / "data", root / "server.log"
    try:
        if run_as is not None:
            shutil.chown(root, user=run_as)
        started = time.perf_counter()
        initdb = ("-D", str(data), "-U", _SUPERUSER, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
        _run(_pg_command(run_as, bin_dir / "initdb", *initdb), root)
        for attempt in range(3):
            # A port found free can be taken before the server binds it: try another.
            port = _free_port()
            with (data / "postgresql.conf").open("a", encoding="utf-8") as conf:
                conf.write(_SETTINGS.format(port=port))
            try:
                _run(
                    _pg_command(run_as, bin_dir / "pg_ctl", "-D", str(data), "-l", str(log), "-w", "start"),
                    root,
                )
                return PostgresCluster(root, bin_dir, port, run_as, time.perf_counter() - started)
            except RuntimeError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise


def stop_shared_cluster() -> None:
    """Stop the session's cluster and delete its directory; nothing happens when none runs."""
    global _cluster
    cluster, _cluster = _cluster, None
    if cluster is None:
        return
    stop = _pg_command(
        cluster.run_as, cluster.bin_dir / "pg_ctl", "-D", str(cluster.data_dir), "-m", "immediate"
    )
    subprocess.run([*stop, "-w", "stop"], cwd=cluster.root, capture_output=True, check=False, timeout=60)
    shutil.rmtree(cluster.root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """The session's private cluster, stopped and deleted at the end of the session."""
    yield shared_cluster()
    stop_shared_cluster()


def _user_missing(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return True
    return False


@dataclass(frozen=True)
class PgSchema:
    """One test's own schema in the session's cluster."""

    dsn: str
    schema: str


@pytest.fixture
def postgres_schema(postgres_cluster: PostgresCluster) -> Iterator[PgSchema]:
    """A fresh, unused schema of the session's cluster for one test, dropped afterwards."""
    schema = f"t_{uuid.uuid4().hex}"
    yield PgSchema(postgres_cluster.dsn, schema)
    _drop_schema(postgres_cluster, schema)


@contextmanager
def postgres_store(tmp_path: Path) -> Iterator[PostgresStore]:
    """A store factory for the contract suite: a PostgresStore in a fresh schema, dropped afterwards."""
    cluster = shared_cluster()
    schema = f"t_{uuid.uuid4().hex}"
    store = PostgresStore(cluster.dsn, schema=schema)
    try:
        yield store
    finally:
        store.close()
        _drop_schema(cluster, schema)


def _drop_schema(cluster: PostgresCluster, schema: str) -> None:
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
