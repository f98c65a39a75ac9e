"""PgTextIndex and PgVectorIndex beyond the shared contract: literal text, HNSW plans, purge, errors."""

from __future__ import annotations

import os
import random
import socket
import sys
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import psycopg
import pytest
from psycopg import sql
from search_kit import ids, record
from test_index_contract import NASTY

from agent_memory.errors import StoreError
from agent_memory.records.record import MemoryRecord
from agent_memory.search import postgres
from agent_memory.search.base import document_text
from agent_memory.search.embedders import EmbeddingError, HashEmbedder, normalise_rows
from agent_memory.search.postgres import PgTextIndex, PgVectorIndex
from agent_memory.search.postgres_text import (
    MAX_POSITION,
    MAX_WORD,
    and_query,
    document_words,
    query_words,
    tsvector_literal,
)
from pg import PgSchema, PostgresCluster, shared_cluster
from pg_indexes import drop_schema, require_pgvector

if TYPE_CHECKING:
    from agent_memory.search.base import Vectors

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def postgres_cluster() -> PostgresCluster:
    """The session's private cluster (tests/pg.py)."""
    return shared_cluster()


@pytest.fixture
def postgres_schema(postgres_cluster: PostgresCluster) -> Iterator[PgSchema]:
    """A fresh schema of the session's cluster, dropped afterwards."""
    schema = f"t_{uuid.uuid4().hex}"
    yield PgSchema(postgres_cluster.dsn, schema)
    drop_schema(postgres_cluster, schema)


def server_stems(cluster: PostgresCluster, words: set[str]) -> dict[str, str]:
    """Return the english_stem lexeme of each word (a stopword stays itself), asked of the server."""
    with psycopg.connect(cluster.dsn) as conn:
        rows = conn.execute(
            "SELECT w, coalesce((ts_lexize('english_stem', w))[1], w) FROM unnest(%s::text[]) AS w",
            (list(words),),
        ).fetchall()
    return dict(rows)


@pytest.fixture
def text_index(postgres_schema: PgSchema) -> Iterator[PgTextIndex]:
    with PgTextIndex(postgres_schema.dsn, schema=postgres_schema.schema) as index:
        yield index


@pytest.fixture
def vector_index(postgres_schema: PgSchema, postgres_cluster: PostgresCluster) -> Iterator[PgVectorIndex]:
    require_pgvector(postgres_cluster)
    with PgVectorIndex(postgres_schema.dsn, HashEmbedder(), schema=postgres_schema.schema) as index:
        yield index


# ---------------------------------------------------------------------- words, without a server


def test_words_fold_case_and_accents_and_split_on_every_non_word_character() -> None:
    assert query_words("Café-Crème, C++ and snake_case!") == ["cafe", "creme", "c", "and", "snake", "case"]
    assert query_words("NEAR(alpha beta, 2) ^caret *wild -minus") == [
        "near",
        "alpha",
        "beta",
        "2",
        "caret",
        "wild",
        "minus",
    ]
    assert query_words('"" () {} [] ^ * : - \x00 \ud800') == []


def test_emoji_are_words_of_their_own_and_skin_tones_are_separators() -> None:
    assert query_words("brain🧠emoji") == ["brain", "🧠", "emoji"]
    assert query_words("👍🏽") == ["👍"]


def test_scripts_without_spaces_become_overlapping_pieces() -> None:
    assert query_words("喜欢咖啡") == ["喜欢", "欢咖", "咖啡"]
    assert set(document_words("我很喜欢咖啡")) >= {"咖", "啡", "咖啡", "喜欢"}


def test_combining_marks_stay_inside_their_word() -> None:
    assert query_words("नमस्ते दुनिया") == ["नमस्ते", "दुनिया"]


def test_words_longer_than_the_limit_are_cut_the_same_way_on_both_sides() -> None:
    long = "z" * 5000
    assert query_words(long) == document_words(f"x {long}")[1:] == ["z" * MAX_WORD]


def test_a_tsvector_literal_quotes_lexemes_and_caps_positions() -> None:
    assert tsvector_literal(["it's", "a\\b", "it's"]) == "'it''s':1,3 'a\\\\b':2"
    many = tsvector_literal(["w"] * (MAX_POSITION + 10))
    positions = many.split(":", 1)[1].split(",")
    assert len(positions) == 255 and positions[-1] == "255"
    late = tsvector_literal([f"w{n}" for n in range(MAX_POSITION + 5)])
    assert late.endswith(f"'w{MAX_POSITION + 4}':{MAX_POSITION}")
    assert tsvector_literal([]) == ""


