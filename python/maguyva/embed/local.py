"""The offline default embedder: a static token-embedding model shipped inside the package.

A text's embedding is the mean of its tokens' vectors, looked up in one table (no neural network
runs at query or index time), and its code is the sign of that mean. The shipped model's rows are
two tables side by side, 512 dimensions in all: one distilled from all-MiniLM-L6-v2
(`tools/build_local_model.py`), and the same table trained on (natural language, code) pairs
mined from public repositories (`tools/train_embedder.py`); a code's Hamming distance is the sum
of the two tables' (the model folder's NOTICE says what it derives from);
it needs numpy and tokenizers (the table's safetensors file is read by `tensor_in`), no key, no
network and no download. A BERT-style
WordPiece tokenizer (the shipped one) is run by the compiled core, which tokenizes and pools in
threads (`compiled_tokenizer`); the `tokenizers` library runs any other.

A model folder holds:

    config.json         {"format_version": 1, "name", "dims", "vocab_size", "skip_token_ids",
                         "sha256": {file: digest}, ...}
    SHA256SUMS          "<digest>  config.json": the config's own checksum, so that damage to
                        any file (the digests in config.json included) is found at load
    model.safetensors   tensor "embeddings": (vocab_size, dims), float16 or float32
    tokenizer.json      a `tokenizers` tokenizer whose ids index the table's rows
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

from maguyva._core import WordPieceTokenizer
from maguyva.embed.base import Codes
from maguyva.errors import EmbeddingError

MODELS_DIR = Path(__file__).resolve().parent / "models"
#: The model `LocalEmbedder()` loads; chosen by `benches/embedders.py` (see benches/README.md).
DEFAULT_MODEL = "minilm-l6-code-512"
FORMAT_VERSION = 1
#: The file holding config.json's SHA-256 (config.json holds those of the other files).
CHECKSUMS = "SHA256SUMS"
#: Where a model that splits identifiers puts a space before lower-casing: between a lower-case
#: letter or digit and an upper-case letter, and before the last capital of a run that a
#: lower-case letter follows (`parseHTTPRequest` -> `parse HTTP Request`). Written into a
#: tokenizer.json's normalizer by `tools/build_local_model.py --split-identifiers` (such a
#: tokenizer runs on the library's path).
IDENTIFIER_BOUNDARY = r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])"

# Texts whose distinct lines are tokenized together.
_GROUP_TEXTS = 2048
# Lines tokenized as one text (see LocalEmbedder._token_ids).
_PACK_LINES = 256
# Added tokens usable to separate packed lines, in order of preference.
_SEPARATORS = ("[PAD]", "[SEP]", "<pad>", "</s>")
# Rows gathered per numpy pass: bounds the gathered float32 block to tens of MB.
_GATHER_ROWS = 32768


def segment_sums(
    table: npt.NDArray[np.float32], ids: npt.NDArray[np.int64], counts: npt.NDArray[np.int64]
) -> npt.NDArray[np.float32]:
    """Row sums of `table` over consecutive segments of `ids`: segment i is the next
    `counts[i]` ids; an empty segment sums to zeros. Returns (len(counts), table.shape[1]).

    Segments of equal length are summed together as one (segments, length, dims) block, which
    keeps numpy on contiguous rows: several times faster than `np.add.reduceat`.
    """
    out = np.zeros((len(counts), table.shape[1]), dtype=table.dtype)
    starts = np.cumsum(counts) - counts
    by_length = np.argsort(counts, kind="stable")
    runs = np.split(by_length, np.flatnonzero(np.diff(counts[by_length])) + 1)
    for run in runs:
        length = int(counts[run[0]]) if run.size else 0
        if length == 0:
            continue
        offsets = np.arange(length)
        step = max(1, _GATHER_ROWS // length)
        for first in range(0, run.size, step):
            rows = run[first : first + step]
            out[rows] = table[ids[starts[rows, None] + offsets]].sum(axis=1)
    return out


def segment_positions(counts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """0, 1, ..., counts[0]-1, 0, 1, ..., counts[1]-1, ... as one array."""
    total = int(counts.sum())
    starts = np.cumsum(counts) - counts
    return np.arange(total) - np.repeat(starts, counts)


def _pick_separator(tokenizer: Tokenizer, skip: set[int]) -> tuple[str, int] | None:
    """A special token the tokenizer always keeps whole, to separate packed lines."""
    special = {
        tok.content: tid
        for tid, tok in tokenizer.get_added_tokens_decoder().items()
        if tok.special and tid not in skip
    }
    for text in _SEPARATORS:
        if text in special:
            return text, special[text]
    return None


def _splits_at_newlines(tokenizer: Tokenizer) -> bool:
    """Whether tokenizing a text equals tokenizing its lines one by one (true of tokenizers that
    split words at whitespace, like BERT's; false of byte-level BPE, which keeps newlines)."""
    probe = "def f(x):\n    return x.value  # ok\n\n\tclass Y: pass\r\nz"
    whole = tokenizer.encode(probe, add_special_tokens=False).ids
    lines = tokenizer.encode_batch(probe.split("\n"), add_special_tokens=False)
    return whole == [i for line in lines for i in line.ids]


def _library_tokenizer(text: str) -> Tokenizer:
    tokenizer = Tokenizer.from_str(text)
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def compiled_tokenizer(spec: dict[str, Any]) -> tuple[WordPieceTokenizer, int] | None:
    """The core's WordPiece tokenizer for a `tokenizer.json` it reproduces id for id (BERT's
    normalizer, pre-tokenizer and WordPiece model, added tokens matched as written), with the
    number of ids it can give; else None (the `tokenizers` library tokenizes). The core
    tokenizes and pools in threads without the GIL: about 10x the library's speed on source."""
    try:
        normalizer, pre, model = spec["normalizer"], spec["pre_tokenizer"], spec["model"]
        if (normalizer or {}).get("type") != "BertNormalizer" or (pre or {}).get("type") != "BertPreTokenizer":
            return None
        if model.get("type") != "WordPiece" or not isinstance(model.get("vocab"), dict):
            return None
        added = spec.get("added_tokens") or []
        if any(t.get("single_word") or t.get("lstrip") or t.get("rstrip") or t.get("normalized") for t in added):
            return None
        vocab: dict[str, int] = model["vocab"]
        tokens = [""] * len(vocab)
        for token, i in vocab.items():
            tokens[i] = token
        lowercase = bool(normalizer.get("lowercase", True))
        strip = normalizer.get("strip_accents")
        size = 1 + max([len(tokens) - 1, *(int(t["id"]) for t in added)])
        return WordPieceTokenizer(
            tokens,
            vocab[model["unk_token"]],
            str(model.get("continuing_subword_prefix") or "##"),
            int(model.get("max_input_chars_per_word", 100)),
            bool(normalizer.get("clean_text", True)),
            bool(normalizer.get("handle_chinese_chars", True)),
            lowercase if strip is None else bool(strip),
            lowercase,
            [(str(t["content"]), int(t["id"])) for t in added],
        ), size
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return None  # a tokenizer of another shape: the library's own path


def _checked_config(folder: Path) -> bytes:
    """config.json's bytes, checked against SHA256SUMS when the folder has one."""
    config = (folder / "config.json").read_bytes()
    sums = folder / CHECKSUMS
    if not sums.exists():
        return config  # a model made by hand: its config is trusted as it is
    lines = sums.read_bytes().decode("ascii", "replace").split("\n")
    if lines[-1] == "":
        lines.pop()  # the final newline (only "\n" ends a line: no other control character passes)
    recorded = {name: digest for digest, name in (line.split("  ", 1) for line in lines if "  " in line)}
    if len(recorded) != len(lines) or recorded.get("config.json") != hashlib.sha256(config).hexdigest():
        raise EmbeddingError(
            f"{folder}: damaged local embedding model (config.json and {CHECKSUMS} disagree); reinstall maguyva"
        )
    return config


def _checked_bytes(folder: Path, name: str, config: dict[str, object]) -> bytes:
    """A model file's bytes, checked against the SHA-256 its config records (when it records
    one): a damaged table would embed every text wrongly without any error."""
    data = (folder / name).read_bytes()
    digests = config.get("sha256")
    expected = digests.get(name) if isinstance(digests, dict) else None
    if expected is not None and hashlib.sha256(data).hexdigest() != expected:
        raise EmbeddingError(
            f"{folder / name}: damaged local embedding model (its SHA-256 differs from the one in "
            "config.json); reinstall maguyva"
        )
    return data


#: The element types a model's table may be stored in, by their safetensors names.
_TENSOR_TYPES: dict[str, np.dtype[Any]] = {"F16": np.dtype("<f2"), "F32": np.dtype("<f4")}


def tensor_in(data: bytes, name: str) -> npt.NDArray[Any]:
    """The tensor `name` of a safetensors file's `data` (a little-endian header length, a JSON
    header, then the tensors' bytes), as a read-only array over `data` itself: the table is
    tens of megabytes, and a copy of it costs a fifth of loading the model. ValueError for
    anything the header does not account for exactly."""
    if len(data) < 8:
        raise ValueError("shorter than a safetensors header")
    header_end = 8 + int.from_bytes(data[:8], "little")
    if header_end > len(data):
        raise ValueError("the safetensors header runs past the file")
    header = json.loads(data[8:header_end])
    entry = header.get(name) if isinstance(header, dict) else None
    if not isinstance(entry, dict):
        raise ValueError(f"no tensor {name!r}")
    dtype = _TENSOR_TYPES.get(str(entry.get("dtype")))
    shape, offsets = entry.get("shape"), entry.get("data_offsets")
    if dtype is None:
        raise ValueError(f"tensor {name!r} is {entry.get('dtype')!r}, not float16 or float32")
    if not (isinstance(shape, list) and all(isinstance(n, int) and n >= 0 for n in shape)):
        raise ValueError(f"tensor {name!r} has no shape")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(n, int) for n in offsets)):
        raise ValueError(f"tensor {name!r} has no place in the file")
    start, end = header_end + offsets[0], header_end + offsets[1]
    count = int(np.prod(shape, dtype=np.int64))
    if not header_end <= start <= end <= len(data) or end - start != count * dtype.itemsize:
        raise ValueError(f"tensor {name!r}'s bytes do not match its shape")
    tensor: npt.NDArray[Any] = np.frombuffer(data, dtype=dtype, count=count, offset=start).reshape(shape)
    return tensor


