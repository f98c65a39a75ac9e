"""Freed heap memory handed back to the system between the server's calls (issue 23).

glibc's ``free`` returns memory to the kernel only from the top of the heap; the pages of
chunks freed in the middle (the bytes of 100,000 notes read for a ``status``, the rows of a
recall's candidates) stay in the process's resident set until something reuses them. After
each tool call the MCP server asks glibc to give back every whole free page
(``malloc_trim(0)``). Over 100,000 records with 384-d vectors that cut the server's peak
resident set from 416 to 392 MB, same Home, runs one after the other (``bench/serve_memory.py``
measures 393 MB; docs/benchmarks.md "Server memory"), for about half a millisecond per call
(measured on that Home after 30 recalls: 0.5-1.0 ms).

Invariant: only memory already free is released; nothing the process holds changes.
Elsewhere than glibc (macOS, musl) nothing is done.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

__all__ = ["release_free_heap"]

_trim: Callable[[int], int] | None = None
_looked = False


def release_free_heap() -> bool:
    """Return the heap's whole free pages to the kernel (glibc ``malloc_trim(0)``).

    Returns:
        Whether glibc released any memory; ``False`` also where there is no ``malloc_trim``
        (not Linux, or a C library other than glibc).
    """
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


def _malloc_trim() -> Callable[[int], int] | None:
    global _trim, _looked
    if not _looked:
        _looked = True
        if sys.platform.startswith("linux"):
            try:
                function = ctypes.CDLL(None).malloc_trim
            except (OSError, AttributeError):
                function = None
            if function is not None:
                function.argtypes, function.restype = (ctypes.c_size_t,), ctypes.c_int
                _trim = function
    return _trim
