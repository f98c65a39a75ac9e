"""``erase`` and ``forget`` as a user runs them (seed 000 §12.1, §12.3)."""

import json
from pathlib import Path

from installed import Cli

from agent_memory.home import Home
from agent_memory.memory import Memory
from agent_memory.search.recipes import SearchSettings, splice_search

UNIQUE = "Quetzal-marmot-9182 hides the spare key"


def bm25_home(cli: Cli) -> Path:
    path = cli.home()
    toml = path / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
    return path


def remember(home: Path, text: str, **options: object) -> str:
    with Memory.open(home) as memory:
        return memory.remember(text, source="s", **options).record_id  # type: ignore[arg-type]


def holding(root: Path, text: str) -> list[str]:
    return sorted(str(p) for p in root.rglob("*") if p.is_file() and text.encode() in p.read_bytes())


def test_erase_prints_a_receipt_and_leaves_no_byte_in_the_home(cli: Cli) -> None:
    home = bm25_home(cli)
    gone = remember(home, UNIQUE)
    assert holding(home, UNIQUE)
    refused = cli("erase", gone, "--reason", "user request", "--authority", "ada", "--home", str(home))
    assert refused.returncode == 3 and holding(home, UNIQUE)  # no --yes, no confirmation: nothing done
    out = cli.ok(
        "erase", gone, "--reason", "user request", "--authority", "ada", "--yes", "--home", str(home)
    )
    assert out.splitlines()[0].startswith("memerase-") and f": {gone}" in out.splitlines()[0]
    assert "notes/: completed" in out and UNIQUE not in out
    assert holding(home, UNIQUE) == []
    report = json.loads(cli.ok("recall", "Quetzal marmot", "--home", str(home), "--json"))
    assert report["records"] == []
    again = cli("erase", gone, "--reason", "r", "--authority", "ada", "--yes", "--home", str(home))
    assert again.returncode == 3 and "already erased" in again.stderr


def test_forget_prints_the_five_surfaces_and_keeps_other_namespaces(cli: Cli) -> None:
    home = bm25_home(cli)
    u1 = remember(home, "The user likes tabs.", namespace="user:u1")
    u2 = remember(home, "The user likes spaces.", namespace="user:u2")
    out = cli.ok("forget", "--namespace", "user:u1", "--home", str(home))
    assert [line.split(":")[0] for line in out.splitlines()] == [
        "Context / Workspace",
        "Original project",
        "Temporary exploration workspace",
        "Promoted / derived artifacts",
        "Memory",
    ]
    assert "withdrawn (reversible), not erased" in out
    report = json.loads(cli.ok("recall", "user likes", "--home", str(home), "--json"))
    assert {r["id"] for r in report["records"]} == {u2}
    with Memory.open(home) as memory:
        assert not memory.get(u1).redacted


def _in_git_history(root: Path, text: str) -> bool:
    import shutil
    import subprocess

    git = shutil.which("git") or "git"
    commits = subprocess.run(
        [git, "rev-list", "--all"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.split()
    found = subprocess.run([git, "grep", "-F", "-q", "-e", text, *commits], cwd=root, check=False)
    return found.returncode == 0


def test_erase_rewrites_git_history_only_when_asked(cli: Cli) -> None:
    home = bm25_home(cli)
    Home.open(home).commit("a Home made with git")  # cli.home() makes none, for speed
    kept, rewritten = remember(home, UNIQUE), remember(home, "Ocelot-lantern-5521 opens the shed")
    assert _in_git_history(home, UNIQUE)  # each write was committed
    out = cli.ok("erase", kept, "--reason", "r", "--authority", "ada", "--yes", "--home", str(home))
    assert "git-history: partially-completed" in out and _in_git_history(home, UNIQUE)
    out = cli.ok(
        "erase",
        rewritten,
        "--reason",
        "r",
        "--authority",
        "ada",
        "--yes",
        "--rewrite-git",
        "--home",
        str(home),
    )
    assert not _in_git_history(home, "Ocelot-lantern-5521")
    assert "git-history: completed" in out
