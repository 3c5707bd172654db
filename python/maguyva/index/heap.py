"""Freed memory handed back to the system between the stages of a build.

glibc's malloc keeps what a program frees in arenas, one per thread that allocated, for later
use. What the trigram index freed (built in the core's worker threads) is not reused by what the
parse allocates next (records, in Python's thread), so a build's resident size held both: 1,947
MB at the peak of a cold build of 28,915 files, 1,490 MB once the free pages are returned after
the trigram index and after the contents are dropped. `release()` asks glibc for that
(`malloc_trim`); with another C library (musl, macOS, Windows) it does nothing.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable


def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)  # the symbols the process has loaded, the C library's among them
    except OSError:
        return None
    trim = getattr(libc, "malloc_trim", None)
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim  # type: ignore[no-any-return]


_TRIM = _malloc_trim()


def release() -> bool:
    """Return the heap's free pages to the system where the C library can (microseconds to a
    millisecond); whether it could."""
    if _TRIM is None:
        return False
    _TRIM(0)
    return True
