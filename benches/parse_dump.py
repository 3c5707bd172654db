"""Every file under ROOT parsed, as one JSON file, so that two checkouts' parsing rules can be
shown to read a language's files the same (symbols, references, chunks, words).

    PYTHONHASHSEED=0 python benches/parse_dump.py ROOT now.json [--suffix .zig .zon]
    PYTHONHASHSEED=0 PYTHONPATH=BASE/python python benches/parse_dump.py ROOT base.json [--suffix ...]
    cmp base.json now.json

A query rewritten to compile faster (`maguyva.index.parse.languages`) leaves the file the same to
the byte; PYTHONHASHSEED fixes the order in which a file's words (a set) are written.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--suffix", nargs="+", default=(), help="only files with these endings (default: every file)")
    args = parser.parse_args()

    from maguyva.index.parse import parse_file

    parsed = {}
    for path in sorted(args.root.rglob("*")):
        if path.is_file() and (not args.suffix or path.name.endswith(tuple(args.suffix))):
            name = path.relative_to(args.root).as_posix()
            parsed[name] = dataclasses.asdict(parse_file(name, path.read_bytes()))
    args.out.write_text(json.dumps(parsed, sort_keys=True, default=repr))
    print(f"{len(parsed)} files in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
