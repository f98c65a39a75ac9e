import re
import subprocess
import sys
from pathlib import Path

import click
from installed import Cli

from agent_memory.cli import COMMANDS, cli
from agent_memory.cli.docs import REGENERATE, render

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
# What `agent-memory --help` must not load (issue 8: lazy start-up).
HEAVY = (
    "numpy",
    "yaml",
    "rich",
    "onnxruntime",
    "tokenizers",
    "psycopg",
    "mcp",
    "cryptography",
    "detect_secrets",
)


def test_docs_cli_md_is_the_help_of_every_command() -> None:
    expected = render()
    actual = DOCS.read_text(encoding="utf-8") if DOCS.exists() else ""
    assert actual == expected, (
        f"docs/cli.md is out of date; regenerate it from the repository root: {REGENERATE}"
    )


def test_every_registered_command_loads_and_its_short_help_is_its_own() -> None:
    context = click.Context(cli)
    drift = []
    for name, (target, short) in COMMANDS.items():
        command = cli.get_command(context, name)
        assert isinstance(command, click.Command) and command.name == name, target
        own = command.get_short_help_str(10**6)
        if own != short:
            drift.append(f"    {name!r}: ({target!r}, {own!r}),")
    assert not drift, "cli/__init__.py COMMANDS drifted from the docstrings; use:\n" + "\n".join(drift)


def test_help_lists_every_command_with_its_short_help(cli: Cli) -> None:
    out = cli.ok("--help")
    listed = re.findall(r"^  ([a-z][a-z-]*)  +(\S.*)$", out, re.MULTILINE)
    assert [name for name, _ in listed] == sorted(COMMANDS)
    for name, short in listed:
        assert COMMANDS[name][1].startswith(short.removesuffix("...")), name


def test_help_imports_no_heavy_module_and_no_command_module() -> None:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "agent_memory", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = {
        line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")
    }
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY)
    ours = sorted(
        m
        for m in loaded
        if m.startswith("agent_memory.")
        and m not in ("agent_memory.cli", "agent_memory.cli.lazy", "agent_memory.errors")
    )
    assert "agent_memory.cli" in loaded and "Commands:" in result.stdout
    assert heavy == [] and ours == [], f"--help imported {heavy + ours}"