def available_models() -> list[str]:
    """Names of the models shipped in the package."""
    if not MODELS_DIR.is_dir():
        return []
    return sorted(p.name for p in MODELS_DIR.iterdir() if (p / "config.json").is_file())


def _identifier(config: dict[str, object]) -> str:
    """A model's name plus a prefix of its table's recorded hash."""
    sha256 = config.get("sha256")
    digest = str(sha256.get("model.safetensors", ""))[:8] if isinstance(sha256, dict) else ""
    return f"{config['name']}-{digest}" if digest else str(config["name"])


def model_identity(model: str | os.PathLike[str] = DEFAULT_MODEL) -> tuple[str, int]:
    """The identifier and dimensions a `LocalEmbedder` of `model` would have, from its checked
    config.json alone: enough to tell whether an index was embedded by it, without loading it."""
    folder = resolve_model_dir(model)
    try:
        config = json.loads(_checked_config(folder))
        return _identifier(config), int(config["dims"])
    except EmbeddingError:
        raise
    except Exception as err:  # missing file or key, bad JSON
        raise EmbeddingError(f"{folder}: unreadable local embedding model ({type(err).__name__}: {err})") from None


def resolve_model_dir(model: str | os.PathLike[str]) -> Path:
    """The folder of `model`: a shipped model's name or a path to a model folder."""
    path = Path(model)
    if path.is_dir():
        return path
    shipped = MODELS_DIR / str(model)
    if shipped.is_dir():
        return shipped
    names = ", ".join(available_models()) or "none"
    raise EmbeddingError(f"no local embedding model {str(model)!r} (shipped models: {names})")