def test_quoted_lexemes_reach_the_server_as_lexemes_and_never_as_syntax(
    postgres_cluster: PostgresCluster,
) -> None:
    hostile = ["it's", "a\\b", "&", "|", "!", "<->", "(", ":*", "'"]
    with psycopg.connect(postgres_cluster.dsn, autocommit=True) as conn:
        for lexeme in hostile:
            row = conn.execute(
                "SELECT %s::tsvector @@ %s::tsquery, %s::tsvector @@ %s::tsquery",
                (
                    tsvector_literal([lexeme, "x"]),
                    and_query([lexeme]),
                    tsvector_literal(["x"]),
                    and_query([lexeme]),
                ),
            ).fetchone()
            assert row == (True, False), lexeme


# ---------------------------------------------------------------------- literal full-text search


def test_operators_and_quotes_in_a_query_are_plain_words(text_index: PgTextIndex) -> None:
    tea, coffee = record("tea time in the garden"), record("coffee time in the kitchen")
    text_index.index([tea, coffee])
    # websearch_to_tsquery would read "-tea" as "not tea" and return the coffee note.
    for query in ["-tea", "NOT tea", "tea OR", '"tea', "!tea", "tea:*", "tea & !", "(tea)"]:
        assert ids(text_index.query(query)) == [tea.id], query
    assert ids(text_index.query("time -tea", k=2))[0] == tea.id


def test_every_nasty_query_finds_only_notes_that_share_one_of_its_words(
    text_index: PgTextIndex, postgres_cluster: PostgresCluster
) -> None:
    notes = {text: record(f"entry {n}: {text}") for n, (_, text) in enumerate(NASTY) if text is not None}
    text_index.index(notes.values())
    words_of = {note.id: set(document_words(document_text(note))) for note in notes.values()}
    queries = {query: set(query_words(query)) for query, _ in NASTY}
    stem = server_stems(postgres_cluster, set().union(*words_of.values(), *queries.values()))
    for query, text in NASTY:
        hits = text_index.query(query, k=len(notes))
        wanted = {stem[word] for word in queries[query]}
        for hit in hits:
            assert {stem[word] for word in words_of[hit.record_id]} & wanted, (query, hit)
        if text is not None:
            assert notes[text].id in ids(hits), repr(query)


def test_stopwords_and_word_forms_do_not_hide_the_answer_to_a_question(text_index: PgTextIndex) -> None:
    notes = [
        record("Alice prefers tea over coffee in the morning."),
        record("The staging database runs PostgreSQL 15 on port 5433."),
        record("Bob was running the weekly backups."),
        record("Meet at the Café on 7 May."),
    ]
    text_index.index(notes)
    assert ids(text_index.query("What does Alice like to drink in the morning?"))[0] == notes[0].id
    assert ids(text_index.query("Which port does the staging database use?"))[0] == notes[1].id
    assert ids(text_index.query("who runs backups"))[0] == notes[2].id
    assert ids(text_index.query("cafe may 7"))[0] == notes[3].id
    # A query of stopwords alone searches them.
    assert set(ids(text_index.query("the", k=10))) == {n.id for n in notes}


def test_scripts_without_spaces_are_found_by_any_run_of_characters(text_index: PgTextIndex) -> None:
    note = record("我很喜欢咖啡")
    text_index.index([note, record("日本語のテキスト")])
    for query in ["咖", "咖啡", "喜欢咖啡", "我很喜欢咖啡"]:
        assert ids(text_index.query(query)) == [note.id], query


def test_a_long_pasted_query_runs_and_finds_its_note(text_index: PgTextIndex) -> None:
    page = " ".join(f"token{n}" for n in range(5000))
    note = record(page)
    text_index.index([note, record("unrelated")])
    assert ids(text_index.query(page)) == [note.id]


def test_a_full_stem_cache_is_emptied_without_losing_a_word(
    text_index: PgTextIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres, "_STEM_CACHE", 6)
    notes = [record("alpha beta gamma delta"), record("epsilon zeta eta theta alpha"), record("iota alpha")]
    for note in notes:
        text_index.index([note])
    assert set(ids(text_index.query("alpha", k=5))) == {n.id for n in notes}
    assert ids(text_index.query("zeta eta theta")) == [notes[1].id]
    assert set(ids(text_index.query("delta iota"))) == {notes[0].id, notes[2].id}


