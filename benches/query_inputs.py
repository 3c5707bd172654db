"""The cost of a query by its length and shape, and the refusal of over-long queries.

    python benches/query_inputs.py                      # lengths 10^2..10^6, every shape
    python benches/query_inputs.py --no-limit           # past the limit too: the pipeline's own cost
    python benches/query_inputs.py --shapes word,dotted --lengths 1000,10000 --preset thorough

Indexes a small invented repository in a scratch MAGUYVA_HOME (not timed), then times
`Index.search` on queries of each length and shape: one long word, a camelCase identifier run,
many words, repeated punctuation, quotes, backticks, mixed scripts with bidirectional marks,
dotted and braced runs, pasted code lines and a stack trace. A query longer than
`MAX_QUERY_CHARS` is refused (QueryTooLongError); its row gives the time of the refusal. With
--no-limit the limit is lifted for the run, so the table shows how the pipeline itself scales
(linearly: ten times the length, about ten times the milliseconds). A shape whose query took
longer than --budget seconds is not timed at greater lengths ("skipped").
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

#: A small invented project: a kiln controller with a web chart and a Go PID loop.
TREE = {
    "kiln/__init__.py": "",
    "kiln/controller.py": (
        "from kiln.sensors import read_thermocouple\n"
        "\n"
        "\n"
        "class KilnController:\n"
        '    """Drives the heating elements along a firing profile."""\n'
        "\n"
        "    def __init__(self, profile):\n"
        "        self.profile = profile\n"
        "\n"
        "    def ramp_to(self, target_celsius, rate_per_hour):\n"
        '        """Raise the chamber temperature towards target at a steady rate."""\n'
        "        current = read_thermocouple(0)\n"
        "        if current > target_celsius:\n"
        '            raise OverTemperatureError("chamber too hot")\n'
        "        return (target_celsius - current) / rate_per_hour\n"
        "\n"
        "\n"
        "class OverTemperatureError(RuntimeError):\n"
        "    pass\n"
    ),
    "kiln/sensors.py": (
        "def read_thermocouple(channel):\n"
        '    """Read one thermocouple channel, in degrees Celsius."""\n'
        "    return 20.0 + channel\n"
    ),
    "kiln/profiles.py": (
        "GLAZE_FIRING = [(600, 100), (1220, 150)]\n"
        "\n"
        "\n"
        "def load_profile(name):\n"
        "    return {'glaze': GLAZE_FIRING}.get(name, [])\n"
    ),
    "web/chart.js": (
        "// Plots the firing curve.\n"
        "function drawFiringCurve(canvas, points) {\n"
        "  const ctx = canvas.getContext('2d');\n"
        "  points.forEach((p) => ctx.lineTo(p.minute, p.celsius));\n"
        "}\n"
        "module.exports = { drawFiringCurve };\n"
    ),
    "firmware/pid.go": (
        "package firmware\n"
        "\n"
        "// PidLoop holds the gains of the element controller.\n"
        "type PidLoop struct { Kp, Ki, Kd float64 }\n"
        "\n"
        "func (p *PidLoop) Step(errorValue float64) float64 {\n"
        "\treturn p.Kp * errorValue\n"
        "}\n"
    ),
    "README.md": "# kiln\n\nA controller for a pottery kiln: firing profiles, sensors, a PID loop.\n",
}


def _cycle(piece: str, n: int) -> str:
    return (piece * (n // len(piece) + 1))[:n]


#: Query shapes: name -> query of a given length.
SHAPES: dict[str, Callable[[int], str]] = {
    "one word": lambda n: "a" * n,
    "camelCase run": lambda n: _cycle("rampToTargetCelsius", n),
    "path word run": lambda n: _cycle("kiln", n),
    "many words": lambda n: _cycle("how does the kiln ramp to the target temperature ", n),
    "punctuation": lambda n: _cycle(".,;:!?-", n),
    "quotes": lambda n: _cycle('"chamber too hot" ', n),
    "open quote": lambda n: '"' + "a" * (n - 1),
    "backticks": lambda n: _cycle("`ramp_to` and ", n),
    "unicode": lambda n: _cycle("température 窯 Ελληνικά \u200fשלום\u202e ", n),
    "dotted": lambda n: _cycle("a.", n),
    "open brace": lambda n: "{" + "x" * (n - 1),
    "code lines": lambda n: _cycle("current = read_thermocouple(0);\n", n),
    "stack trace": lambda n: _cycle('  File "kiln/controller.py", line 14, in ramp_to\n', n),
}
LENGTHS = (100, 1_000, 10_000, 100_000, 1_000_000)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", default=",".join(map(str, LENGTHS)), help="query lengths, comma-separated")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="shapes, comma-separated")
    parser.add_argument("--preset", default="default", choices=["quick", "default", "thorough"])
    parser.add_argument("--runs", type=int, default=3, help="timed runs per query (the median is shown)")
    parser.add_argument("--budget", type=float, default=30.0, help="seconds after which longer queries of a shape are skipped")
    parser.add_argument("--no-limit", action="store_true", help="lift the query length limit for this run")
    args = parser.parse_args()
    lengths = [int(x) for x in args.lengths.split(",")]
    shapes = args.shapes.split(",")
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown:
        parser.error(f"unknown shape {unknown[0]!r}; the shapes are {', '.join(SHAPES)}")

    with tempfile.TemporaryDirectory() as scratch:
        os.environ["MAGUYVA_HOME"] = str(Path(scratch) / "home")
        from maguyva import Index
        from maguyva.query import search as search_module
        from maguyva.query.intents import MAX_QUERY_CHARS
        from maguyva.query.search import QueryTooLongError

        if args.no_limit:
            search_module.MAX_QUERY_CHARS = 10**12
        root = Path(scratch) / "kiln"
        for rel, text in TREE.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        index = Index.build(root)
        index.search("warm up the embedder and the tables", preset="thorough")
        limit = "lifted" if args.no_limit else f"{MAX_QUERY_CHARS:,} characters"
        print(f"{index.summary.files} files, {index.summary.chunks} chunks; preset {args.preset}; "
              f"limit {limit}; median of {args.runs} runs\n")
        print("| length | shape | ms |")
        print("| ---: | --- | ---: |")
        for shape in shapes:
            slow = False
            for n in lengths:
                if slow:
                    print(f"| {n:,} | {shape} | skipped |", flush=True)
                    continue
                query = SHAPES[shape](n)
                times, refused = [], False
                for _ in range(args.runs):
                    started = time.perf_counter()
                    try:
                        index.search(query, preset=args.preset)
                    except QueryTooLongError:
                        refused = True
                    times.append((time.perf_counter() - started) * 1e3)
                    if times[-1] > args.budget * 1e3:
                        break
                ms = statistics.median(times)
                slow = ms > args.budget * 1e3
                shown = f"refused in {ms:.3f}" if refused else f"{ms:,.1f}"
                print(f"| {n:,} | {shape} | {shown} |", flush=True)
        index.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
