r"""The SQL text of :class:`~agent_memory.search.postgres.PgTextIndex`: tables, writes and the one query.

Kept apart from the index so the schema and the query's rules read in one place. ``{docs}``,
``{words}``, ``{meta}`` and ``{gin}`` are the index's tables and GIN index (identifiers
formatted in by psycopg's ``sql`` module); ``%(name)s`` are bound parameters.

Tables of format ``agent-memory-pg-fulltext/3``:

- ``<name>_docs(record_id, version, tsv, card)``: one row per record, its lexemes with positions
  and its :class:`~agent_memory.records.card.Card` (what recall ranks it by);
- ``<name>_words(lexeme, docs)``: how many rows of ``docs`` hold each lexeme (the word
  statistics an "any of these words" query needs), kept by the writers in the statement
  that changes ``docs``; a lexeme no row holds has no row (so an erased note's words leave);
- ``<name>_meta``: ``format``, ``built_at`` and ``count`` (the rows of ``docs``), the last
  also kept by the writers.

Writers take the index's advisory lock first (one writer at a time per index), so the
statistics are exact: every delta is computed from the rows as they are under the lock.

:data:`QUERY` answers a search in one statement, so one round trip: it stems the query's
words with the server's ``english_stem`` (as documents are stemmed), keeps the content
terms (:func:`~agent_memory.search.fts_query.content_terms`: each stem once, in order of
first appearance; the stopwords only when the query has nothing else, the per-word flags
coming from :func:`~agent_memory.search.fts_query.content_flags`), matches all of them
(when there are at most ``most``), and, when that finds fewer than ``k`` notes and there
is more than one term, any of the ``cap`` rarest present ones
(:func:`~agent_memory.search.fts_query.or_terms`: from ``small`` notes on, leaving out the
words in more than ``share`` of the notes unless every present word is). Rows are
``(part, record_id, score)``, part 1 the AND hits and part 2 the OR hits, each best first,
ties by record id. Lexemes are quoted for ``tsquery`` input as
:func:`~agent_memory.search.postgres_text.quote_lexeme` quotes them (``\`` escaped, ``'``
doubled), so no word is ever read as syntax.
"""

from __future__ import annotations

__all__ = ["CARDS", "DDL", "DELETE_EMPTY", "QUERY", "REMOVE", "WRITE"]

CARDS = "SELECT record_id, card FROM {docs} WHERE record_id = ANY(%(ids)s)"

DDL = """
CREATE TABLE {docs} (
    record_id text COLLATE "C" PRIMARY KEY,
    version text NOT NULL,
    tsv tsvector NOT NULL,
    card text NOT NULL
);
CREATE INDEX {gin} ON {docs} USING gin (tsv) WITH (fastupdate = off);
CREATE TABLE {words} (lexeme text COLLATE "C" PRIMARY KEY, docs integer NOT NULL);
-- No planner statistics on lexemes: pg_statistic would keep samples of removed notes.
ALTER TABLE {docs} ALTER tsv SET STATISTICS 0;
ALTER TABLE {words} ALTER lexeme SET STATISTICS 0;
INSERT INTO {meta} (key, value) VALUES ('count', '0')
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value;
"""

# Rows of one batch replace those of their ids; the words' counts move by what the rows
# gained and lost; RETURNING gives the counts now, so the caller deletes those at zero.
WRITE = """
WITH input AS (
    SELECT * FROM unnest(%(ids)s::text[], %(versions)s::text[], %(tsvs)s::tsvector[], %(cards)s::text[])
        AS i(record_id, version, tsv, card)
), old AS (
    SELECT d.record_id, d.tsv FROM {docs} d JOIN input i ON i.record_id = d.record_id
), upserted AS (
    INSERT INTO {docs} (record_id, version, tsv, card) SELECT record_id, version, tsv, card FROM input
    ON CONFLICT (record_id) DO UPDATE SET version = EXCLUDED.version, tsv = EXCLUDED.tsv, card = EXCLUDED.card
), counted AS (
    UPDATE {meta}
    SET value = (value::bigint + (SELECT count(*) FROM input) - (SELECT count(*) FROM old))::text
    WHERE key = 'count'
), delta AS (
    SELECT lexeme, sum(n)::integer AS n FROM (
        SELECT unnest(tsvector_to_array(tsv)) AS lexeme, 1 AS n FROM input
        UNION ALL SELECT unnest(tsvector_to_array(tsv)), -1 FROM old
    ) AS moved GROUP BY lexeme HAVING sum(n) <> 0
)
INSERT INTO {words} AS w (lexeme, docs) SELECT lexeme, n FROM delta ORDER BY lexeme
ON CONFLICT (lexeme) DO UPDATE SET docs = w.docs + EXCLUDED.docs
RETURNING w.lexeme, w.docs
"""

