"""`FtsIndex` beyond the contract: questions, stemming, CJK, erasure, threads, the query planner."""

from __future__ import annotations

import random
import sqlite3
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from search_kit import record

from agent_memory.search import fts_merge
from agent_memory.search.fts import QUERY_MODES, TOKENIZER, FtsIndex, QueryMode
from agent_memory.search.fts_query import (
    STOPWORDS,
    Term,
    content_terms,
    or_terms,
    prepare_document,
    prepare_query,
    quote,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def fts(tmp_path: Path) -> Iterator[FtsIndex]:
    with FtsIndex(tmp_path / "fts.sqlite", clock=lambda: T0) as index:
        yield index


# ---------------------------------------------------------------------- natural-language questions

# (note, a question it answers); every other note is a distractor for that question.
ANSWERS = [
    ("The staging database moved to PostgreSQL 16 on 2026-11-29.", "When did staging move to Postgres 16?"),
    ("Caroline's adoption agency interview is on May 7 at 10am.", "What is on May 7?"),
    ("Melanie painted a sunrise over the lake last weekend.", "What did Melanie paint?"),
    ("The API rate limit is 600 requests per minute per token.", "How many requests per minute can we make?"),
    ("Deploys to production need approval from the on-call SRE.", "Who has to approve a production deploy?"),
    ("Ana is allergic to peanuts and shellfish.", "Is Ana allergic to anything?"),
    ("The Wi-Fi password for the Lisbon office is on the fridge.", "Where's the wifi password in Lisbon?"),
    ("Backups run nightly at 02:00 UTC and are kept for 35 days.", "How long are backups kept?"),
    ("Jon's favourite café is Café Nicola in Rossio.", "Which cafe does Jon like?"),
    ("The invoice for order #4471 was paid by bank transfer.", "Was order 4471 paid?"),
    ("Sprint planning happens every second Tuesday at 9:30.", "When is sprint planning?"),
    ("The user prefers answers in British English, short and direct.", "How does the user like answers?"),
    (
        "Kubernetes nodes are upgraded one at a time with a drain first.",
        "How are Kubernetes nodes upgraded?",
    ),
    ("Caroline researched adoption agencies for LGBTQ+ parents.", "What did Caroline research?"),
    ("The flight to Tokyo leaves Lisbon on 3 March 2027 at 07:15.", "When does my flight to Tokyo leave?"),
    ("Running the test suite takes about 12 seconds on CI.", "how long do tests run on CI"),
]
DISTRACTORS = [
    "Melanie went camping with her kids in July.",
    "Caroline met her friends at the LGBTQ support group.",
    "The production cluster runs in eu-west-1.",
    "Postgres connection pooling uses pgbouncer.",
    "The office coffee machine was repaired on Monday.",
    "Ana moved to Porto in 2024.",
    "Tuesday is the day the cleaners come.",
]


@pytest.mark.parametrize("mode", QUERY_MODES)
def test_questions_find_the_note_that_answers_them_among_distractors(tmp_path: Path, mode: QueryMode) -> None:
    notes = [record(note) for note, _ in ANSWERS]
    with FtsIndex(tmp_path / "fts.sqlite", mode=mode) as index:
        index.index([*notes, *(record(text) for text in DISTRACTORS)])
        for note, (_, question) in zip(notes, ANSWERS, strict=True):
            assert index.query(question, k=3)[0].record_id == note.id, question


def test_notes_with_every_query_word_come_before_notes_with_some(fts: FtsIndex) -> None:
    both = record("red apple pie")
    rare_only = [record(f"the rare word zymurgy once {n}") for n in range(3)]
    common = [record(f"red apple number {n}") for n in range(30)]
    fts.index([both, *rare_only, *common])
    hits = fts.query("zymurgy red apple pie", k=5)
    assert hits[0].record_id == both.id
    assert {h.record_id for h in hits[1:4]} == {r.id for r in rare_only}


# ---------------------------------------------------------------------- stemming, diacritics, width


@pytest.mark.parametrize(
    ("note", "query"),
    [
        ("We met at the café downtown.", "cafe"),
        ("We met at the cafe downtown.", "café"),
        ("She is running the marathon.", "run"),
        ("He runs every morning.", "running"),
        ("The Ångström unit", "angstrom"),
        ("Naïve Bayes classifier", "naive"),
        ("ＡＢＣ full-width letters", "abc"),
        ("The ﬁle ligature", "file"),
        ("STRASSE in capitals", "strasse"),
    ],
)
def test_stemming_case_diacritics_and_width_are_folded(fts: FtsIndex, note: str, query: str) -> None:
    target = record(note)
    fts.index([target, record("An unrelated note about gardening.")])
    assert [h.record_id for h in fts.query(query)] == [target.id]


# ---------------------------------------------------------------------- text without spaces

CJK_NOTES = [
    "我很喜欢喝咖啡，特别是早上。",
    "明天下午三点在北京开会。",
    "她的猫叫小白，今年五岁。",
    "東京に行きました。とても楽しかったです。",
    "私はコーヒーが好きです。",
    "ประชุมวันพรุ่งนี้ที่กรุงเทพ",
    "서울에서 커피를 마셨다",
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("咖", 0),  # one character
        ("咖啡", 0),  # two
        ("喜欢喝咖啡", 0),  # a longer run
        ("北京", 1),
        ("开会", 1),
        ("猫", 2),
        ("小白几岁", 2),  # a question whose bigrams partly match
        ("東京", 3),
        ("楽しかった", 3),
        ("コーヒー", 4),
        ("好き", 4),
        ("กรุงเทพ", 5),
        ("서울", 6),
        ("커피", 6),
    ],
)
def test_text_without_spaces_is_found_by_runs_of_any_length(fts: FtsIndex, query: str, expected: int) -> None:
    notes = [record(text) for text in CJK_NOTES]
    fts.index([*notes, record("Coffee in English only.")])
    hits = fts.query(query, k=3)
    assert hits and hits[0].record_id == notes[expected].id