#: Models loaded by `shared_local_embedder`: (folder, batch size) -> (the stat of its files when
#: read, the embedder). A process that builds and searches several indexes reads a model once.
_loaded: dict[tuple[str, int], tuple[tuple[tuple[str, int, int, int], ...], LocalEmbedder]] = {}
_loaded_lock = threading.Lock()
#: Models kept loaded at once: one in use, one more (a training run's candidates come and go).
_LOADED_MAX = 2


def shared_local_embedder(model: str | os.PathLike[str] = DEFAULT_MODEL, *, batch_size: int = 2048) -> LocalEmbedder:
    """The `LocalEmbedder` of `model`, loaded once per process and shared (an embedder is safe
    to call from several threads): loading costs tens of milliseconds and the table's megabytes,
    and every index build and opened index asks for one. A model whose files changed since it
    was loaded (size, mtime or inode) is loaded again."""
    folder = resolve_model_dir(model).resolve()
    key = (str(folder), batch_size)
    stamp = _files_stamp(folder)
    with _loaded_lock:
        entry = _loaded.get(key)
        if entry is not None and entry[0] == stamp:
            return entry[1]
    embedder = LocalEmbedder(folder, batch_size=batch_size)
    with _loaded_lock:
        _loaded.pop(key, None)
        while len(_loaded) >= _LOADED_MAX:
            del _loaded[next(iter(_loaded))]  # the longest loaded
        _loaded[key] = (stamp, embedder)
    return embedder


