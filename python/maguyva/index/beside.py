"""A step of a build run on a thread of its own while the build goes on with the next one.

Only worth it for a step whose work is mostly native code that releases the GIL (the embedder's
tokenizing and pooling, the trigram index's build): the build's Python (parsing, resolving the
graph) runs meanwhile on the other core. The step is handed a stop flag, which it checks between
parts of its work: a build that fails or is interrupted stops it before it goes on. It runs in
a copy of the starting thread's context, so it reads the build's tuning (`config.using`).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Generic, TypeVar, cast

T = TypeVar("T")


class Beside(Generic[T]):
    """`step(stop)` running on a thread started now; `result` waits for it."""

    def __init__(self, step: Callable[[threading.Event], T], name: str):
        self.stop = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None
        # The step and its context go as the thread's arguments, dropped once it has run: what
        # the step holds (a build's file contents) is not kept alive by this object.
        context = contextvars.copy_context()
        self._thread = threading.Thread(target=self._run, args=(context, step), name=f"maguyva-{name}", daemon=True)
        self._thread.start()

    def _run(self, context: contextvars.Context, step: Callable[[threading.Event], T]) -> None:
        try:
            self._value = context.run(step, self.stop)
        except BaseException as error:  # handed to the thread that waits for the result
            self._error = error

    def result(self) -> T:
        """What the step returned, once it has; what it raised is raised here."""
        self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return cast(T, self._value)

    def cancel(self) -> None:
        """Ask the step to stop and wait until it has (what it raised is dropped: the build it
        served has failed already)."""
        self.stop.set()
        self._thread.join()
