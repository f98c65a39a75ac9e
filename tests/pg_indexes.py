"""Factories of the PostgreSQL search indexes for the contract suite and their own tests.

Each index lives in a fresh schema of the session's private cluster (tests/pg.py), dropped
afterwards. The vector index needs pgvector on that server: without it the tests skip with
the reason locally and fail under CI, where .ci/run installs it (scripts/install-pgvector.sh).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from agent_memory.search.embedders import HashEmbedder
from agent_memory.search.postgres import PgTextIndex, PgVectorIndex
from pg import PostgresCluster, shared_cluster

__all__ = ["drop_schema", "pg_text_index", "pg_vector_index", "require_pgvector"]


def require_pgvector(cluster: PostgresCluster) -> None:
    """Skip (or fail under CI) unless the cluster's server can create the ``vector`` extension."""
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
    if found is None:
        reason = (
            f"pgvector is not installed for the PostgreSQL server in {cluster.bin_dir}"
            " (run scripts/install-pgvector.sh as root)"
        )
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set, so .ci/run must have installed it)", pytrace=False)
        pytest.skip(reason)


def drop_schema(cluster: PostgresCluster, schema: str) -> None:
    """Drop ``schema`` and everything in it."""
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@contextmanager
def pg_text_index(tmp_path: Path) -> Iterator[PgTextIndex]:
    """A fresh PgTextIndex in its own schema, closed and dropped afterwards."""
    cluster = shared_cluster()
    schema = f"t_{uuid.uuid4().hex}"
    try:
        with PgTextIndex(cluster.dsn, schema=schema) as index:
            yield index
    finally:
        drop_schema(cluster, schema)


@contextmanager
def pg_vector_index(tmp_path: Path) -> Iterator[PgVectorIndex]:
    """A fresh PgVectorIndex over the HashEmbedder in its own schema, closed and dropped afterwards."""
    cluster = shared_cluster()
    require_pgvector(cluster)
    schema = f"t_{uuid.uuid4().hex}"
    try:
        with PgVectorIndex(cluster.dsn, HashEmbedder(), schema=schema) as index:
            yield index
    finally:
        drop_schema(cluster, schema)
