"""A build hands freed memory back to the system where the C library allows it."""

from __future__ import annotations

import platform
import sys

import pytest

from maguyva.index import heap

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's")
def test_free_pages_are_returned_with_glibc() -> None:
    assert heap.release() is True


def test_release_is_harmless_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_TRIM", None)  # a C library without malloc_trim
    assert heap.release() is False