def test_cjk_mixed_with_latin_words_finds_both(fts: FtsIndex) -> None:
    note = record("Python教程第三章")
    fts.index([note, record("Python tutorial chapter three")])
    assert fts.query("教程", k=1)[0].record_id == note.id
    assert {h.record_id for h in fts.query("python", k=5)} >= {note.id}


def test_unspaced_runs_become_bigrams_and_documents_keep_unigrams() -> None:
    assert prepare_query("喜欢咖啡").split() == ["喜欢", "欢咖", "咖啡"]
    assert prepare_document("咖啡").split() == ["咖", "啡", "咖啡"]
    assert prepare_query("咖 x").split() == ["咖", "x"]
    assert prepare_query("。、・").strip() == "。、・"  # punctuation stays a separator


# ---------------------------------------------------------------------- the query planner


def terms(*tokens: str) -> list[Term]:
    return [Term(token, token) for token in tokens]


def test_stopwords_are_dropped_unless_nothing_else_remains() -> None:
    assert [t.token for t in content_terms(terms("what", "did", "caroline", "s", "paint"))] == [
        "caroline",
        "paint",
    ]
    assert [t.token for t in content_terms(terms("it", "is", "what", "it", "is"))] == ["it", "is", "what"]
    assert [t.token for t in content_terms(terms("to", "be", "or", "not", "to", "be"))] == ["not"]
    assert {"the", "what", "s", "t"} <= STOPWORDS


def test_may_next_to_a_number_is_a_month() -> None:
    assert [t.token for t in content_terms(terms("what", "is", "on", "may", "7"))] == ["may", "7"]
    assert [t.token for t in content_terms(terms("7", "may", "2023"))] == ["7", "may", "2023"]
    assert [t.token for t in content_terms(terms("it", "may", "rain"))] == ["rain"]


def test_or_terms_keep_the_rarest_and_drop_very_common_ones() -> None:
    query = terms("common", "medium", "rare", "absent")
    df = {"common": 900, "medium": 50, "rare": 2}
    assert [t.token for t in or_terms(query, df, 1000, cap=8, max_share=0.1)] == ["medium", "rare"]
    assert [t.token for t in or_terms(query, df, 1000, cap=1, max_share=0.1)] == ["rare"]
    assert [t.token for t in or_terms(terms("common"), df, 1000, cap=8, max_share=0.1)] == ["common"]
    assert or_terms(terms("absent"), df, 1000, cap=8) == []


def test_quote_doubles_inner_quotes() -> None:
    assert quote('say "hi"') == '"say ""hi"""'


def test_an_unknown_query_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown query mode"):
        FtsIndex(tmp_path / "x.sqlite", mode="fuzzy")  # type: ignore[arg-type]


# ---------------------------------------------------------------------- the cache itself


