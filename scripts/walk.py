"""List the package files one CLI command runs, in first-call order (docs/architecture.md, "The walk").

Usage: ``python scripts/walk.py HOME remember|recall`` on an ``agent-memory init`` Home. The
command runs once to import everything, then again under :func:`sys.setprofile`; every file
of ``agent_memory`` in which a function is called the second time is listed once, where it
is first entered. Nothing is timed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType
from typing import Any

from agent_memory.cli import cli


def _args(home: Path, verb: str, text: str) -> list[str]:
    if verb == "remember":
        return ["remember", text, "--source", "walk:1", "--home", str(home)]
    return ["recall", text, "--home", str(home)]


def main() -> None:
    """Run the walk and print ``N files`` then one ``path function`` line per file on stderr."""
    home, verb = Path(sys.argv[1]), sys.argv[2]
    cli.main(_args(home, verb, "The warm-up host is db-1."), standalone_mode=False)
    seen: dict[str, str] = {}

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        name = frame.f_code.co_filename
        if event == "call" and "/agent_memory/" in name and name not in seen:
            seen[name] = frame.f_code.co_name

    sys.setprofile(profile)
    try:
        cli.main(_args(home, verb, "The staging host is db-2."), standalone_mode=False)
    finally:
        sys.setprofile(None)
    print(f"{len(seen)} files", file=sys.stderr)
    for name, function in seen.items():
        print(f"  {name.split('/agent_memory/')[1]} {function}", file=sys.stderr)


if __name__ == "__main__":
    main()