def _files_stamp(folder: Path) -> tuple[tuple[str, int, int, int], ...]:
    stamp = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.is_file():
            info = entry.stat()
            stamp.append((entry.name, info.st_size, info.st_mtime_ns, info.st_ino))
    return tuple(stamp)


class LocalEmbedder:
    """Static-embedding model on the CPU: tokenize, mean-pool token vectors, keep the signs.

    Queries and documents go through the same function (the model has no instruction prompts).
    `batch_size` is how many texts `embed_texts` hands over at a time.
    """

    provider = "local"

    def __init__(self, model: str | os.PathLike[str] = DEFAULT_MODEL, *, batch_size: int = 2048):
        folder = resolve_model_dir(model)
        try:
            config = json.loads(_checked_config(folder))
            if config.get("format_version") != FORMAT_VERSION:
                raise ValueError(f"format version {config.get('format_version')!r}")
            table = tensor_in(_checked_bytes(folder, "model.safetensors", config), "embeddings")
            tokenizer_text = _checked_bytes(folder, "tokenizer.json", config).decode()
            compiled = compiled_tokenizer(json.loads(tokenizer_text))
            # The library's tokenizer is read only when the core cannot tokenize (or when asked
            # for, by training): parsing it costs a fifth of loading the model.
            tokenizer: Tokenizer | None = None
            if compiled is not None:
                vocab_size = compiled[1]
            else:
                tokenizer = _library_tokenizer(tokenizer_text)
                vocab_size = tokenizer.get_vocab_size()
            dims = int(config["dims"])
            identifier = _identifier(config)
            skip = np.asarray(config.get("skip_token_ids", []), dtype=np.int64).reshape(-1)
        except EmbeddingError:
            raise
        except Exception as err:  # missing file or key, bad JSON, bad safetensors or tokenizer
            raise EmbeddingError(f"{folder}: unreadable local embedding model ({type(err).__name__}: {err})") from None
        if table.ndim != 2 or table.shape[1] != dims or dims % 8:
            raise EmbeddingError(
                f"{folder}: model table shaped {table.shape}, config says {dims} dimensions"
            )
        if vocab_size > table.shape[0]:
            raise EmbeddingError(f"{folder}: tokenizer has {vocab_size} tokens, the table {table.shape[0]} rows")
        if config.get("vocab_size", table.shape[0]) != table.shape[0]:
            raise EmbeddingError(f"{folder}: config says {config['vocab_size']} tokens, the table has {table.shape[0]} rows")

        self.folder = folder
        self.config = config
        self.dims = dims
        #: Name plus a prefix of the table's hash, so a rebuilt model never reuses cached codes.
        self.model = identifier
        self.batch_size = batch_size
        #: The table as stored (float16 for the shipped model): the core reads half floats as
        #: they are, widening each row as it sums it, so loading copies nothing.
        self._table = np.ascontiguousarray(table) if table.dtype in (np.float16, np.float32) else table.astype(np.float32)
        self._tokenizer_text = tokenizer_text
        if tokenizer is not None:
            self._tokenizer = tokenizer
        self._skip = skip
        self._compiled = compiled[0] if compiled is not None else None
        self._skip_ids = skip.astype(np.uint32)

    @cached_property
    def _float_table(self) -> npt.NDArray[np.float32]:
        """The table widened to float32, for the sums numpy makes (without the core's tokenizer)."""
        return np.ascontiguousarray(self._table, dtype=np.float32)

    @cached_property
    def _tokenizer(self) -> Tokenizer:
        """The `tokenizers` library's tokenizer of the model (read on first use)."""
        try:
            return _library_tokenizer(self._tokenizer_text)
        except Exception as err:  # noqa: BLE001 - one error for whatever the library refuses
            raise EmbeddingError(f"{self.folder}: unreadable tokenizer ({type(err).__name__}: {err})") from None

    @cached_property
    def _separator(self) -> tuple[str, int] | None:
        return _pick_separator(self._tokenizer, set(self._skip.tolist()))

    @cached_property
    def _line_wise(self) -> bool:
        return _splits_at_newlines(self._tokenizer)

    def __repr__(self) -> str:
        return f"LocalEmbedder(model={self.model!r}, dims={self.dims})"

    # -- the model ------------------------------------------------------------------------------

    def _token_ids(
        self, lines: list[str]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """All lines' token ids concatenated, and each line's token count.

        Lines are tokenized in packs of `_PACK_LINES`, each line followed by a special token that
        the tokenizer keeps whole; splitting the ids at those tokens gives every line's ids back.
        That is the same result as tokenizing line by line, without the per-line overhead. Lines
        that contain the separator's text are tokenized on their own.
        """
        if self._compiled is not None:
            compiled_ids, compiled_counts = self._compiled.token_ids(list(lines))
            return compiled_ids.astype(np.int64), compiled_counts
        ids_parts: list[npt.NDArray[np.int64]] = []
        counts = np.zeros(len(lines), dtype=np.int64)
        sep = self._separator if self._line_wise else None
        if sep is None:
            packed: list[int] = []
            alone = list(range(len(lines)))
        else:
            text, sep_id = sep
            alone = [i for i, line in enumerate(lines) if text in line]
            if alone:
                lone = set(alone)
                packed = [i for i in range(len(lines)) if i not in lone]
            else:
                packed = list(range(len(lines)))
            glue = f" {text} "
            packs = [
                glue.join([lines[i] for i in packed[p : p + _PACK_LINES]]) + glue
                for p in range(0, len(packed), _PACK_LINES)
            ]
            encodings = self._tokenizer.encode_batch_fast(packs, add_special_tokens=False)
            flat = np.fromiter(chain.from_iterable(e.ids for e in encodings), dtype=np.int64)
            is_sep = flat == sep_id
            ends = np.flatnonzero(is_sep)
            if ends.size != len(packed):  # pragma: no cover - lines holding the text were set aside
                raise EmbeddingError("the line separator token was not kept whole")
            counts[packed] = np.diff(ends, prepend=-1) - 1
            ids_parts.append(flat[~is_sep])
        if alone:
            encodings = self._tokenizer.encode_batch_fast(
                [lines[i] for i in alone], add_special_tokens=False
            )
            id_lists = [e.ids for e in encodings]
            counts[alone] = np.fromiter(map(len, id_lists), dtype=np.int64, count=len(alone))
            ids_parts.append(np.fromiter(chain.from_iterable(id_lists), dtype=np.int64))
            if packed:
                # Put every line's ids back in line order.
                order = np.concatenate([np.asarray(packed), np.asarray(alone)])
                sizes = counts[order]
                starts = np.cumsum(sizes) - sizes
                merged = np.concatenate(ids_parts)
                where = np.empty(len(lines), dtype=np.int64)
                where[order] = starts
                ids_parts = [merged[np.repeat(where, counts) + segment_positions(counts)]]
        ids = np.concatenate(ids_parts) if ids_parts else np.zeros(0, dtype=np.int64)
        return ids, counts

    def _line_sums(
        self, lines: list[str]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """Per line: the sum of its token vectors, (len(lines), dims), and its token count."""
        ids, counts = self._token_ids(lines)
        if self._skip.size and ids.size:
            keep = ~np.isin(ids, self._skip)
            if not keep.all():
                owner = np.repeat(np.arange(len(lines)), counts)
                ids = ids[keep]
                counts = np.bincount(owner[keep], minlength=len(lines)).astype(np.int64)
        return segment_sums(self._float_table, ids, counts), counts

    def _text_sums(
        self, texts: Sequence[str]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """Sum of token vectors per text, (len(texts), dims), and token count per text.

        When no token can span a line break (the tokenizer splits words at whitespace, checked
        at load time), each distinct line is tokenized and summed once and a text's sum is the
        sum of its lines'. Code repeats lines a lot (blank lines, braces, imports, overlapping
        chunks): over typical chunks only about a third of the lines are distinct.
        """
        if self._compiled is not None:
            return self._compiled.pooled_sums(list(texts), self._table, self._skip_ids)
        out = np.empty((len(texts), self.dims), dtype=np.float32)
        totals = np.empty(len(texts), dtype=np.int64)
        for start in range(0, len(texts), _GROUP_TEXTS):
            group = texts[start : start + _GROUP_TEXTS]
            index: dict[str, int] = {}
            line_ids: list[int] = []
            lines_per_text = np.empty(len(group), dtype=np.int64)
            for n, text in enumerate(group):
                before = len(line_ids)
                lines = text.split("\n") if self._line_wise else (text,)
                line_ids.extend([index.setdefault(line, len(index)) for line in lines])
                lines_per_text[n] = len(line_ids) - before
            sums, counts = self._line_sums(list(index))
            order = np.asarray(line_ids, dtype=np.int64)
            stop = start + len(group)
            out[start:stop] = segment_sums(sums, order, lines_per_text)
            first_lines = np.cumsum(lines_per_text) - lines_per_text
            totals[start:stop] = np.add.reduceat(counts[order], first_lines)
        return out, totals

    def embed_float(self, texts: Sequence[str]) -> npt.NDArray[np.float64]:
        """Mean token vectors of `texts`, (len(texts), dims) float64; all zeros for a text with
        no known token."""
        if isinstance(texts, str):
            raise TypeError("embed_float takes a sequence of texts, not one string")
        sums, counts = self._text_sums(texts)
        return sums / np.maximum(counts, 1)[:, None]

    def embed_files(self, files: Sequence[Sequence[str]], context: float) -> Codes:
        """Codes of every file's chunks, file after file, (total chunks, dims // 8) uint8: the
        signs of each chunk's mean token vector plus `context` times its file's (the mean over
        all of the file's tokens). A function of an authentication module then sits nearer a
        question about authentication than its own lines alone would put it. A file of one
        chunk gets the code `embed_documents` gives it."""
        if isinstance(files, str) or any(isinstance(f, str) for f in files):
            raise TypeError("embed_files takes a sequence of files, each a sequence of texts")
        texts = [text for file in files for text in file]
        sums, counts = self._text_sums(texts)
        means = sums / np.maximum(counts, 1).astype(np.float32)[:, None]
        start = 0
        # A loop over files: numpy's `add.reduceat` along rows is ten times slower.
        for size in map(len, files):
            if size > 1:
                stop = start + size
                tokens = max(int(counts[start:stop].sum()), 1)
                means[start:stop] += np.float32(context / tokens) * sums[start:stop].sum(axis=0)
            start += size
        return np.packbits(means > 0, axis=1)

    # -- the protocol ---------------------------------------------------------------------------

    def embed_documents(self, texts: Sequence[str]) -> Codes:
        """Codes of `texts`, (len(texts), dims // 8) uint8: bit set where the mean is > 0."""
        if isinstance(texts, str):
            raise TypeError("embed_documents takes a sequence of texts, not one string")
        # The sign of a mean is the sign of the sum.
        return np.packbits(self._text_sums(texts)[0] > 0, axis=1)

    def embed_query(self, text: str) -> Codes:
        """Code of one query, (dims // 8,) uint8: the code `embed_documents([text])` gives it
        (7 µs a question through the core's tokenizer). Without it, summed here in the same
        order, without the batch path's grouping and packing of lines (60 µs against 170)."""
        if self._compiled is not None:
            code: Codes = self.embed_documents([text])[0]
            return code
        lines = text.split("\n") if self._line_wise else [text]
        encodings = self._tokenizer.encode_batch_fast(lines, add_special_tokens=False)
        sums = np.zeros((len(lines), self.dims), dtype=np.float32)
        for n, encoding in enumerate(encodings):
            ids = np.asarray(encoding.ids, dtype=np.int64)
            if self._skip.size:
                ids = ids[~np.isin(ids, self._skip)]
            if ids.size:
                sums[n] = self._float_table[ids].sum(axis=0)
        return np.packbits(sums.sum(axis=0) > 0)
