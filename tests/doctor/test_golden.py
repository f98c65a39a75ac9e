"""Golden recall tests: strict golden.yaml, ids followed through superseded_by, skips, misses, recall@k."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_memory.doctor.golden import GoldenQuestion, load_golden, run_golden
from agent_memory.errors import ConfigError
from agent_memory.home import Home
from agent_memory.memory import Memory
from agent_memory.search.recipes import BUILTIN_RECIPES

T0 = datetime(2026, 6, 1, tzinfo=UTC)
NOW = T0 + timedelta(days=2)
ID = "mem:" + "0123456789abcdef" * 2


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "golden.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_file_init_writes_holds_no_questions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    home = Home.init(tmp_path / "home", git=False)
    assert load_golden(home.root / "golden.yaml") == []
    assert load_golden(write(tmp_path, "")) == []
    assert load_golden(write(tmp_path, "# only a comment\n")) == []


def test_entries_are_read_by_id_or_by_text_with_their_k(tmp_path: Path) -> None:
    text = f"- query: which host runs staging?\n  expect: {ID}\n  k: 3\n"
    text += "- query: 2024\n  expect: {contains: ' tea '}\n"
    assert load_golden(write(tmp_path, text)) == [
        GoldenQuestion(1, "which host runs staging?", expect_id=ID, k=3),
        GoldenQuestion(2, "2024", contains="tea", k=5),
    ]


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ("query: x\nexpect: y\n", None, "must be a list of questions"),
        ("- just a string\n", "entry 1", "must be a mapping"),
        (f"- query: a\n  expect: {ID}\n- query: b\n", "entry 2.expect", "missing"),
        (f"- expect: {ID}\n", "entry 1.query", "missing"),
        (f"- query: a\n  expect: {ID}\n  why: because\n", "entry 1", "unknown key 'why'"),
        (f"- query: a\n  query: b\n  expect: {ID}\n", "entry 1.query", "duplicate key"),
        (f"- query: ''\n  expect: {ID}\n", "entry 1.query", "non-empty text"),
        (f"- query:\n  expect: {ID}\n", "entry 1.query", "non-empty text"),
        ("- query: a\n  expect: mem:123\n", "entry 1.expect", "record id"),
        ("- query: a\n  expect: {contains: ''}\n", "entry 1.expect", "contains must be non-empty"),
        ("- query: a\n  expect: {text: tea}\n", "entry 1.expect", "record id"),
        ("- query: a\n  expect: [tea]\n", "entry 1.expect", "record id"),
        (f"- query: a\n  expect: {ID}\n  k: 0\n", "entry 1.k", "from 1 to 100"),
        (f"- query: a\n  expect: {ID}\n  k: 101\n", "entry 1.k", "from 1 to 100"),
        (f"- query: a\n  expect: {ID}\n  k: '5'\n", "entry 1.k", "from 1 to 100"),
        (f"- query: a\n  expect: {ID}\n  k: 5.0\n", "entry 1.k", "from 1 to 100"),
        (f"- query: a\n  expect: {ID}\n  k: true\n", "entry 1.k", "from 1 to 100"),
        (f"- query: &q a\n  expect: {ID}\n- query: *q\n  expect: {ID}\n", "entry 2", "aliases"),
        ("- query: a\n  expect: [unclosed\n- query: b\n", None, "not valid YAML at line 3"),
    ],
)
def test_a_bad_golden_file_names_the_file_the_entry_and_the_key(
    tmp_path: Path, text: str, field: str | None, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=message) as info:
        load_golden(path)
    assert info.value.path == str(path)
    assert info.value.field == field


def test_a_missing_golden_file_says_how_to_get_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no golden\.yaml") as info:
        load_golden(tmp_path / "golden.yaml")
    assert info.value.hint is not None and "init" in info.value.hint


@pytest.fixture
def memory() -> Memory:
    made = Memory.in_memory()
    for i, text in enumerate(
        [
            "The staging host is db-2.",
            "Ada drinks green tea every morning.",
            "The build server runs nightly jobs.",
            "Backups are copied to the Hamburg office.",
            "Deploys happen from the release branch.",
            "The staging load balancer is lb-1.",
        ]
    ):
        made.remember(text, source="test:golden", now=T0 + timedelta(minutes=i))
    return made


def find(memory: Memory, text: str) -> str:
    return next(r.id for r in memory.store.list() if text in r.body)


def test_found_questions_report_their_rank_and_recall_is_found_over_evaluated(memory: Memory) -> None:
    tea = find(memory, "tea")
    questions = [
        GoldenQuestion(1, "what does Ada drink?", expect_id=tea),
        GoldenQuestion(2, "where do backups go", contains="HAMBURG"),
        GoldenQuestion(3, "green tea", contains="db-2", k=1),
    ]
    report = run_golden(memory, questions, now=NOW)
    assert [(o.verdict, o.rank, o.note) for o in report.outcomes] == [
        ("found", 1, ""),
        ("found", 1, ""),
        ("missed", None, "not in the top 1"),
    ]
    assert report.recall == pytest.approx(2 / 3)
    assert report.summary() == "recall@k 0.667: 2 of 3 found, 0 skipped (indexes: bm25)"
    data = report.to_json()
    assert (data["found"], data["missed"], data["skipped"], data["recipes"]) == (2, 1, 0, ["bm25"])
    assert data["questions"][0]["target"] == tea and data["questions"][1]["expected"] == "contains: HAMBURG"


def test_k_limits_where_the_record_may_be(memory: Memory) -> None:
    ranked = [r.record.id for r in memory.recall("staging", now=NOW, touch=False).records]
    assert len(ranked) == 2
    second = ranked[1]
    report = run_golden(
        memory,
        [
            GoldenQuestion(1, "staging", expect_id=second, k=1),
            GoldenQuestion(2, "staging", expect_id=second, k=2),
        ],
        now=NOW,
    )
    assert [(o.verdict, o.rank, o.note) for o in report.outcomes] == [
        ("missed", None, "not in the top 1"),
        ("found", 2, ""),
    ]


def test_an_expected_id_is_followed_to_its_live_successor(memory: Memory) -> None:
    old = find(memory, "db-2")
    new = memory.supersede(
        old, "The staging host is db-5.", source="test:golden", reason="moved", now=T0
    ).record_id
    report = run_golden(memory, [GoldenQuestion(1, "staging host", expect_id=old)], now=NOW)
    (outcome,) = report.outcomes
    assert (outcome.verdict, outcome.target) == ("found", new)
    assert outcome.note == f"followed {old} → {new}"


def test_erased_expectations_are_skipped_with_a_note(memory: Memory) -> None:
    gone = find(memory, "nightly")
    memory.store.erase(gone, "test")  # type: ignore[attr-defined]
    memory.catalog.erased([gone])
    report = run_golden(
        memory,
        [GoldenQuestion(1, "build server", expect_id=gone), GoldenQuestion(2, "tea", contains="tea")],
        now=NOW,
    )
    assert [(o.verdict, o.note) for o in report.outcomes] == [
        ("skipped", f"{gone} was erased"),
        ("found", ""),
    ]
    assert report.recall == 1.0 and report.evaluated == 1
    assert report.summary().startswith("recall@k 1.000: 1 of 1 found, 1 skipped")


def test_withdrawn_expectations_are_skipped_with_a_note(memory: Memory) -> None:
    backups = find(memory, "Hamburg")
    control = memory.withdraw(memory_item_ids=[backups], reason="moved to the archive", now=T0)
    report = run_golden(
        memory,
        [
            GoldenQuestion(1, "backups Hamburg", expect_id=backups),
            GoldenQuestion(2, "backups", contains="hamburg office"),
            GoldenQuestion(3, "tea", contains="tea"),
        ],
        now=NOW,
    )
    assert [(o.verdict, o.note) for o in report.outcomes] == [
        ("skipped", f"{backups} is withdrawn by {control.withdrawal_id} (record id)"),
        ("skipped", "every record containing this text is withdrawn"),
        ("found", ""),
    ]
    assert (report.found, report.evaluated, report.count("skipped")) == (1, 1, 2)


def test_misses_say_why(memory: Memory) -> None:
    archived = find(memory, "release branch")
    memory.archive(archived, "no longer true", now=T0)
    report = run_golden(
        memory,
        [
            GoldenQuestion(1, "anything", expect_id=ID),
            GoldenQuestion(2, "coffee", contains="espresso"),
            GoldenQuestion(3, "deploys release branch", expect_id=archived),
        ],
        now=NOW,
    )
    assert [(o.verdict, o.note) for o in report.outcomes] == [
        ("missed", f"no record {ID} in this Home"),
        ("missed", "no record contains this text"),
        ("missed", "not in the top 5 (the record is archived)"),
    ]
    assert report.recall == 0.0


def test_running_golden_questions_changes_no_salience(memory: Memory) -> None:
    tea = find(memory, "tea")
    before = memory.salience.count(tea)
    run_golden(memory, [GoldenQuestion(1, "tea", expect_id=tea)] * 3, now=NOW)
    assert memory.salience.count(tea) == before


def test_questions_can_run_on_another_index_of_the_catalog(memory: Memory) -> None:
    memory.catalog.add_recipe(BUILTIN_RECIPES["vectors-hash"])
    question = [GoldenQuestion(1, "drinking", contains="drinks")]  # needs stemming: BM25 has it, hashing not
    assert run_golden(memory, question, now=NOW).recall == 1.0
    other = run_golden(memory, question, recipes=["vectors-hash"], now=NOW)
    assert other.recipes == ("vectors-hash",) and other.recall == 0.0
    assert memory.catalog.active == ("bm25",)
    assert run_golden(memory, [], now=NOW).recall is None
