"""The README's first command as a newcomer runs it: ``agent-memory demo`` in a fresh HOME (issue 24)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

COMMAND = shutil.which("agent-memory", path=str(Path(sys.executable).parent))


def test_the_demo_ends_with_what_where_and_three_commands_and_leaves_nothing_in_config(
    tmp_path: Path, repo: Path
) -> None:
    assert COMMAND, "the agent-memory command is not installed next to this Python"
    user_home, scratch = tmp_path / "user", tmp_path / "tmp"
    user_home.mkdir()
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("AGENT_MEMORY_HOME", "XDG_CONFIG_HOME")}
    env.update(HOME=str(user_home), TMPDIR=str(scratch))
    run = subprocess.run(
        [COMMAND, "demo"], cwd=repo, env=env, capture_output=True, text=True, check=False, timeout=600
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""  # no terminal: no progress drawn
    built, where, try_it = run.stdout.splitlines()[-3:]
    assert built.startswith("Built a Home of ") and f"from the repository {repo} in " in built
    assert built.endswith("doctor: healthy, memory:L4.")
    (folder,) = scratch.iterdir()
    home = folder / "home"
    assert where == (
        f"It is in {home}, its signing key beside it in {folder / 'signing.key'}; "
        f"rm -rf {folder} removes both (nothing is kept in your config folder)."
    )
    assert try_it.startswith(f"Try: export AGENT_MEMORY_HOME={home}; agent-memory recall ")
    assert try_it.endswith("; agent-memory status; agent-memory ui")
    assert "§21" not in run.stdout and "pass           000" not in run.stdout  # no conformance dump
    assert not (user_home / ".config").exists() and sorted(os.listdir(user_home)) == []
    # The three commands work on it as printed.
    commands = [shlex.split(part.strip()) for part in try_it.removeprefix("Try: ").split(";")[1:3]]
    for argv in commands:
        done = subprocess.run(
            [COMMAND, *argv[1:]],
            env={**env, "AGENT_MEMORY_HOME": str(home)},
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert done.returncode == 0, (argv, done.stderr)
    assert (
        "mem:"
        in subprocess.run(
            [COMMAND, *commands[0][1:], "--home", str(home)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        ).stdout
    )
    shutil.rmtree(folder)
    assert list(scratch.iterdir()) == [] and not (user_home / ".config").exists()
