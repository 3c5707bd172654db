"""A parsing worker process: `python -m maguyva.index.parse.worker` (started by `pool.parse_files`)."""

from __future__ import annotations

import os
import sys

from maguyva.index.parse.pool import serve

if __name__ == "__main__":
    # The answers go out on a private copy of stdout; anything printed goes to stderr, so a
    # stray print cannot break the stream of answers.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    serve(sys.stdin.buffer, answers)
    # Nothing is left to flush once the caller is gone, and nothing to clean up: ending here keeps
    # the interpreter's shutdown from flushing into a closed pipe.
    os._exit(0)