def test_another_index_object_sees_the_same_rows(text_index: PgTextIndex, postgres_schema: PgSchema) -> None:
    text_index.index([record("shared between processes")])
    with PgTextIndex(postgres_schema.dsn, schema=postgres_schema.schema) as other:
        assert other.inputs() == text_index.inputs()
        assert len(other.query("processes")) == 1


def test_opening_one_index_from_many_connections_at_once_is_idempotent(postgres_schema: PgSchema) -> None:
    def open_and_index(n: int) -> int:
        with PgTextIndex(postgres_schema.dsn, schema=postgres_schema.schema, name="shared") as index:
            index.index([record(f"opened by worker {n}")])
            return index.inputs().count

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert max(pool.map(open_and_index, range(4))) <= 4
    with PgTextIndex(postgres_schema.dsn, schema=postgres_schema.schema, name="shared") as index:
        assert index.inputs().count == 4


def test_tables_of_another_format_are_emptied_on_open(
    text_index: PgTextIndex, postgres_schema: PgSchema
) -> None:
    text_index.index([record("written by an older version")])
    with psycopg.connect(postgres_schema.dsn, autocommit=True) as admin:
        table = sql.Identifier(postgres_schema.schema, "fulltext_meta")
        admin.execute(
            sql.SQL("UPDATE {} SET value = 'agent-memory-pg-fulltext/0' WHERE key = 'format'").format(table)
        )
    with PgTextIndex(postgres_schema.dsn, schema=postgres_schema.schema) as reopened:
        assert reopened.inputs().count == 0
        assert reopened.recipe.params["schema"] == "agent-memory-pg-fulltext/3"


# ---------------------------------------------------------------------- purge


def _files_containing(root: Path, needle: bytes) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and "pg_wal" not in path.parts and needle in path.read_bytes():
            found.append(str(path.relative_to(root)))
    return found


def _checkpoint(cluster: PostgresCluster) -> None:
    with psycopg.connect(cluster.dsn, autocommit=True) as admin:
        admin.execute("CHECKPOINT")


def test_purge_leaves_no_removed_or_replaced_text_in_any_table_file(
    text_index: PgTextIndex, postgres_cluster: PostgresCluster
) -> None:
    removed, replaced = f"k{uuid.uuid4().hex}7", f"k{uuid.uuid4().hex}7"
    kept = record("a bystander note stays")
    old = record("the replaced note", tags=(replaced,))
    text_index.index([record(f"the vault code is {removed}"), old, kept])
    _checkpoint(postgres_cluster)
    assert _files_containing(postgres_cluster.data_dir, removed.encode()), "the scan must see live rows"
    assert _files_containing(postgres_cluster.data_dir, replaced.encode())

    text_index.remove([record(f"the vault code is {removed}").id])
    text_index.index([old.evolve(tags=("corrected",))])
    text_index.purge()
    _checkpoint(postgres_cluster)
    assert _files_containing(postgres_cluster.data_dir, removed.encode()) == []
    assert _files_containing(postgres_cluster.data_dir, replaced.encode()) == []
    assert ids(text_index.query("bystander")) == [kept.id]
    assert text_index.inputs().count == 2


def test_purge_leaves_no_vector_of_a_removed_note_in_any_table_file(
    vector_index: PgVectorIndex, postgres_cluster: PostgresCluster
) -> None:
    secret = record(f"secret words {uuid.uuid4().hex} only here")
    # The float32 values as the index stores them: the embedder's rows, normalised once more.
    needle = normalise_rows(HashEmbedder().embed([document_text(secret)]))[0].astype("<f4").tobytes()
    vector_index.index([secret, record("another note")])
    _checkpoint(postgres_cluster)
    assert _files_containing(postgres_cluster.data_dir, needle), "the scan must see live vectors"
    vector_index.remove([secret.id])
    vector_index.purge()
    _checkpoint(postgres_cluster)
    assert _files_containing(postgres_cluster.data_dir, needle) == []
    assert vector_index.inputs().count == 1


