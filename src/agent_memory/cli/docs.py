"""Write ``docs/cli.md`` from the ``--help`` of every command (issue 8 item 1).

Regenerate with one command, from the repository root::

    .venv/bin/python -m agent_memory.cli.docs > docs/cli.md

``tests/cli/test_cli_docs.py`` fails while the file differs from what this prints. The text is
laid out at a fixed width (:data:`WIDTH`), so it does not depend on the terminal it runs in.
"""

from __future__ import annotations

import sys

import click

__all__ = ["REGENERATE", "WIDTH", "render"]

WIDTH = 100
"""Columns the help pages are laid out in."""

REGENERATE = ".venv/bin/python -m agent_memory.cli.docs > docs/cli.md"
"""The command that regenerates ``docs/cli.md``."""


def render() -> str:
    """Return the Markdown reference: the group's help, then each command's, by name.

    Imports every command module (each page is the command's own ``--help``).
    """
    from agent_memory.cli import cli

    root = click.Context(
        cli, info_name="agent-memory", terminal_width=WIDTH, max_content_width=WIDTH, **cli.context_settings
    )
    parts = [
        "# Command-line reference\n",
        f"Generated from each command's `--help` by `{REGENERATE}`; do not edit by hand.\n",
        "Exit status: 0 success; 1 a check found problems (`verify`, `doctor`, `sync`); 2 a usage error; "
        "3 the operation could not be done. `import`: 0 everything taken in; 4 done with exceptions "
        "(some items refused or cleaned, each listed); 1 nothing was written (see docs/gate.md). "
        "Every command but `verify` (which checks the files it is given) takes `--home PATH` (default "
        "`$AGENT_MEMORY_HOME`, else `./memory`). Every command that reads or writes records takes "
        "`--json` (`log --json` prints one object per line); under `--json` an error is one JSON object "
        'on stderr, `{"error", "exit", "hint"?, "path"?, "record_id"?, "field"?}`. '
        "`demo`, `init-key`, `schedule`, `serve` and `ui` print for people.\n",
        _page("agent-memory", cli.get_help(root)),
    ]
    for name in cli.list_commands(root):
        command = cli.get_command(root, name)
        if command is None or command.hidden:
            continue
        context = click.Context(
            command, info_name=name, parent=root, terminal_width=WIDTH, max_content_width=WIDTH
        )
        parts.append(_page(f"agent-memory {name}", command.get_help(context)))
    return "\n".join(parts)


def _page(title: str, text: str) -> str:
    return f"## {title}\n\n```text\n{text.rstrip()}\n```\n"


if __name__ == "__main__":
    sys.stdout.write(render())