def test_recipe_names_the_tokenizer_and_query_rules(fts: FtsIndex) -> None:
    recipe = fts.recipe.to_json()
    assert recipe["kind"] == "bm25"
    assert recipe["name"] == "bm25"
    assert recipe["tokenizer"] == TOKENIZER == "porter unicode61 remove_diacritics 2"
    assert recipe["fields"] == ["body", "tags"]
    assert recipe["stopwords"] == "origin-62+questions"
    assert recipe["query"] == "and-then-or"


def test_built_at_comes_from_the_clock_on_every_change(tmp_path: Path) -> None:
    now = [T0]
    with FtsIndex(tmp_path / "fts.sqlite", clock=lambda: now[0]) as index:
        assert index.inputs().built_at is None
        index.index([record("first")])
        assert index.inputs().built_at == T0
        now[0] = T0 + timedelta(hours=1)
        index.remove(["mem:" + "0" * 32])
        assert index.inputs().built_at == T0 + timedelta(hours=1)


def test_a_reopened_file_keeps_its_rows(tmp_path: Path) -> None:
    note = record("persisted across opens")
    with FtsIndex(tmp_path / "fts.sqlite") as index:
        index.index([note])
        before = index.inputs()
    with FtsIndex(tmp_path / "fts.sqlite") as index:
        assert index.inputs() == before
        assert index.query("persisted")[0].record_id == note.id


def test_a_file_of_another_schema_is_emptied_on_open(tmp_path: Path) -> None:
    path = tmp_path / "fts.sqlite"
    with FtsIndex(path) as index:
        index.index([record("old schema row")])
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = 'agent-memory-fts/0' WHERE key = 'schema'")
    conn.close()
    with FtsIndex(path) as index:
        assert index.inputs().count == 0
        assert index.query("old schema row") == []


def test_an_in_memory_index_works() -> None:
    with FtsIndex(":memory:") as index:
        index.index([record("kept in memory")])
        index.purge()
        assert index.query("memory")[0].score > 0


def test_removed_text_leaves_no_byte_in_the_files_after_purge(tmp_path: Path) -> None:
    path = tmp_path / "fts.sqlite"
    erased = "xylophonist-quokka-4471"
    with FtsIndex(path) as index:
        keep = [record(f"ordinary note number {n} about gardening") for n in range(200)]
        doomed = record(f"The door code is {erased}, do not share.", tags=("zanzibarite",))
        index.index([*keep, doomed])
        index.remove([doomed.id])
        index.purge()
        files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
        raw = b"".join(f.read_bytes() for f in files if f.exists())
        for word in ("xylophonist", "quokka", "4471", "zanzibarite", "door code"):
            assert word.encode() not in raw, word
        # The index stores Porter stems; a prefix of each word covers any stem of it.
        assert b"xylophon" not in raw and b"zanzibar" not in raw
        assert index.query("gardening", k=1)


