"""A command that needs an extra which is not installed says which one, in one line (DESIGN.md §8)."""

import subprocess
import sys
from pathlib import Path

import pytest

# Run the CLI in a fresh interpreter where importing the module fails, as it does without the extra.
RUN = "import sys; sys.modules[{module!r}] = None; from agent_memory.cli import main; main(sys.argv[1:])"


def run(module: str, *args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", RUN.format(module=module), *args],
        capture_output=True,
        text=True,
        check=False,
        env={"XDG_CONFIG_HOME": str(tmp_path / "config"), "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
    )


@pytest.mark.parametrize(
    ("module", "args", "extra"),
    [
        ("psycopg", ["migrate", "--to", "postgresql://agent@127.0.0.1:1/memory"], "postgres"),
        ("mcp", ["serve"], "mcp"),
    ],
)
def test_a_missing_extra_is_one_line_with_the_pip_command(
    module: str, args: list[str], extra: str, tmp_path: Path
) -> None:
    subprocess.run(
        [sys.executable, "-m", "agent_memory", "init", str(tmp_path / "memory")],
        capture_output=True,
        check=True,
        env={"XDG_CONFIG_HOME": str(tmp_path / "config"), "PATH": "/usr/bin:/bin"},
    )
    result = run(module, *args, "--home", str(tmp_path / "memory"), tmp_path=tmp_path)
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[0].startswith("agent-memory: error:")
    assert f"agent-memory[{extra}]" in result.stderr
