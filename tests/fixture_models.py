"""Local embedding models made for tests: the shipped tokenizer over a small random table."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

from maguyva.embed.local import DEFAULT_MODEL, MODELS_DIR


def small_model(folder: Path, dims: int, seed: int, name: str = "small") -> Path:
    """A model folder made by hand (no checksums): the shipped tokenizer over a random table."""
    folder.mkdir()
    shutil.copyfile(MODELS_DIR / DEFAULT_MODEL / "tokenizer.json", folder / "tokenizer.json")
    rows = json.loads((MODELS_DIR / DEFAULT_MODEL / "config.json").read_text())["vocab_size"]
    table = np.random.default_rng(seed).standard_normal((rows, dims)).astype(np.float32)
    save_file({"embeddings": table}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps(
        {"format_version": 1, "name": name, "dims": dims, "vocab_size": rows, "skip_token_ids": [1]}))
    return folder
