"""`PgTextIndex`'s word statistics and its one-statement query (issues 10 and 23).

The writers keep how many notes hold each word (``<name>_words``) and how many notes there
are; the frequencies decide which words an "any of these words" query uses (a word no note
holds is left out), so they must be exact after any writes, removals and concurrent writers,
and a reader must see another writer's words at its next query. The query applies the FTS5
index's term rules on the server, in one statement: its answers are checked against those
rules applied in Python to counts taken from the rows themselves. Runs on the session's
private cluster (tests/pg.py).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import psycopg
import pytest
from psycopg import sql
from search_kit import ids, record

from agent_memory.search.base import Hit
from agent_memory.search.fts_query import STOPWORDS, Term, content_terms, or_terms
from agent_memory.search.postgres import PgTextIndex
from agent_memory.search.postgres_text import and_query, or_query, query_words, quote_lexeme
from pg import PgSchema, PostgresCluster, shared_cluster
from pg_indexes import drop_schema

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def postgres_schema() -> Iterator[PgSchema]:
    cluster: PostgresCluster = shared_cluster()
    schema = f"t_{uuid.uuid4().hex}"
    yield PgSchema(cluster.dsn, schema)
    drop_schema(cluster, schema)


def test_a_word_another_writer_just_added_is_searched_at_the_next_query(postgres_schema: PgSchema) -> None:
    dsn, schema = postgres_schema.dsn, postgres_schema.schema
    with PgTextIndex(dsn, schema=schema) as reader, PgTextIndex(dsn, schema=schema) as writer:
        writer.index([record(f"Notes about the garden, day {n}.") for n in range(12)])
        writer.index([record("The garden gate is painted green.")])
        question = "Who painted the zebra fence in the garden?"
        before = reader.query(question, k=5)
        assert before and all("zebra" not in h.record_id for h in before)
        zebra = record("A zebra crossing was painted near the school.")
        writer.index([zebra])  # another connection: the reader's counts are now out of date
        after = reader.query(question, k=5)
        with PgTextIndex(dsn, schema=schema) as fresh:
            assert ids(after) == ids(fresh.query(question, k=5))
        assert zebra.id in ids(after)


def test_the_readers_own_writes_and_removals_refresh_its_counts(postgres_schema: PgSchema) -> None:
    dsn, schema = postgres_schema.dsn, postgres_schema.schema
    with PgTextIndex(dsn, schema=schema) as index:
        index.index([record(f"Lunch with Ana on day {n}.") for n in range(8)])
        question = "lunch with ana or a walrus"
        first = index.query(question, k=20)
        walrus = record("The walrus at the zoo was fed at noon.")
        index.index([walrus])
        assert walrus.id in ids(index.query(question, k=20))
        index.remove([walrus.id])
        assert ids(index.query(question, k=20)) == ids(first)
        with PgTextIndex(dsn, schema=schema) as fresh:
            assert ids(index.query(question, k=20)) == ids(fresh.query(question, k=20))


# ---------------------------------------------------------------------- the word statistics


def table(index: PgTextIndex, suffix: str) -> sql.Composed:
    return sql.Identifier(index.schema, f"{index.name}_{suffix}")


def counted_from_rows(dsn: str, index: PgTextIndex) -> tuple[dict[str, int], int]:
    """Return each lexeme's note count and the note count, counted from the rows of ``docs``."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            sql.SQL(
                "SELECT lexeme, count(*) FROM {}, unnest(tsvector_to_array(tsv)) AS lexeme GROUP BY lexeme"
            ).format(table(index, "docs"))
        ).fetchall()
        notes = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(table(index, "docs"))).fetchone()
    return {str(lexeme): int(n) for lexeme, n in rows}, int(notes[0]) if notes else 0


