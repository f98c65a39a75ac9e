"""The server process's settings of glibc's malloc (issue 23: its resident set at 100k records).

Two of them, both from the C library by ``ctypes`` and both doing nothing elsewhere than
glibc (macOS, musl):

- :func:`limit_malloc_arenas`, once before the server starts a thread: glibc gives a thread
  that allocates while another holds the main arena an arena of its own, up to eight per
  core, and memory free in one arena serves no other. The threads that ask the indexes side
  by side (:mod:`agent_memory.search.overlap`) and the SDK's event loop could each grow their
  own: 432 MB peak with the default, 419 MB with two arenas, same run (``bench/serve_memory.py``).
- :func:`release_free_heap`, after each tool call: ``free`` returns memory to the kernel only
  from the top of the heap, so the pages of chunks freed in the middle (the bytes of 100,000
  notes read for a ``status``, the rows of a recall's candidates) stayed resident until
  reused. ``malloc_trim(0)`` gives back every whole free page: 416 → 392 MB peak, same Home,
  runs one after the other (``bench/serve_memory.py`` measures 393 MB; docs/benchmarks.md
  "Server memory"), for 0.5-1.0 ms a call on that Home after 30 recalls.

Invariant: only memory already free is released, and only the number of arenas is capped;
nothing the process holds changes.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from typing import Any

__all__ = ["M_ARENA_MAX", "SERVER_ARENAS", "limit_malloc_arenas", "release_free_heap"]

M_ARENA_MAX = -8
"""glibc's ``mallopt`` parameter for the most malloc arenas a process may make (``malloc.h``)."""

SERVER_ARENAS = 2
"""Malloc arenas of a server process: its main thread's and one for the threads that ask indexes."""


def limit_malloc_arenas(arenas: int = SERVER_ARENAS) -> bool:
    """Cap glibc's malloc arenas at ``arenas`` for this process, unless ``MALLOC_ARENA_MAX`` is set.

    Call it before the process starts threads (module docstring).

    Args:
        arenas: The cap (``mallopt(M_ARENA_MAX, arenas)``), at least 1.

    Returns:
        Whether the cap was set: ``False`` off Linux, without ``mallopt``, when the
        environment names its own ``MALLOC_ARENA_MAX`` (read by glibc itself at start), or
        when glibc refused it.
    """
    mallopt = _glibc("mallopt", ctypes.c_int, ctypes.c_int)
    if mallopt is None or "MALLOC_ARENA_MAX" in os.environ:
        return False
    return bool(mallopt(M_ARENA_MAX, max(1, arenas)))


def release_free_heap() -> bool:
    """Return the heap's whole free pages to the kernel (glibc ``malloc_trim(0)``).

    Returns:
        Whether glibc released any memory; ``False`` also where there is no ``malloc_trim``
        (not Linux, or a C library other than glibc).
    """
    trim = _glibc("malloc_trim", ctypes.c_size_t)
    return bool(trim(0)) if trim is not None else False


@functools.cache
def _glibc(name: str, *argtypes: Any) -> Any | None:
    """Return the C library's function ``name`` taking ``argtypes`` and returning an int, or ``None``."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None
    function.argtypes, function.restype = argtypes, ctypes.c_int
    return function
