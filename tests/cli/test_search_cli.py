"""``agent-memory reindex``, ``golden`` and the search part of ``status``, run as a user runs them."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from installed import Cli

from agent_memory.home import Home
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search.recipes import SearchSettings, splice_search
from signing_store import signing_store

T0 = datetime(2026, 4, 1, tzinfo=UTC)
NOTES = [
    "Ada is running the quarterly planning meeting.",
    "The staging host is db-2.",
    "Backups are copied to the Hamburg office every night.",
]


def bm25_home(cli: Cli) -> tuple[Path, list[str]]:
    """A Home reading BM25 alone (no model to load in every command), with three notes."""
    path = cli.home()
    toml = path / "memory.toml"
    toml.write_text(
        splice_search(toml.read_text(encoding="utf-8"), SearchSettings(("bm25",))), encoding="utf-8"
    )
    store = signing_store(Home.open(path))
    ids = []
    for i, text in enumerate(NOTES):
        made = MemoryRecord.create(
            type="fact",
            body=text,
            provenance=Provenance(kind="test", ref="test:cli"),
            created_at=T0 + timedelta(i),
        )
        store.put(made)
        ids.append(made.id)
    return path, ids


def golden(path: Path, text: str) -> None:
    (path / "golden.yaml").write_text(text, encoding="utf-8")


def log_actions(path: Path) -> list[dict[str, object]]:
    return [
        json.loads(line)
        for f in sorted((path / "log").glob("*.jsonl"))
        for line in f.read_text("utf-8").splitlines()
    ]


def test_golden_on_a_new_home_has_no_questions(cli: Cli) -> None:
    path = cli.home()
    assert "no questions yet" in cli.ok("golden", "--home", str(path))
    report = json.loads(cli.ok("golden", "--home", str(path), "--json"))
    assert report["recall"] is None and report["questions"] == []


def test_golden_prints_recall_and_misses_and_exits_1_on_a_miss(cli: Cli) -> None:
    path, ids = bm25_home(cli)
    golden(
        path,
        f"- query: who runs planning?\n  expect: {ids[0]}\n- query: staging\n  expect: {{contains: db-9}}\n",
    )
    result = cli("golden", "--home", str(path))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "recall@k 0.500: 1 of 2 found, 0 skipped (indexes: bm25)"
    assert lines[1] == "MISS #2 'staging' expected contains: db-9: no record contains this text"
    golden(path, f"- query: who runs planning?\n  expect: {ids[0]}\n  k: 1\n")
    report = json.loads(cli.ok("golden", "--home", str(path), "--json"))
    assert (report["recall"], report["questions"][0]["rank"]) == (1.0, 1)


def test_a_bad_golden_file_is_one_line_naming_the_file_and_entry(cli: Cli) -> None:
    path, _ = bm25_home(cli)
    golden(path, "- query: staging\n  expect: db-2\n")
    result = cli("golden", "--home", str(path))
    assert result.returncode == 3
    assert result.stderr.startswith(f"agent-memory: error: {path / 'golden.yaml'}: entry 1.expect: must be")


def test_reindex_rebuilds_the_active_indexes_and_logs_it(cli: Cli) -> None:
    path, _ = bm25_home(cli)
    unused = path / ".cache" / "indexes" / "left-over"
    unused.mkdir(parents=True)
    out = cli.ok("reindex", "--home", str(path))
    assert out.startswith("reindexed bm25: 3 records read in ")
    assert unused.exists()
    assert json.loads((path / ".cache/indexes/bm25/inputs.json").read_text("utf-8"))["count"] == 3
    report = json.loads(cli.ok("reindex", "--home", str(path), "--all", "--json"))
    assert (report["recipes"], report["records"]) == (["bm25"], 3)
    assert not unused.exists()
    events = [e for e in log_actions(path) if e["action"] == "reindex"]
    assert [e["details"] for e in events] == [{"rebuilt": True, "recipes": ["bm25"], "records": 3}] * 2
    assert json.loads(cli.ok("recall", "staging", "--home", str(path), "--json"))["records"]


def test_reindex_with_a_recipe_switches_when_golden_scores_at_least_as_well(cli: Cli) -> None:
    path, ids = bm25_home(cli)
    golden(path, f"- query: staging host\n  expect: {ids[1]}\n")
    recipe = cli.root / "mix.toml"
    recipe.write_text('name = "mix"\nkind = "hybrid"\nparts = ["bm25", "vectors-hash"]\n', encoding="utf-8")
    out = cli.ok("reindex", "--home", str(path), "--recipe", str(recipe))
    assert "current bm25: recall@k 1.000: 1 of 1 found" in out
    assert "new     mix: recall@k 1.000: 1 of 1 found" in out
    assert out.splitlines()[-1] == "switched: memory.toml now reads mix"
    settings = Home.open(path).settings.search
    assert settings.recipes == ("mix",) and settings.recipe("mix").parts[1].name == "vectors-hash"
    status = json.loads(cli.ok("status", "--home", str(path), "--json"))
    assert status["search"] == {"recipes": ["mix"], "why": "memory.toml [search] recipes", "unavailable": {}}
    event = [e for e in log_actions(path) if e["action"] == "reindex"][-1]
    assert event["details"] == {
        "current": ["bm25"],
        "found": {"current": 1, "new": 1, "questions": 1},
        "recipe": "mix",
        "switched": True,
    }


def test_reindex_with_a_worse_recipe_keeps_the_current_one_and_says_why(cli: Cli) -> None:
    path, ids = bm25_home(cli)
    # BM25 stems "runs plans" to the note's "running ... planning"; hashed words do not match.
    golden(path, f"- query: runs plans\n  expect: {ids[0]}\n  k: 1\n")
    toml_before = (path / "memory.toml").read_bytes()
    recipe = cli.root / "hash.toml"
    recipe.write_text('name = "words-only"\nkind = "vector"\nembedder = "hash"\n', "utf-8")
    result = cli("reindex", "--home", str(path), "--recipe", str(recipe))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "current bm25: recall@k 1.000: 1 of 1 found" in lines[1]
    assert "new     words-only: recall@k 0.000: 0 of 1 found" in lines[2]
    assert lines[3].startswith("kept bm25: words-only found 0 of 1 questions, fewer than 1")
    assert lines[4].startswith("  MISS #1 'runs plans'")
    assert (path / "memory.toml").read_bytes() == toml_before
    assert (path / ".cache" / "indexes" / "words-only" / "recipe.json").exists()


def test_a_bad_recipe_file_changes_nothing(cli: Cli) -> None:
    path, _ = bm25_home(cli)
    toml_before = (path / "memory.toml").read_bytes()
    recipe = cli.root / "bad.toml"
    recipe.write_text('name = "x"\nkind = "vector"\nembedder = "bert"\n', encoding="utf-8")
    result = cli("reindex", "--home", str(path), "--recipe", str(recipe))
    assert result.returncode == 3
    assert result.stderr.startswith(f"agent-memory: error: {recipe}: recipe.embedder: embedder must be hash")
    assert (path / "memory.toml").read_bytes() == toml_before
    assert not any(e["action"] == "reindex" for e in log_actions(path))


def test_status_shows_a_lagging_index_until_recall_refreshes_it(cli: Cli) -> None:
    path, _ = bm25_home(cli)
    cli.ok("recall", "staging", "--home", str(path))
    late = MemoryRecord.create(
        type="fact",
        body="Payroll runs on the 25th.",
        provenance=Provenance(kind="test", ref="t"),
        created_at=T0,
    )
    signing_store(Home.open(path)).put(late)  # another process, writing notes but not the index
    lagging = json.loads(cli.ok("status", "--home", str(path), "--json"))["indexes"]
    assert lagging == [
        {
            "name": "bm25",
            "kind": "bm25",
            "active": True,
            "indexed": 3,
            "records": 4,
            "stale": 1,
            "waiting": 0,
            "dirty": True,
        }
    ]
    text = cli.ok("status", "--home", str(path))
    assert "search       bm25: memory.toml [search] recipes" in text
    assert (
        "index        bm25 (bm25): behind the notes, 4 readable record(s), 3 indexed; "
        "1 record(s) added, changed or removed since its last update\n"
    ) in text  # as doctor words it
    doctor = cli("doctor", "--home", str(path)).stdout
    assert "bm25: behind the notes, 4 readable record file(s), 3 indexed; 1 record(s) added" in doctor
    recalled = json.loads(cli.ok("recall", "payroll", "--home", str(path), "--json"))["records"]
    assert [r["id"] for r in recalled] == [late.id]
    fresh = json.loads(cli.ok("status", "--home", str(path), "--json"))["indexes"]
    assert (fresh[0]["indexed"], fresh[0]["records"], fresh[0]["dirty"]) == (4, 4, False)
    assert "index        bm25 (bm25): clean, 4 readable record(s), 4 indexed\n" in cli.ok(
        "status", "--home", str(path)
    )