def kept_statistics(dsn: str, index: PgTextIndex) -> tuple[dict[str, int], int]:
    """Return the word statistics the writers kept: ``<name>_words`` and the count in ``meta``."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        words = conn.execute(sql.SQL("SELECT lexeme, docs FROM {}").format(table(index, "words"))).fetchall()
        notes = conn.execute(
            sql.SQL("SELECT value FROM {} WHERE key = 'count'").format(table(index, "meta"))
        ).fetchone()
    return {str(lexeme): int(n) for lexeme, n in words}, int(notes[0]) if notes else -1


def test_the_word_counts_follow_every_write_replacement_and_removal(postgres_schema: PgSchema) -> None:
    dsn, schema = postgres_schema.dsn, postgres_schema.schema
    with PgTextIndex(dsn, schema=schema) as index:
        notes = [record(f"Garden note {n}: roses, tulips and {n % 7} gnomes.") for n in range(40)]
        index.index(notes)
        index.index([notes[3].evolve(tags=("walrus", "roses")), record("A second walrus.")])
        index.remove([notes[5].id, notes[6].id, "mem:unknown"])
        index.index([notes[5]])  # back again
        index.remove([n.id for n in notes[20:]])
        assert kept_statistics(dsn, index) == counted_from_rows(dsn, index)
        index.remove([n.id for n in notes] + [record("A second walrus.").id])
        assert kept_statistics(dsn, index) == ({}, 0)  # no word of a removed note is left behind


def test_concurrent_writers_of_overlapping_notes_keep_the_counts_exact(postgres_schema: PgSchema) -> None:
    dsn, schema = postgres_schema.dsn, postgres_schema.schema
    PgTextIndex(dsn, schema=schema).close()
    shared = [record(f"shared note {n} about apples and pears") for n in range(30)]

    def write(worker: int) -> None:
        rng = random.Random(worker)  # noqa: S311 - reproducible test data
        with PgTextIndex(dsn, schema=schema) as index:
            for round_ in range(6):
                picked = rng.sample(shared, 10)
                index.index([n.evolve(tags=(f"v{worker}x{round_}", "pears")) for n in picked])
                index.index([record(f"worker {worker} round {round_} own words w{worker}r{round_}")])
                index.remove([rng.choice(shared).id])

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(write, range(4)))
    with PgTextIndex(dsn, schema=schema) as index:
        assert kept_statistics(dsn, index) == counted_from_rows(dsn, index)


# ---------------------------------------------------------------------- the one-statement query


def reference_query(dsn: str, index: PgTextIndex, text: str, k: int) -> list[Hit]:
    """Answer ``text`` as the index did before its query moved to the server (issue 23).

    Stems from the server, the term rules of :mod:`agent_memory.search.fts_query` in Python,
    document frequencies counted from the rows, then the AND query and the OR fallback.
    """
    found = query_words(text)
    if not found:
        return []
    docs = table(index, "docs")
    with psycopg.connect(dsn, autocommit=True) as conn:
        stems = dict(
            conn.execute(
                "SELECT w, coalesce((ts_lexize('english_stem', w))[1], w) FROM unnest(%s::text[]) AS w",
                (found,),
            ).fetchall()
        )

        def match(tsquery: str) -> list[Hit]:
            rows = conn.execute(
                sql.SQL(
                    "SELECT record_id, ts_rank(tsv, %(q)s::tsquery, 1) AS score FROM {}"
                    " WHERE tsv @@ %(q)s::tsquery ORDER BY score DESC, record_id LIMIT %(k)s"
                ).format(docs),
                {"q": tsquery, "k": k},
            ).fetchall()
            return [Hit(str(r), float(s)) for r, s in rows]

        terms = content_terms([Term(word, stems[word]) for word in found])
        hits: list[Hit] = []
        if len(terms) <= 64:
            hits = match(and_query(t.stem for t in terms))
            if len(hits) >= k or len(terms) == 1:
                return hits
        considered = terms[:64]
        df = {}
        for term in considered:
            row = conn.execute(
                sql.SQL("SELECT count(*) FROM {} WHERE tsv @@ %s::tsquery").format(docs),
                (quote_lexeme(term.stem),),
            ).fetchone()
            df[term.stem] = int(row[0]) if row else 0
        total_row = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(docs)).fetchone()
        chosen = or_terms(considered, df, int(total_row[0]) if total_row else 0, cap=8, max_share=0.1)
        if not chosen:
            return hits
        held = {h.record_id for h in hits}
        others = [h for h in match(or_query(t.stem for t in chosen)) if h.record_id not in held][
            : k - len(hits)
        ]
        if not hits or not others:
            return hits + others
        return [Hit(h.record_id, h.score + others[0].score) for h in hits] + others


VOCABULARY = [f"w{n}" for n in range(60)] + [
    "running",
    "runs",
    "ran",
    "garden",
    "gardens",
    "may",
    "7",
    "2024",
]


def corpus_note(rng: random.Random) -> str:
    words = rng.choices(
        VOCABULARY, weights=[1 / (i + 1) for i in range(len(VOCABULARY))], k=rng.randint(3, 12)
    )
    return " ".join(words + rng.sample(sorted(STOPWORDS), 2))


def test_the_server_side_query_answers_as_the_term_rules_do(postgres_schema: PgSchema) -> None:
    dsn, schema = postgres_schema.dsn, postgres_schema.schema
    rng = random.Random(23)  # noqa: S311 - reproducible test data
    with PgTextIndex(dsn, schema=schema) as index:
        notes = [record(f"{corpus_note(rng)} n{n}") for n in range(1200)]  # past the small-index rule
        index.index(notes)
        index.remove([n.id for n in notes[:40]])
        questions = [
            "the of and",  # stopwords only: they are searched
            "What happened on May 7?",  # "may" beside a number is a month
            "may the garden",
            "w0 w1 w2",  # words in more than a tenth of the notes
            "w0 w59 zebra",  # a word no note holds
            "gardens running ran",  # word forms share stems
            " ".join(f"w{n}" for n in range(60)) + " runs garden 2024 n5 n6",  # more than 64 terms
            "n77",
            "zebra quagga",
        ] + [" ".join(rng.sample(VOCABULARY, rng.randint(1, 6))) for _ in range(40)]
        for question in questions:
            for k in (5, 100):
                assert index.query(question, k=k) == reference_query(dsn, index, question, k), (question, k)


def test_a_query_is_one_round_trip(postgres_schema: PgSchema, monkeypatch: pytest.MonkeyPatch) -> None:
    dsn, schema = postgres_schema.dsn, postgres_schema.schema
    with PgTextIndex(dsn, schema=schema) as index:
        index.index([record(f"Lunch with Ana on day {n}.") for n in range(8)])
        index.query("warm the connection")
        waits = []
        original = psycopg.Connection.wait

        def counted(self: psycopg.Connection[tuple[object, ...]], *args: object, **kwargs: object) -> object:
            waits.append(1)
            return original(self, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(psycopg.Connection, "wait", counted)
        hits = index.query("lunch with a walrus on day 3", k=20)  # AND finds nothing: OR runs
        assert len(hits) == 8
        assert len(waits) == 1
