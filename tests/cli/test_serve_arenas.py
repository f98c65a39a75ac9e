"""A server process keeps two malloc arenas (issue 23: its peak resident set at 100k records)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from agent_memory.cli import cli

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc arenas")

# Eight threads allocating at once, then glibc's own report of its arenas on stderr.
PROBE = textwrap.dedent(
    """
    import ctypes, sys, threading
    from agent_memory.mcp.heap import limit_malloc_arenas
    print(limit_malloc_arenas(int(sys.argv[1])) if sys.argv[1] != "0" else "unset")
    barrier = threading.Barrier(8)
    def work():
        barrier.wait()
        for _ in range(200):
            blocks = [bytearray(200_000) for _ in range(20)]
            del blocks
    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads: thread.start()
    for thread in threads: thread.join()
    sys.stdout.flush()
    ctypes.CDLL(None).malloc_stats()
    """
)


def arenas(cap: int, **env: str) -> tuple[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(cap)],
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"} | env,
    )
    return done.stdout.strip(), sum(line.startswith("Arena ") for line in done.stderr.splitlines())


def test_threads_allocating_at_once_share_the_capped_arenas() -> None:
    said, capped = arenas(2)
    _, free = arenas(0)
    assert said == "True" and capped == 2
    assert free > 2  # without the cap glibc makes more: the test would see a cap that does nothing


def test_a_cap_the_user_set_is_left_as_it_is() -> None:
    said, count = arenas(2, MALLOC_ARENA_MAX="3")
    assert said == "False" and count == 3


def test_serve_caps_the_arenas_before_the_server_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    import agent_memory.mcp
    from agent_memory.mcp import heap

    order: list[str] = []
    monkeypatch.setattr(heap, "limit_malloc_arenas", lambda: order.append("arenas") or True)
    monkeypatch.setattr(agent_memory.mcp, "serve", lambda *args, **kwargs: order.append("serve"))
    result = CliRunner().invoke(cli, ["serve"])  # through the group, as the command line runs it
    assert result.exit_code == 0, result.output
    assert order == ["arenas", "serve"]
