"""Helpers of the review page tests: a Home filled through the installed command.

``home`` is made and filled with ``agent-memory`` itself (init, remember, consolidate), in a
private config folder: a plain record, a state value disputed by a tainted one, a quarantined
record, a stored ``<script>`` body, and two near-duplicates whose merge ``consolidate`` files as
a maintenance proposal.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

COMMAND = shutil.which("agent-memory", path=str(Path(sys.executable).parent))
SCRIPT_BODY = (
    '<script>document.title="pwned";window.pwned=1</script><img src=x onerror="window.pwned=2"> from a page'
)
QUARANTINED = "The release checklist lives in docs/release.md"
LEMON = "Ada prefers green tea in the morning with lemon"
HONEY = "Ada prefers green tea in the morning with honey"


@dataclass(frozen=True)
class Filled:
    """A Home made by :func:`fill`, with the ids of what it holds."""

    root: Path
    env: dict[str, str]
    plain: str
    staging: str
    disputer: str
    quarantined: str
    script: str

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run the installed command on this Home (``--home`` added)."""
        assert COMMAND, "the agent-memory command is not installed next to this Python"
        return subprocess.run(
            [COMMAND, *args, "--home", str(self.root)],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
            env=self.env,
        )

    def ok(self, *args: str) -> str:
        """Run, fail on a non-zero exit, return stdout."""
        result = self.cli(*args)
        assert result.returncode == 0, f"agent-memory {' '.join(args)}: {result.stderr}"
        return result.stdout


def fill(folder: Path) -> Filled:
    """Make a Home under ``folder`` and fill it through the installed command."""
    env = {k: v for k, v in os.environ.items() if k != "AGENT_MEMORY_HOME"}
    env["XDG_CONFIG_HOME"] = str(folder / "config")
    root = folder / "home"
    subprocess.run([COMMAND or "agent-memory", "init", str(root)], check=True, env=env, capture_output=True)
    made = Filled(root, env, "", "", "", "", "")

    def remember(*args: str) -> str:
        return made.ok("remember", *args).strip()

    plain = remember("Deploys happen on Tuesdays after the standup", "--tag", "process")
    staging = remember("Staging runs on db-3", "--kind", "state", "--subject", "host:staging")
    disputer = remember(
        "Staging runs on db-4", "--kind", "state", "--subject", "host:staging", "--taint", "external"
    )
    quarantined = remember(QUARANTINED, "--taint", "external")
    script = remember(SCRIPT_BODY)
    remember(LEMON)
    remember(HONEY)
    made.ok("consolidate")
    made.ok("render")
    return Filled(root, env, plain, staging, disputer, quarantined, script)


def text_of(html: str) -> str:
    """Return the text of a page: tags dropped, the entities the templates make read back."""
    import html as entities

    return entities.unescape(re.sub(r"<[^>]+>", "", html))