def test_purge_by_a_role_that_does_not_own_the_tables_says_rows_may_remain(
    text_index: PgTextIndex, postgres_cluster: PostgresCluster
) -> None:
    role = f"reader_{uuid.uuid4().hex[:12]}"
    schema = sql.Identifier(text_index.schema)
    with psycopg.connect(postgres_cluster.dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        admin.execute(sql.SQL("GRANT USAGE, CREATE ON SCHEMA {} TO {}").format(schema, sql.Identifier(role)))
        admin.execute(
            sql.SQL("GRANT ALL ON ALL TABLES IN SCHEMA {} TO {}").format(schema, sql.Identifier(role))
        )
    try:
        dsn = f"postgresql://{role}@127.0.0.1:{postgres_cluster.port}/postgres"
        with PgTextIndex(dsn, schema=text_index.schema) as other:
            other.index([record("written by a plain role")])
            with pytest.raises(StoreError, match="VACUUM FULL did not rewrite") as caught:
                other.purge()
        assert caught.value.hint and "owner" in caught.value.hint
    finally:
        with psycopg.connect(postgres_cluster.dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


# ---------------------------------------------------------------------- vectors and HNSW


class CountingEmbedder:
    """The hash embedder, counting the texts it is asked to embed; optionally broken."""

    name, version = "counting-hash", "1"

    def __init__(self, *, broken: bool = False) -> None:
        self.inner = HashEmbedder(dimensions=64)
        self.texts: list[str] = []
        self.broken = broken

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts.extend(texts)
        vectors = self.inner.embed(texts)
        return vectors[:, :10] if self.broken else vectors


def test_a_text_any_row_holds_is_never_embedded_again(
    postgres_schema: PgSchema, postgres_cluster: PostgresCluster
) -> None:
    require_pgvector(postgres_cluster)
    embedder = CountingEmbedder()
    with PgVectorIndex(postgres_schema.dsn, embedder, schema=postgres_schema.schema) as index:
        first = record("the same words twice")
        twin = MemoryRecord.create(
            type="fact",
            body=first.body,
            provenance=first.provenance,
            created_at=datetime(2026, 2, 1, tzinfo=UTC),
        )
        index.index([first, twin])
        assert len(embedder.texts) == 1
        index.index([first.evolve(confidence=0.5), twin])
        assert len(embedder.texts) == 1
        assert set(ids(index.query("same words", k=5))) == {first.id, twin.id}


def test_a_broken_embedder_raises_and_stores_nothing_of_its_batch(
    postgres_schema: PgSchema, postgres_cluster: PostgresCluster
) -> None:
    require_pgvector(postgres_cluster)
    with PgVectorIndex(
        postgres_schema.dsn, CountingEmbedder(broken=True), schema=postgres_schema.schema
    ) as index:
        with pytest.raises(EmbeddingError, match="shape"):
            index.index([record("never stored")])
        assert index.inputs().count == 0


def test_opening_with_another_embedder_empties_the_tables(
    vector_index: PgVectorIndex, postgres_schema: PgSchema
) -> None:
    vector_index.index([record("embedded with 256 dimensions")])
    with PgVectorIndex(
        postgres_schema.dsn, HashEmbedder(dimensions=64), schema=postgres_schema.schema
    ) as other:
        assert other.inputs().count == 0
        other.index([record("embedded with 64 dimensions")])
        assert other.recipe.params["dimensions"] == 64
        assert len(other.query("dimensions")) == 1


def test_more_dimensions_than_hnsw_takes_are_searched_exactly(
    postgres_schema: PgSchema, postgres_cluster: PostgresCluster
) -> None:
    require_pgvector(postgres_cluster)
    with PgVectorIndex(
        postgres_schema.dsn, HashEmbedder(dimensions=2048), schema=postgres_schema.schema
    ) as index:
        notes = [record("wide vectors here"), record("narrow ones there")]
        index.index(notes)
        assert index.recipe.params["search"] == "exact"
        assert "hnsw" not in index.explain("wide vectors")
        assert ids(index.query("wide vectors")) == [notes[0].id]


def _exact_top(notes: list[MemoryRecord], query: str, k: int) -> list[str]:
    embedder = HashEmbedder()
    matrix = embedder.embed([document_text(n) for n in notes]).astype(np.float64)
    scores = matrix @ embedder.embed([query])[0].astype(np.float64)
    ranked = sorted((-s, n.id) for s, n in zip(scores, notes, strict=True) if s > 0)
    return [record_id for _, record_id in ranked[:k]]


def test_a_query_for_more_hits_than_the_default_search_list_uses_hnsw_and_returns_them(
    vector_index: PgVectorIndex,
) -> None:
    rng = random.Random(7)  # noqa: S311 - test data, not secrets
    vocabulary = [f"topic{n}" for n in range(60)]
    notes = [record(" ".join(rng.sample(vocabulary, rng.randint(3, 8))) + f" n{n}") for n in range(1500)]
    # Loaded in two calls, the HNSW index grows row by row and the table has no statistics yet,
    # so the planner costs it as a large table (as it would a real one) and picks the index.
    vector_index.index(notes[:750])
    vector_index.index(notes[750:])
    query = " ".join(vocabulary[:6])
    for k in (200, 1100):
        plan = vector_index.explain(query, k=k)
        assert "Index Scan using vectors_entries_hnsw" in plan, plan
        hits = vector_index.query(query, k=k)
        exact = _exact_top(notes, query, k)
        assert len(hits) == len(exact)
        assert hits == sorted(hits, key=lambda h: (-h.score, h.record_id))
        assert len(set(ids(hits)) & set(exact)) >= 0.9 * len(exact)


def test_a_bulk_load_builds_the_hnsw_index_at_the_end_and_finds_what_an_exact_scan_finds(
    vector_index: PgVectorIndex, postgres_cluster: PostgresCluster
) -> None:
    rng = random.Random(11)  # noqa: S311 - test data, not secrets
    vocabulary = [f"topic{n}" for n in range(60)]
    notes = [record(" ".join(rng.sample(vocabulary, rng.randint(3, 8))) + f" n{n}") for n in range(2100)]
    vector_index.index(notes)
    with psycopg.connect(postgres_cluster.dsn) as admin:
        found = admin.execute(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND indexname = 'vectors_entries_hnsw'",
            (vector_index.schema,),
        ).fetchone()
    assert found is not None and "hnsw" in found[0]
    query = " ".join(vocabulary[10:16])
    assert len(set(ids(vector_index.query(query, k=50))) & set(_exact_top(notes, query, 50))) >= 45


# ---------------------------------------------------------------------- errors


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_an_unreachable_server_gives_a_store_error_naming_host_and_port() -> None:
    port = _closed_port()
    with pytest.raises(StoreError) as caught:
        PgTextIndex(f"postgresql://alice:pw-{os.getpid()}-hidden@127.0.0.1:{port}/memory")
    message = f"{caught.value}\n{caught.value.hint}"
    assert f"127.0.0.1:{port}" in message and "hidden" not in message


@pytest.mark.parametrize(
    ("schema", "name"), [('x"; DROP TABLE y; --', "ok"), ("ok", "Bad Name"), ("ok", "a" * 41)]
)
def test_schema_and_index_names_that_are_not_plain_identifiers_are_refused(schema: str, name: str) -> None:
    with pytest.raises(StoreError, match="refused"):
        PgTextIndex("postgresql://nobody@127.0.0.1:1/x", schema=schema, name=name)


def test_without_psycopg_the_module_imports_and_opening_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(StoreError, match="psycopg") as caught:
        PgTextIndex("postgresql://nobody@127.0.0.1:1/x")
    assert caught.value.hint == "pip install 'agent-memory[postgres]'"


def test_a_database_without_the_vector_extension_and_a_role_that_cannot_create_it_gets_a_hint(
    postgres_cluster: PostgresCluster,
) -> None:
    suffix = uuid.uuid4().hex[:12]
    database, role = f"novector_{suffix}", f"plain_{suffix}"
    with psycopg.connect(postgres_cluster.dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        admin.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(database), sql.Identifier(role))
        )
    try:
        dsn = f"postgresql://{role}@127.0.0.1:{postgres_cluster.port}/{database}"
        with pytest.raises(StoreError) as caught:
            PgVectorIndex(dsn, HashEmbedder(), schema="memory")
        assert "vector" in str(caught.value)
        assert caught.value.hint and "CREATE EXTENSION vector" in caught.value.hint
        with psycopg.connect(dsn) as conn:
            assert conn.execute("SELECT to_regclass('memory.vectors_entries')").fetchone() == (None,)
    finally:
        with psycopg.connect(postgres_cluster.dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(database)))
            admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
