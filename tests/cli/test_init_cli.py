import json
import shutil
import stat
import subprocess
import tomllib
from pathlib import Path

import pytest
from installed import Cli, snapshot

from agent_memory.records.signing import address_of, load_or_create_identity

LAYOUT_FOLDERS = {"notes", "archive", "log", "proposals", "topics", ".cache", ".state"}
LAYOUT_FILES = {
    "memory.toml",
    "MEMORY.md",
    "conventions.md",
    "inbox.md",
    "golden.yaml",
    ".gitignore",
    ".gitattributes",
}
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(home: Path, *args: str) -> str:
    command = shutil.which("git")
    assert command
    return subprocess.run([command, *args], cwd=home, capture_output=True, text=True, check=True).stdout


def test_init_creates_the_design_layout_and_says_where_the_key_is(cli: Cli) -> None:
    out = cli.ok("init", "mem", "--no-git", "--timezone", "Europe/Berlin")
    home = cli.root / "mem"
    assert {p.name for p in home.iterdir() if p.is_dir()} == LAYOUT_FOLDERS
    assert {p.name for p in home.iterdir() if p.is_file()} == LAYOUT_FILES
    assert all(not any((home / f).iterdir()) for f in ("notes", "archive", "proposals", "topics"))
    lines = out.splitlines()
    assert lines[0] == f"created Home {home.relative_to(cli.root)}"
    assert lines[1].split() == ["agent", address_of(load_or_create_identity(lines[2].split(None, 1)[1]))]
    assert ".cache/" in (home / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "notes/** -text" in (home / ".gitattributes").read_text(encoding="utf-8")


def test_memory_toml_has_the_format_the_time_zone_and_a_key_file_outside_the_home(cli: Cli) -> None:
    cli.ok("init", "mem", "--no-git", "--timezone", "Europe/Berlin")
    home = cli.root / "mem"
    settings = tomllib.loads((home / "memory.toml").read_text(encoding="utf-8"))
    assert settings["format"] == "agent-memory-home/1"
    assert settings["timezone"] == "Europe/Berlin"
    key_file = Path(settings["identity"]["key_file"])
    assert key_file.is_file()
    assert home.resolve() not in key_file.resolve().parents
    assert key_file.parent == cli.root / "config" / "agent-memory" / "keys"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(key_file.parent.stat().st_mode) == 0o700


def test_init_json_names_the_home_agent_key_and_zone_and_the_log_records_it(cli: Cli) -> None:
    made = json.loads(cli.ok("init", "mem", "--no-git", "--timezone", "UTC", "--json"))
    assert made["home"] == "mem" and made["timezone"] == "UTC"
    assert made["agent"] == address_of(load_or_create_identity(made["key_file"]))
    (entry,) = [json.loads(line) for line in cli.ok("log", "--home", "mem", "--json").splitlines()]
    assert entry["action"] == "init" and entry["details"]["agent"] == made["agent"]


def test_an_explicit_key_file_is_used(cli: Cli) -> None:
    key_file = cli.root / "keys" / "mine.key"
    made = json.loads(cli.ok("init", "mem", "--no-git", "--key-file", str(key_file), "--json"))
    assert made["key_file"] == str(key_file) and key_file.is_file()
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_the_home_comes_from_the_environment_when_no_path_is_given(cli: Cli) -> None:
    result = cli("init", "--no-git", env={"AGENT_MEMORY_HOME": str(cli.root / "from-env")})
    assert result.returncode == 0, result.stderr
    assert (cli.root / "from-env" / "memory.toml").is_file()


def test_init_into_an_existing_empty_folder_works(cli: Cli) -> None:
    (cli.root / "empty").mkdir()
    cli.ok("init", "empty", "--no-git")
    assert (cli.root / "empty" / "memory.toml").is_file()


@needs_git
def test_init_makes_a_git_repository_with_one_clean_commit_that_holds_no_key(cli: Cli) -> None:
    cli.ok("init", "mem", "--timezone", "UTC")
    home = cli.root / "mem"
    assert git(home, "rev-list", "--count", "HEAD").strip() == "1"
    assert git(home, "status", "--porcelain") == ""
    tracked = set(git(home, "ls-files").split())
    assert {"memory.toml", "MEMORY.md", ".gitignore", ".gitattributes"} <= tracked
    assert not any(name.endswith(".key") or name.startswith(".cache") for name in tracked)
    assert git(home, "log", "-1", "--format=%s").strip() == "agent-memory init"


def test_init_refuses_a_folder_that_is_not_empty_and_writes_nothing(cli: Cli) -> None:
    folder = cli.root / "busy"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n", encoding="utf-8")
    result = cli("init", "busy", "--no-git")
    assert result.returncode == 3
    assert result.stderr.splitlines()[0] == "agent-memory: error: busy: not an empty folder"
    assert snapshot(folder) == {"notes.txt": b"mine\n"}
    assert not (cli.root / "config").exists()


def test_init_refuses_an_existing_home_and_leaves_it_unchanged(cli: Cli) -> None:
    home = cli.home("mem")
    before, keys_before = snapshot(home), snapshot(cli.root / "config")
    result = cli("init", str(home), "--no-git")
    assert result.returncode == 3
    assert result.stderr.splitlines()[0] == f"agent-memory: error: {home}: already a Home"
    assert result.stdout == ""
    assert snapshot(home) == before
    assert snapshot(cli.root / "config") == keys_before


def test_init_refuses_an_unknown_time_zone_before_creating_anything(cli: Cli) -> None:
    result = cli("init", "mem", "--timezone", "Mars/Olympus")
    assert result.returncode == 3
    assert result.stderr.splitlines()[0] == "agent-memory: error: timezone: unknown time zone 'Mars/Olympus'"
    assert not (cli.root / "mem").exists()


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("init", ""), "'[PATH]'"),
        (("init", "   "), "'[PATH]'"),
        (("init", "--home", ""), "'--home'"),
        (("init-key", "--home", ""), "'--home'"),
        (("status", "--home", ""), "'--home'"),
        (("remember", "A fact.", "--home", ""), "'--home'"),
    ],
)
def test_an_empty_path_is_a_usage_error_naming_it_and_creates_nothing(
    cli: Cli, args: tuple[str, ...], named: str
) -> None:
    before = snapshot(cli.root)
    result = cli(*args)
    assert result.returncode == 2, result
    assert f"Invalid value for {named}: must not be empty" in result.stderr
    assert not (cli.root / "memory").exists(), "an empty path never means ./memory"
    assert snapshot(cli.root) == before
