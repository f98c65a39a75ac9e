import stat
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_memory.errors import ConfigError
from agent_memory.home import HOME_ENV, Home, resolve_home
from agent_memory.records.signing import address_of
from agent_memory.settings import HOME_FORMAT
from agent_memory.stores.files import FileStore

T0 = datetime(2026, 11, 29, 23, 30, tzinfo=UTC)
FOLDERS = {"notes", "archive", "log", "proposals", "topics", ".cache", ".state"}
FILES = {
    "memory.toml",
    "MEMORY.md",
    "conventions.md",
    "inbox.md",
    "golden.yaml",
    ".gitignore",
    ".gitattributes",
}


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def make(tmp_path: Path, **options: object) -> Home:
    return Home.init(tmp_path / "home", git=False, now=T0, **options)  # type: ignore[arg-type]


def test_init_lays_out_a_home_as_design_section_3_says(tmp_path: Path) -> None:
    home = make(tmp_path, timezone="Europe/Berlin")
    assert {p.name for p in home.root.iterdir() if p.is_dir()} == FOLDERS
    assert {p.name for p in home.root.iterdir() if p.is_file()} == FILES
    assert home.settings.format == HOME_FORMAT and home.settings.timezone == "Europe/Berlin"
    # The inbox is headed by the local day of the clock (already 30 November in Berlin).
    assert (home.root / "inbox.md").read_text(encoding="utf-8") == "# Inbox 2026-11-30\n\n"
    assert Home.open(home.root).settings == home.settings


def test_init_logs_one_init_event_naming_the_format_and_the_agent(tmp_path: Path) -> None:
    home = make(tmp_path)
    (entry,) = home.log().entries()
    assert entry.action == "init" and entry.actor == home.settings.owner and entry.time == T0
    assert entry.details == {"format": HOME_FORMAT, "agent": address_of(home.identity())}


def test_the_key_lives_outside_the_home_readable_by_the_owner_only(tmp_path: Path) -> None:
    home = make(tmp_path)
    key_file = home.settings.key_file
    assert key_file.parent == tmp_path / "config" / "agent-memory" / "keys"
    assert key_file.name == f"{home.settings.home_id}.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert home.root not in key_file.parents
    assert address_of(Home.open(home.root).identity()) == address_of(home.identity())


