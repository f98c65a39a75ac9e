"""Progress on stderr: drawn only on a terminal, silenced by --quiet and --json (issue 24 item 2)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

from installed import COMMAND, Cli


def _with_terminal_stderr(cli: Cli, *args: str) -> tuple[int, str, bytes]:
    """Run the command with stderr on a pseudo-terminal, stdout on a pipe."""
    assert COMMAND
    leader, follower = pty.openpty()
    try:
        run = subprocess.run(
            [COMMAND, *args],
            cwd=cli.root,
            env={**cli.env, "TERM": "xterm", "COLUMNS": "100"},
            stdout=subprocess.PIPE,
            stderr=follower,
            check=False,
            timeout=120,
        )
        os.close(follower)
        drawn = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal has no writer left
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(leader)
    return run.returncode, run.stdout.decode("utf-8"), drawn


def test_doctor_draws_progress_on_a_terminal_and_never_on_stdout(cli: Cli) -> None:
    home = cli.home()
    status, out, drawn = _with_terminal_stderr(cli, "doctor", "--home", str(home))
    assert status == 0
    assert b"checking " in drawn and str(home).encode() in drawn
    assert out.startswith("healthy: ") and "checking" not in out


def test_quiet_and_json_silence_progress_even_on_a_terminal(cli: Cli) -> None:
    home = cli.home()
    for flag in ("--quiet", "--json"):
        status, out, drawn = _with_terminal_stderr(cli, "doctor", "--home", str(home), flag)
        assert status == 0 and b"checking" not in drawn, flag
        assert out.strip()


def test_no_progress_when_stderr_is_not_a_terminal(cli: Cli) -> None:
    result = cli("doctor", "--home", str(cli.home()))
    assert result.returncode == 0 and result.stderr == ""


def test_init_says_where_it_put_the_key(cli: Cli, tmp_path: Path) -> None:
    out = cli.ok("init", str(cli.root / "fresh"), "--no-git")
    lines = out.splitlines()
    key = Path(cli.env["XDG_CONFIG_HOME"]) / "agent-memory" / "keys"
    assert lines[2].startswith(f"key     {key}/") and "kept outside the Home, never committed" in lines[3]
    assert Path(lines[2].split()[1]).is_file()


def test_render_consolidate_distill_and_import_draw_progress_on_a_terminal_only(cli: Cli) -> None:
    home = cli.home()
    cli.ok("remember", "Tea is served at four.", "--home", str(home))
    exported = cli.root / "out.json"
    cli.ok("export", str(exported), "--home", str(home))
    other = cli.home("other")
    for args, label in (
        (("render",), b"rendering views"),
        (("consolidate",), b"consolidating"),
        (("distill",), b"distilling"),
    ):
        status, _, drawn = _with_terminal_stderr(cli, *args, "--home", str(home))
        assert status == 0 and label in drawn, (args, drawn)
        assert label not in cli(*args, "--home", str(home)).stderr.encode()
    status, _, drawn = _with_terminal_stderr(cli, "import", str(exported), "--home", str(other))
    assert status == 0 and b"importing " in drawn and b"out.json (1 of 1)" in drawn
    status, _, drawn = _with_terminal_stderr(cli, "import", str(exported), "--home", str(other), "--quiet")
    assert b"importing" not in drawn
    copy = f"notes:{cli.root / 'copy'}"
    status, _, drawn = _with_terminal_stderr(cli, "migrate", "--to", copy, "--home", str(home))
    assert status == 0 and b"migrating" in drawn, drawn
    record_id = json.loads(cli.ok("list", "--home", str(home), "--json"))[0]["id"]
    erase = ("erase", record_id, "--reason", "asked", "--authority", "test", "--yes", "--home", str(home))
    status, _, drawn = _with_terminal_stderr(cli, *erase)
    assert status == 0 and b"erasing" in drawn, drawn
