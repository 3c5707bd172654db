"""When a Hamming scan is worth the shared pool: one query's top-50 over random codes, on the
calling thread (`threads=1`) against the pool (`threads=2`), for whole matrices and for
allow-lists made of runs of neighbouring rows (what a filter's whole files give).

    python benches/hamming_pool.py [--code-bytes 64] [--reps 50]

Prints the median milliseconds of each; `threads=0` (the default) follows the faster side of
the crossing, set in `maguyva_core::hamming` as a number of bytes of codes.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from maguyva._core import hamming_top_k


def median_ms(call, reps: int) -> float:
    times = []
    for _ in range(reps):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1e3)
    return statistics.median(times)


def runs_of(rows: int, wanted: int, rng: np.random.Generator) -> np.ndarray:
    """About `wanted` of `rows`, in runs of 1-40 neighbours with gaps between them, ascending."""
    kept, row = [], 0
    while row < rows and sum(map(len, kept)) < wanted:
        run = int(rng.integers(1, 41))
        kept.append(np.arange(row, min(rows, row + run)))
        row += run + int(rng.integers(1, max(2, 2 * run * rows // wanted - run)))
    return np.concatenate(kept)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code-bytes", type=int, default=64)
    parser.add_argument("--reps", type=int, default=50)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    total = 1_000_000
    codes = rng.integers(0, 256, size=(total, args.code_bytes), dtype=np.uint8)
    query = rng.integers(0, 256, size=args.code_bytes, dtype=np.uint8)
    print(f"{'rows':>8} {'MiB':>6}  whole: alone / pool ms   allow-list of runs: alone / pool ms")
    for rows in (20_000, 40_000, 60_000, 100_000, 200_000, 400_000):
        whole = codes[:rows]
        allow = runs_of(total, rows, rng)
        timings = [
            median_ms(lambda: hamming_top_k(whole, query, 50, threads=threads), args.reps) for threads in (1, 2)
        ] + [
            median_ms(lambda: hamming_top_k(codes, query, 50, allow=allow, threads=threads), args.reps) for threads in (1, 2)
        ]
        print(f"{rows:>8} {rows * args.code_bytes / 2**20:>6.1f}  {timings[0]:>6.3f} / {timings[1]:<6.3f}"
              f"            {timings[2]:>6.3f} / {timings[3]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