def test_the_home_store_is_markdown_notes_and_the_cache_is_ignored_by_git(tmp_path: Path) -> None:
    home = make(tmp_path)
    store = home.store()
    assert isinstance(store, FileStore) and store.root == home.root / "notes" and store.codec == "markdown"
    assert home.cache_dir == home.root / ".cache"
    assert ".cache/" in (home.root / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "notes/** -text" in (home.root / ".gitattributes").read_text(encoding="utf-8").splitlines()


def test_init_in_an_existing_empty_folder_works(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    assert make(tmp_path).root == tmp_path / "home"


def test_init_refuses_an_existing_home_and_changes_nothing(tmp_path: Path) -> None:
    home = make(tmp_path)
    before = (home.root / "memory.toml").read_bytes()
    with pytest.raises(ConfigError, match="already a Home") as info:
        make(tmp_path)
    assert info.value.path == str(home.root)
    assert (home.root / "memory.toml").read_bytes() == before
    assert len(list(home.log().entries())) == 1


@pytest.mark.parametrize("occupied", ["file inside", "a file"])
def test_init_refuses_a_path_that_is_not_an_empty_folder(tmp_path: Path, occupied: str) -> None:
    target = tmp_path / "home"
    if occupied == "a file":
        target.write_text("mine", encoding="utf-8")
    else:
        target.mkdir()
        (target / "notes.txt").write_text("mine", encoding="utf-8")
    expected = "is a file, not a folder" if occupied == "a file" else "not an empty folder"
    with pytest.raises(ConfigError, match=expected):
        make(tmp_path)
    assert not (tmp_path / "config").exists()


def test_init_refuses_an_unknown_time_zone_before_writing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown time zone 'Mars/Olympus'") as info:
        make(tmp_path, timezone="Mars/Olympus")
    assert info.value.field == "timezone"
    assert not (tmp_path / "home").exists()


def test_opening_a_folder_without_memory_toml_says_how_to_make_a_home(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a Home") as info:
        Home.open(tmp_path / "nowhere")
    assert info.value.hint == "create one with: agent-memory init PATH"
    assert info.value.path == str(tmp_path / "nowhere" / "memory.toml")


@pytest.mark.parametrize(
    ("text", "match", "field"),
    [
        ("format = [", "not valid TOML", None),
        ('format = "agent-memory-home/9"\nhome_id = "x"\n', "unsupported Home format", "format"),
        (f'format = "{HOME_FORMAT}"\nhome_id = "x"\ncolour = "blue"\n', "unknown settings", "colour"),
        (f'format = "{HOME_FORMAT}"\n', "required setting is missing", "home_id"),
    ],
)
def test_opening_a_broken_memory_toml_names_the_file_and_key(
    tmp_path: Path, text: str, match: str, field: str | None
) -> None:
    home = make(tmp_path)
    (home.root / "memory.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=match) as info:
        Home.open(home.root)
    assert info.value.path == str(home.root / "memory.toml") and info.value.field == field


def test_the_home_path_comes_from_the_option_then_the_environment_then_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(HOME_ENV, "/from/env")
    assert resolve_home("/given") == Path("/given")
    assert resolve_home(None) == Path("/from/env")
    monkeypatch.delenv(HOME_ENV)
    assert resolve_home(None) == Path("memory")


_TRY_LOCK = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except BlockingIOError:
    print("busy")
else:
    print("free")
"""

_WRITER = """
import sys
from agent_memory.home import Home
with Home.open(sys.argv[1]).writer_lock():
    print("acquired", flush=True)
"""


def test_the_writer_lock_excludes_another_process_until_released(tmp_path: Path) -> None:
    home = make(tmp_path)
    lock_file = home.cache_dir / "writer.lock"

    def other_process() -> str:
        run = subprocess.run(
            [sys.executable, "-c", _TRY_LOCK, str(lock_file)], capture_output=True, text=True
        )
        return run.stdout.strip()

    with home.writer_lock():
        assert other_process() == "busy"
    assert other_process() == "free"


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs Linux /proc/locks to see a waiting lock")
def test_a_second_writer_waits_for_the_first_and_then_proceeds(tmp_path: Path) -> None:
    home = make(tmp_path)
    with home.writer_lock():
        child = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(home.root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 30
            while not any(
                "-> FLOCK" in line and f" {child.pid} " in line
                for line in Path("/proc/locks").read_text(encoding="utf-8").splitlines()
            ):
                assert child.poll() is None, child.communicate()
                assert time.monotonic() < deadline, "the second writer never reached the lock"
                time.sleep(0.01)  # waiting for the child to block, not for time to pass
            assert child.poll() is None  # blocked on the lock this test holds
        except BaseException:
            child.kill()
            raise
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert out == "acquired\n"


def test_a_missing_key_file_is_an_error_and_never_silently_replaced(tmp_path: Path) -> None:
    from agent_memory.errors import ConfigError

    home = Home.init(tmp_path / "h", git=False, key_file=tmp_path / "keys" / "h.key")
    (tmp_path / "keys" / "h.key").rename(tmp_path / "keys" / "moved.key")
    with pytest.raises(ConfigError, match="key file is missing") as info:
        Home.open(home.root).identity()
    assert "init-key" in (info.value.hint or "")
    assert not (tmp_path / "keys" / "h.key").exists()


def test_init_with_an_unusable_key_file_leaves_nothing_behind(tmp_path: Path) -> None:
    from agent_memory.errors import RecordError

    bad = tmp_path / "not-a-dir"
    bad.write_text("x", encoding="utf-8")
    with pytest.raises(RecordError):
        Home.init(tmp_path / "h", git=False, key_file=bad / "k.key")
    assert not (tmp_path / "h").exists()