def test_threads_can_index_and_query_at_the_same_time(tmp_path: Path) -> None:
    errors: list[BaseException] = []
    with FtsIndex(tmp_path / "fts.sqlite") as index:

        def writer(n: int) -> None:
            try:
                for batch in range(5):
                    index.index(record(f"thread {n} batch {batch} note {i} lighthouse") for i in range(20))
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        def reader() -> None:
            try:
                for _ in range(20):
                    hits = index.query("lighthouse note", k=10)
                    assert hits == sorted(hits, key=lambda h: (-h.score, h.record_id))
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
        threads += [threading.Thread(target=reader) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert index.inputs().count == 3 * 5 * 20


def test_the_row_count_kept_for_queries_follows_adds_replacements_and_removals(tmp_path: Path) -> None:
    path = tmp_path / "fts.sqlite"

    def kept() -> tuple[int, int]:
        with sqlite3.connect(path) as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'count'").fetchone()
            (rows,) = conn.execute("SELECT count(*) FROM docs").fetchone()
        conn.close()
        return int(row[0]), rows

    notes = [record(f"note number {i} about counting") for i in range(6)]
    with FtsIndex(path) as index:
        index.index(notes[:4])
        assert kept() == (4, 4)
        index.index([notes[0].evolve(tags=("again",)), notes[1], *notes[4:]])  # one replaced, two new
        assert kept() == (6, 6)
        index.remove([notes[2].id, notes[2].id, "mem:" + "0" * 32])  # unknown and repeated ids count once
        assert kept() == (5, 5)
        index.index([])
        assert kept() == (5, 5)
    with FtsIndex(path) as index:  # reopened: the count was stored, not held in the process
        index.remove([n.id for n in notes])
        assert kept() == (0, 0)


def _block_writes(index: FtsIndex, action: Callable[[], object]) -> int:
    """Return how many blocks FTS5 wrote to its data table while ``action`` ran."""
    written: list[str] = []
    index._conn.set_trace_callback(
        lambda sql: written.append(sql) if sql.startswith("-- REPLACE INTO 'main'.'fts_data'") else None
    )
    try:
        action()
    finally:
        index._conn.set_trace_callback(None)
    return len(written)


def test_a_batch_is_written_as_a_few_index_blocks_not_a_segment_per_note(tmp_path: Path) -> None:
    # FTS5 writes its pending terms out as a segment at every statement savepoint (an INSERT
    # ... SELECT takes one per row) and whenever a rowid is below the last one written: a batch
    # once left a segment per note and merged them as it went (issue 23; 923 blocks here).
    notes = [record(f"note {n} about the greenhouse, batch seven") for n in range(300)]
    with FtsIndex(tmp_path / "fts.sqlite") as index:
        assert 0 < _block_writes(index, lambda: index.index(notes)) < 30
        assert len(index.query("greenhouse", k=500)) == 300
        # New versions of half the notes, in no order: their old rows go in rowid order too.
        changed = [note.evolve(tags=("watered",)) for note in notes[::2]]
        random.Random(7).shuffle(changed)  # noqa: S311 - a reproducible order, not a secret
        assert 0 < _block_writes(index, lambda: index.index(changed)) < 30
        removed = [note.id for note in notes[1::4]]
        random.Random(8).shuffle(removed)  # noqa: S311 - a reproducible order, not a secret
        assert 0 < _block_writes(index, lambda: index.remove(removed)) < 30
        assert len(index.query("watered", k=500)) == 150
        assert len(index.query("greenhouse", k=500)) == 300 - 75


def _merges(index: FtsIndex, action: Callable[[], object]) -> int:
    """Return how many FTS5 ``optimize`` merges ran while ``action`` ran."""
    merges: list[str] = []
    index._conn.set_trace_callback(lambda sql: merges.append(sql) if "VALUES ('optimize')" in sql else None)
    try:
        action()
    finally:
        index._conn.set_trace_callback(None)
    return len(merges)


def test_the_segments_are_merged_once_a_tenth_of_the_index_was_written_since(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fts_merge, "MERGE_ROWS", 100)
    words = ["greenhouse", "tomato", "basil", "watering", "compost", "seedling", "trellis", "mulch"]
    notes = [record(f"note {n}: {words[n % 8]} and {words[n * 3 % 8]} in bed {n % 13}") for n in range(1_400)]
    path, unmerged = tmp_path / "merged.sqlite", tmp_path / "unmerged.sqlite"
    with FtsIndex(path) as index:
        # 500 rows: due at once (at least 100 rows, a tenth of 500); 900 more: due again
        # (a tenth of 1,400 is 140); 60 new versions one at a time, an old row deleted and a
        # new one written each: 120 rows, not due.
        assert _merges(index, lambda: index.index(notes[:500])) == 1
        assert _merges(index, lambda: index.index(notes[500:])) == 2
        assert _merges(index, lambda: [index.index([n.evolve(tags=("x",))]) for n in notes[:60]]) == 0
        assert index._conn.execute("SELECT value FROM meta WHERE key = 'unmerged'").fetchone() == ("120",)
        # Removals count too: 80 more rows makes 200, over a tenth of the 1,320 left.
        assert _merges(index, lambda: index.remove([n.id for n in notes[60:140]])) == 1
        merged = [index.query(f"{words[i]} {words[(i + 3) % 8]} bed", k=50) for i in range(8)]
    monkeypatch.setattr(fts_merge, "MERGE_ROWS", 10**9)
    with FtsIndex(unmerged) as index:
        index.index(notes)
        index.index([n.evolve(tags=("x",)) for n in notes[:60]])
        index.remove([n.id for n in notes[60:140]])
        assert _merges(index, lambda: index.index(notes[140:150])) == 0
        # The merge changes the layout only: the same hits with the same scores.
        assert [index.query(f"{words[i]} {words[(i + 3) % 8]} bed", k=50) for i in range(8)] == merged
