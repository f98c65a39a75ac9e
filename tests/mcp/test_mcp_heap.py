"""The server hands freed heap pages back after each call (issue 23: its peak resident set)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from agent_memory.home import Home
from agent_memory.mcp import heap, server
from agent_memory.mcp.server import Session, build_server
from agent_memory.memory import Memory

# Fragment the heap: 160 MB of 4 KiB buffers (above pymalloc's 512 bytes, below glibc's mmap
# threshold, so they live in the heap), every 64th kept, the rest freed. free() returns pages
# only from the heap's top, so the resident set stays up until the heap is trimmed.
FRAGMENT = textwrap.dedent(
    """
    import sys
    from agent_memory.mcp.heap import release_free_heap

    def rss_mb():
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024

    buffers = [bytearray(4096) for _ in range(40_000)]
    kept = buffers[::64]
    del buffers
    before = rss_mb()
    released = release_free_heap()
    print(before, rss_mb(), released, len(kept))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's (Linux)")
def test_releasing_the_free_heap_gives_freed_pages_back_and_keeps_what_is_held() -> None:
    done = subprocess.run([sys.executable, "-c", FRAGMENT], check=True, capture_output=True, text=True)
    before, after, released, kept = done.stdout.split()
    assert released == "True" and kept == "625"
    assert float(before) - float(after) > 100  # of the ~155 MB freed in the middle of the heap


def test_without_glibc_nothing_is_released(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_glibc", lambda name, *argtypes: None)
    assert heap.release_free_heap() is False
    assert heap.limit_malloc_arenas() is False


def test_the_server_releases_the_heap_after_every_call_even_a_failed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    calls: list[str] = []
    monkeypatch.setattr(server, "release_free_heap", lambda: calls.append("released") or True)
    home = Home.init(tmp_path / "home", git=False)
    memory = Memory.open(home.root, source_kind="mcp")
    try:
        mcp = build_server(memory, Session(home.root.resolve(), "mcp", (), home.settings.zone))
        anyio.run(mcp.call_tool, "status", {})
        assert calls == ["released"]
        with pytest.raises(Exception, match="query"):
            anyio.run(mcp.call_tool, "recall", {})  # no query: refused by the arguments' check
        assert calls == ["released", "released"]
    finally:
        memory.close()
