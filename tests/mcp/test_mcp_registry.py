"""``agent-memory serve --help`` lists what the server really serves and what a tainted session is refused.

The help is read from the installed command; the tools from a running server through the real
MCP client (``list_tools``), and each refusal from a tainted server (``--taint external``).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp_harness import COMMAND, Connected, connect, new_home, stdio_params, stored

UNKNOWN = "mem:" + "f" * 32

# Arguments each refused tool would accept from an untainted session (the schema passes).
REFUSABLE: dict[str, dict[str, object]] = {
    "supersede": {"old_id": UNKNOWN, "text": "The kiln runs at noon", "reason": "moved"},
    "resolve": {"winner_id": UNKNOWN, "loser_id": "mem:" + "e" * 32, "reason": "checked"},
    "review": {"record_id": UNKNOWN, "verdict": "stale"},
    "decide_pending": {"record_id": UNKNOWN, "verdict": "decline"},
    "reinstate": {"withdrawal_id": "memwd-2026-01-01-001", "reason": "lifted"},
    "redact": {"record_id": UNKNOWN, "reason": "a leak", "authority": "ticket 7"},
    "consolidate": {},
}


@dataclass
class Served:
    home: Path
    help: str
    trusted: Connected
    tainted: Connected


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("registry")
    with pytest.MonkeyPatch.context() as patch, ExitStack() as stack:
        patch.setenv("XDG_CONFIG_HOME", str(root / "config"))
        home = new_home(root / "home")
        assert COMMAND is not None
        shown = subprocess.run([COMMAND, "serve", "--help"], capture_output=True, text=True, check=True)
        yield Served(
            home,
            " ".join(shown.stdout.split()),
            stack.enter_context(connect(stdio_params(home))),
            stack.enter_context(connect(stdio_params(home, "--taint", "external"))),
        )


def _names(listed: str) -> list[str]:
    """Split ``"a, b, and the aliases c and d"`` or ``"a, b and c (except x)"`` into names."""
    plain = re.sub(r"\s*\([^)]*\)", "", listed)
    return [n for n in re.split(r",\s*(?:and the aliases\s+)?|\s+and\s+", plain) if n]


def _listed(help_text: str, pattern: str) -> list[str]:
    found = re.search(pattern, help_text)
    assert found is not None, help_text
    return _names(found.group(1))


def test_serve_help_lists_exactly_the_tools_the_server_registers(served: Served) -> None:
    listed = _listed(served.help, r"Tools: (.*?); review gives stale marks only")
    registered = [tool.name for tool in served.trusted.tools()]
    assert "decide_pending" in registered
    assert sorted(listed) == sorted(registered)
    assert len(listed) == len(set(listed))


def test_every_tool_serve_help_says_a_tainted_session_cannot_use_is_refused_to_one(served: Served) -> None:
    refused = _listed(served.help, r"With --taint, writes are quarantined and (.*?) are refused;")
    assert sorted(refused) == sorted(REFUSABLE)
    assert "consolidate (except dry runs)" in served.help
    before = stored(served.home)
    for name in refused:
        text = served.tainted.error(name, **REFUSABLE[name])
        assert f"{name} is not available to a tainted session (external)" in text, (name, text)
        reached = served.trusted.error(name, **REFUSABLE[name]) if name != "consolidate" else ""
        assert "tainted" not in reached, "untainted, the same call gets past the taint check"
    assert stored(served.home) == before
    assert served.tainted.ok("consolidate", dry_run=True)["dry_run"] is True