REMOVE = """
WITH gone AS (
    DELETE FROM {docs} WHERE record_id = ANY(%(ids)s) RETURNING tsv
), counted AS (
    UPDATE {meta} SET value = (value::bigint - (SELECT count(*) FROM gone))::text WHERE key = 'count'
), delta AS (
    SELECT lexeme, count(*)::integer AS n FROM gone, unnest(tsvector_to_array(gone.tsv)) AS lexeme
    GROUP BY lexeme
)
UPDATE {words} AS w SET docs = w.docs - delta.n FROM delta WHERE w.lexeme = delta.lexeme
RETURNING w.lexeme, w.docs
"""

DELETE_EMPTY = "DELETE FROM {words} WHERE lexeme = ANY(%(lexemes)s) AND docs <= 0"

QUERY = r"""
WITH asked AS (
    SELECT coalesce((ts_lexize('pg_catalog.english_stem'::regdictionary, w))[1], w) COLLATE "C" AS lexeme,
        keep, at
    FROM unnest(%(words)s::text[], %(keep)s::boolean[]) WITH ORDINALITY AS a(w, keep, at)
), terms AS (
    SELECT lexeme, row_number() OVER (ORDER BY min(at)) AS n,
        '''' || replace(replace(lexeme, E'\\', E'\\\\'), '''', '''''') || '''' AS quoted
    FROM asked GROUP BY lexeme
    HAVING bool_or(keep) OR NOT (SELECT bool_or(keep) FROM asked)
), and_query AS (
    SELECT string_agg(quoted, ' & ' ORDER BY n)::tsquery AS q
    FROM terms HAVING count(*) <= %(most)s
), and_hits AS (
    SELECT record_id, ts_rank(tsv, (SELECT q FROM and_query), 1) AS score FROM {docs}
    WHERE tsv @@ (SELECT q FROM and_query) ORDER BY score DESC, record_id LIMIT %(k)s
), total AS (
    SELECT coalesce((SELECT value::bigint FROM {meta} WHERE key = 'count'), 0) AS notes
), present AS (
    SELECT t.lexeme, t.n, t.quoted, w.docs AS df FROM terms t JOIN {words} w ON w.lexeme = t.lexeme
    WHERE t.n <= %(most)s AND w.docs > 0
), rare AS (
    SELECT p.lexeme, p.n, p.quoted, p.df FROM present p, total
    WHERE total.notes < %(small)s OR p.df <= %(share)s::float8 * total.notes
        OR NOT EXISTS (SELECT 1 FROM present c WHERE c.df <= %(share)s::float8 * total.notes)
), chosen AS (
    SELECT lexeme, n, quoted FROM rare ORDER BY df, lexeme LIMIT %(cap)s
), or_query AS (
    SELECT string_agg(quoted, ' | ' ORDER BY n)::tsquery AS q
    FROM chosen
    HAVING (SELECT count(*) FROM and_hits) < %(k)s AND (SELECT count(*) FROM terms) > 1
), or_hits AS (
    SELECT record_id, ts_rank(tsv, (SELECT q FROM or_query), 1) AS score FROM {docs}
    WHERE tsv @@ (SELECT q FROM or_query) ORDER BY score DESC, record_id LIMIT %(k)s
)
SELECT 1 AS part, record_id, score FROM and_hits
UNION ALL SELECT 2, record_id, score FROM or_hits
"""
