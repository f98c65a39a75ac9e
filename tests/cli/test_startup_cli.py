"""CLI start-up (issue 24 item 3): a command imports only what it uses; ``remember`` loads no model.

Speed itself is measured by ``bench/cli.py``; these tests pin the behaviour behind it: which
heavy packages a process imports (``python -X importtime``), and that leaving the vectors of a
``remember`` to the next query loses nothing: the next ``recall`` finds the record by meaning.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from installed import Cli

HEAVY = ("numpy", "onnxruntime", "tokenizers", "detect_secrets", "requests", "rich", "psycopg", "mcp")


@pytest.fixture
def home(cli: Cli) -> Path:
    path = cli.root / "home"
    cli.ok("init", str(path), "--no-git", "--timezone", "UTC")  # the default recipe: BM25 + MiniLM
    return path


def imported(cli: Cli, *args: str) -> set[str]:
    """Run ``agent-memory ARGS`` under ``-X importtime``; return the top-level packages it imported."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "agent_memory", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=cli.root,
        env=cli.env,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    found = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*([\w.]+)$", result.stderr, re.MULTILINE)
    return {name.split(".")[0] for name in found}


def test_remember_imports_no_model_numpy_or_secrets_library(cli: Cli, home: Path) -> None:
    loaded = imported(cli, "remember", "The espresso machine on floor two is broken.", "--home", str(home))
    assert "agent_memory" in loaded and not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_a_text_shaped_like_a_token_still_loads_the_secrets_library_and_is_refused(
    cli: Cli, home: Path
) -> None:
    token = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    refused = cli("remember", f"The deploy uses {token} today.", "--home", str(home))
    assert refused.returncode != 0 and "github-token" in refused.stderr
    assert token not in refused.stderr + refused.stdout
    assert not list((home / "notes").iterdir())


def test_recall_finds_a_remembered_record_by_meaning_after_its_vectors_waited(cli: Cli, home: Path) -> None:
    h = ("--home", str(home))
    broken = cli.ok("remember", "The espresso machine on floor two is broken.", *h).strip()
    cli.ok("remember", "Ada drinks green tea every morning.", *h)
    (index,) = json.loads(cli.ok("status", "--json", *h))["indexes"]
    assert (index["name"], index["waiting"], index["dirty"]) == ("hybrid", 2, False)
    assert "waiting for the next recall" in cli.ok("status", *h)
    # No word in common with the note: only the vector side can find it.
    found = json.loads(cli.ok("recall", "coffee maker out of order", "--json", *h))["records"]
    assert [record["id"] for record in found][:1] == [broken]
    (index,) = json.loads(cli.ok("status", "--json", *h))["indexes"]
    assert (index["stale"], index["waiting"], index["dirty"]) == (0, 0, False)


def test_doctor_counts_vectors_waiting_for_the_next_recall_as_healthy(cli: Cli, home: Path) -> None:
    cli.ok("remember", "Tea is served at four.", "--home", str(home))
    cli.ok("render", "--home", str(home))
    out = cli.ok("doctor", "--home", str(home))
    assert "warning" not in out.splitlines()[0], out


def test_an_import_leaves_no_vectors_for_the_next_recall_to_make(cli: Cli, home: Path) -> None:
    notes = cli.root / "notes-in"
    notes.mkdir()
    (notes / "office.md").write_text(
        "# Office\n\nThe espresso machine on floor two is broken.\n\nAda drinks green tea every morning.\n",
        encoding="utf-8",
    )
    cli.ok("import", "--from", "markdown", str(notes), "--trust", "--home", str(home))
    (index,) = json.loads(cli.ok("status", "--json", "--home", str(home)))["indexes"]
    assert index["indexed"] == index["records"] > 0 and (index["stale"], index["waiting"]) == (0, 0)
