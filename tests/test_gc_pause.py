"""The collector pause: overlapping pauses keep the collector off until the last ends, and the
collector's state from before the first is what comes back."""

from __future__ import annotations

import gc
import threading

from maguyva.index import gc_pause


def test_overlapping_pauses_end_with_the_last_and_restore_the_state_before():
    assert gc.isenabled()
    first = gc_pause.paused()
    first.__enter__()
    second_entered, release = threading.Event(), threading.Event()

    def other() -> None:
        with gc_pause.paused():
            second_entered.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    try:
        assert second_entered.wait(10) and not gc.isenabled()
        first.__exit__(None, None, None)  # the first ends while the other thread's pause lasts
        assert not gc.isenabled()
    finally:
        release.set()
        thread.join(10)
    assert gc.isenabled()


def test_a_collector_turned_off_before_stays_off():
    gc.disable()
    try:
        with gc_pause.paused(), gc_pause.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_failure_inside_still_ends_the_pause():
    try:
        with gc_pause.paused():
            raise ValueError("inside")
    except ValueError:
        pass
    assert gc.isenabled()
