"""The shipped offline embedder: shape, determinism, meaning, and no network."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import maguyva
from maguyva.embed import Embedder, EmbeddingError, make_embedder
from maguyva.embed import local as local_module
from maguyva.embed.local import DEFAULT_MODEL, MODELS_DIR, LocalEmbedder, available_models

RETRY = '''def send_with_retry(session, request, attempts=5, backoff=0.5):
    """Send an HTTP request, retrying on connection errors and 503 responses."""
    for attempt in range(attempts):
        try:
            response = session.send(request, timeout=10)
        except ConnectionError:
            time.sleep(backoff * 2 ** attempt)
            continue
        if response.status_code != 503:
            return response
        time.sleep(backoff * 2 ** attempt)
    raise RetryError("giving up")'''
TRANSPOSE = '''def transpose(matrix):
    """Return the transpose of a list-of-lists matrix."""
    return [list(row) for row in zip(*matrix)]'''
CONFIG = '''def parse_config(path):
    """Read key = value pairs from an ini file."""
    values = {}
    for line in open(path):
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip()
    return values'''
CSS = ".navbar { display: flex; color: #333; margin: 0 auto; }"


@pytest.fixture(scope="module")
def model() -> LocalEmbedder:
    return LocalEmbedder()


def hamming(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.unpackbits(np.atleast_2d(a) ^ b, axis=-1).sum(axis=-1)


def reference_means(model: LocalEmbedder, texts: list[str]) -> np.ndarray:
    """Plain mean pooling over each whole text, one text at a time."""
    table = model._float_table  # the table widened to float32, as the sums are made
    skip = set(model.config["skip_token_ids"])
    out = np.zeros((len(texts), model.dims), dtype=np.float32)
    for i, text in enumerate(texts):
        encoded = model._tokenizer.encode(text, add_special_tokens=False)
        ids = [t for t in encoded.ids if t not in skip]
        if ids:
            out[i] = table[ids].mean(axis=0)
    return out


def test_shape_dtype_and_protocol(model: LocalEmbedder) -> None:
    assert isinstance(model, Embedder)
    assert model.provider == "local" and model.dims == 512 and model.dims % 8 == 0
    assert model.model.startswith(DEFAULT_MODEL)
    codes = model.embed_documents([RETRY, TRANSPOSE, CSS])
    assert codes.dtype == np.uint8 and codes.shape == (3, 64) and codes.flags.c_contiguous
    query = model.embed_query("http request retry")
    assert query.dtype == np.uint8 and query.shape == (64,)
    assert model.embed_documents([]).shape == (0, 64)
    with pytest.raises(TypeError):
        model.embed_documents("one string")  # type: ignore[arg-type]


def test_deterministic_and_independent_of_batching(model: LocalEmbedder) -> None:
    texts = [RETRY, TRANSPOSE, CONFIG, CSS] * 3
    batch = model.embed_documents(texts)
    np.testing.assert_array_equal(batch, model.embed_documents(texts))
    np.testing.assert_array_equal(batch, LocalEmbedder().embed_documents(texts))
    alone = np.stack([model.embed_documents([t])[0] for t in texts])
    np.testing.assert_array_equal(batch, alone)
    # A query is embedded like a document of the same text, bit for bit, whatever its form:
    # several lines, repeated and blank lines, the line separator's own text, unknown words,
    # characters the tokenizer does not know (skipped).
    separator = model._separator[0] if model._separator else "[PAD]"
    for query in (CONFIG, CSS, "retry with backoff", f"a {separator} b\nc", "x\n\nx\n", "zzqxj 日本語 ☃ 🙂", "☃", "", " "):
        np.testing.assert_array_equal(model.embed_query(query), model.embed_documents([query])[0])


def library_tokenized(model: LocalEmbedder) -> LocalEmbedder:
    """The same model tokenized by the `tokenizers` library, not by the core."""
    other = LocalEmbedder(model.folder)
    other._compiled = None
    return other


#: Texts that exercise every step of BERT's normalization and splitting.
AWKWARD = [
    RETRY,
    "",
    "\n\n\n",
    "x = 1\r\ny = 2\r\n",
    "naïve café — 中文 注释 and émojis 🎉\n\ttabs\tand  spaces ",
    "tokens like [PAD] and [UNK] written in code\n[PAD][PAD]\nnormal line",
    "\u0000\u0007 control characters \ufeff, \x0bvertical\x0ctab \x7f del \u200bzero\u200dwidth",
    "İstanbul ǅemal ﬁnance Ångström ΣΊΣΥΦΟΣ ß ﹏under﹏ «quoted» ‘single’ … ⁂",
    "unassigned \U000c0204 private \ue000 replacement \ufffd surrogate-free",
    "a" * 5000,
    "getUserById(user_id)->fetch_all(); $this->x ?? y ||= z <=> w",
    TRANSPOSE + "\n" + RETRY,
]


def test_the_cores_tokenizer_gives_the_librarys_ids_and_bits(model: LocalEmbedder) -> None:
    """The core tokenizes and pools the shipped model's texts; the result is the library's, id
    for id, and the same bits."""
    assert model._compiled is not None
    library = library_tokenized(model)
    lines = [line for text in AWKWARD for line in text.split("\n")]
    got_ids, got_counts = model._token_ids(lines)
    want_ids, want_counts = library._token_ids(lines)
    np.testing.assert_array_equal(got_counts, want_counts)
    np.testing.assert_array_equal(got_ids, want_ids)
    np.testing.assert_array_equal(model._text_sums(AWKWARD)[0], library._text_sums(AWKWARD)[0])
    np.testing.assert_array_equal(model.embed_documents(AWKWARD), library.embed_documents(AWKWARD))
    for text in AWKWARD:
        np.testing.assert_array_equal(model.embed_query(text), library.embed_query(text))


@pytest.mark.parametrize(
    "options",
    [
        {"lowercase": True},
        {"lowercase": False},
        {"lowercase": False, "strip_accents": True, "clean_text": False},
        {"lowercase": True, "strip_accents": False, "handle_chinese_chars": False},
    ],
)
@pytest.mark.parametrize("special", [True, False])
def test_the_core_follows_each_normalization_option(options: dict[str, bool], special: bool) -> None:
    """Any BERT-style tokenizer.json: each normalizer option, with and without added tokens."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    words = sorted({w for text in AWKWARD for w in text.replace("\n", " ").split(" ") if w})[:300]
    vocab = {"[UNK]": 0, **({"[PAD]": 1} if special else {})}
    for piece in [*words, *(w[:3] for w in words), *(f"##{w[3:6]}" for w in words), "a", "##a", "e", "##e", "中"]:
        vocab.setdefault(piece, len(vocab))
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=40))
    tokenizer.normalizer = normalizers.BertNormalizer(**options)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    if special:
        tokenizer.add_special_tokens(["[PAD]", "[UNK]"])
    compiled, size = local_module.compiled_tokenizer(json.loads(tokenizer.to_str()))
    assert size == tokenizer.get_vocab_size()
    lines = [line for text in AWKWARD for line in text.split("\n")]
    ids, counts = compiled.token_ids(lines)
    want = [tokenizer.encode(line, add_special_tokens=False).ids for line in lines]
    assert counts.tolist() == [len(w) for w in want]
    assert ids.tolist() == [i for w in want for i in w]


def test_a_tokenizer_of_another_shape_is_left_to_the_library() -> None:
    spec = json.loads((MODELS_DIR / DEFAULT_MODEL / "tokenizer.json").read_text())
    assert local_module.compiled_tokenizer(spec) is not None
    for change in ({"normalizer": {"type": "NFKC"}}, {"pre_tokenizer": {"type": "Whitespace"}},
                   {"added_tokens": [{"id": 0, "content": "[PAD]", "lstrip": True}]}):
        assert local_module.compiled_tokenizer({**spec, **change}) is None


@pytest.mark.parametrize("tokenized_by", ["core", "library"])
def test_line_wise_pooling_equals_whole_text_pooling(
    model: LocalEmbedder, monkeypatch: pytest.MonkeyPatch, tokenized_by: str
) -> None:
    """Tokenizing distinct lines once (the library's path: packed, with separators; the core's:
    line by line, in threads) changes nothing."""
    model = model if tokenized_by == "core" else library_tokenized(model)
    texts = AWKWARD + [f"line {i}\n{CONFIG}\n" for i in range(30)]
    # Small groups and packs so that every boundary is crossed.
    monkeypatch.setattr(local_module, "_GROUP_TEXTS", 7)
    monkeypatch.setattr(local_module, "_PACK_LINES", 5)
    monkeypatch.setattr(local_module, "_GATHER_ROWS", 64)
    got = model.embed_float(texts)
    want = reference_means(model, texts)
    np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_array_equal(model.embed_documents(texts), np.packbits(want > 0, axis=1))


def test_a_tokenizer_that_keeps_newlines_is_run_on_whole_texts(tmp_path: Path) -> None:
    """A byte-level BPE tokenizer merges newlines with indentation: no line-wise shortcut."""
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    corpus = [RETRY, TRANSPOSE, CONFIG, CSS] * 5
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<pad>"])
    tokenizer.train_from_iterator(corpus, trainer)
    folder = tmp_path / "bpe"
    folder.mkdir()
    tokenizer.save(str(folder / "tokenizer.json"))
    rng = np.random.default_rng(7)
    table = rng.standard_normal((tokenizer.get_vocab_size(), 16)).astype(np.float32)
    save_file({"embeddings": table}, str(folder / "model.safetensors"))
    config = {"format_version": 1, "name": "bpe", "dims": 16, "skip_token_ids": []}
    (folder / "config.json").write_text(json.dumps(config))

    model = LocalEmbedder(folder)
    assert not model._line_wise and model._compiled is None
    texts = [RETRY, "", "a\n    b\n", TRANSPOSE]
    np.testing.assert_allclose(model.embed_float(texts), reference_means(model, texts), atol=1e-5)
    assert model.embed_documents(texts).shape == (4, 2)


def test_text_without_known_tokens_gives_zero_code(model: LocalEmbedder) -> None:
    assert not model.embed_query("").any()
    assert not model.embed_query("   \n\t ").any()


def test_meaning(model: LocalEmbedder) -> None:
    docs = model.embed_documents([RETRY, TRANSPOSE, CONFIG, CSS])
    for query, best in [
        ("http request retry", 0),
        ("retry failed requests with exponential backoff", 0),
        ("transpose a matrix", 1),
        ("read configuration file", 2),
    ]:
        distances = hamming(model.embed_query(query), docs)
        assert int(np.argmin(distances)) == best, (query, distances)
    rows, _ = maguyva.hamming_top_k(docs, model.embed_query("http request retry"), 2)
    assert rows[0] == 0


def test_a_chunk_carries_what_its_file_is_about(model: LocalEmbedder) -> None:
    """The same helper in a module about retrying requests and in one about matrices: embedded
    in its file, each copy sits nearer the questions of its own module; embedded alone, the
    copies are one code."""
    helper = "def step(values, n):\n    return values[n:] + values[:n]"
    retrying, matrices = [RETRY, helper], [TRANSPOSE, helper]
    alone = model.embed_files([retrying, matrices], 0.0)
    assert alone[1].tobytes() == alone[3].tobytes()
    np.testing.assert_array_equal(alone, model.embed_documents(retrying + matrices))
    codes = model.embed_files([retrying, matrices, [CONFIG]], 1.0)
    in_retrying, in_matrices = codes[1], codes[3]
    for question, home, other in [
        ("retry failed http requests", in_retrying, in_matrices),
        ("transpose a matrix", in_matrices, in_retrying),
    ]:
        query = model.embed_query(question)
        assert hamming(query, home)[0] < hamming(query, other)[0], question
    # The code is the sign of the chunk's mean token vector plus the file's, whose mean is over
    # all of the file's tokens; a file of one chunk keeps the code it has alone.
    sums, counts = model._text_sums(retrying)
    mixed = sums / counts[:, None] + sums.sum(axis=0) / counts.sum()
    np.testing.assert_array_equal(codes[:2], np.packbits(mixed > 0, axis=1))
    np.testing.assert_array_equal(codes[4], model.embed_documents([CONFIG])[0])
    assert model.embed_files([], 1.0).shape == (0, model.dims // 8)
    assert model.embed_files([[], [CONFIG]], 1.0).shape == (1, model.dims // 8)
    with pytest.raises(TypeError):
        model.embed_files(["a file as one string"], 1.0)


def test_no_network_and_no_heavy_imports(tmp_path: Path) -> None:
    """Loading and running the model opens no socket and imports no model-hub library."""
    script = """
import socket, sys
def refuse(*args, **kwargs):
    raise AssertionError("network access attempted")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from maguyva.embed import make_embedder
emb = make_embedder("local")
emb.embed_documents(["def f(x):\\n    return x + 1"] * 3)
emb.embed_query("add one")
heavy = sorted({m.split(".")[0] for m in sys.modules} &
               {"huggingface_hub", "transformers", "torch", "model2vec", "requests", "voyageai"})
print("heavy:", heavy)
"""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MAGUYVA_HOME": str(tmp_path)}
    env.pop("VOYAGE_API_KEY", None)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "heavy: []" in out.stdout


def test_network_blocked_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    assert LocalEmbedder().embed_query("parse config").shape == (64,)


def test_make_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(make_embedder(), LocalEmbedder)
    assert isinstance(make_embedder("local"), LocalEmbedder)
    monkeypatch.delenv("VOYAGE_API_KEY", raising=False)
    assert isinstance(make_embedder("auto"), LocalEmbedder)
    with pytest.raises(ValueError, match="unknown embedder 'nope'.*'local', 'voyage'"):
        make_embedder("nope")


def test_model_folder_errors(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="no local embedding model 'missing'"):
        LocalEmbedder("missing")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    with pytest.raises(EmbeddingError, match="unreadable local embedding model"):
        LocalEmbedder(broken)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_a_table_is_read_from_the_files_bytes_as_safetensors_wrote_it(dtype: type, tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    rng = np.random.default_rng(3)
    tensors = {"bias": rng.standard_normal(5).astype(np.float32), "embeddings": rng.standard_normal((37, 24)).astype(dtype)}
    save_file(tensors, str(tmp_path / "t.safetensors"))
    data = (tmp_path / "t.safetensors").read_bytes()
    for name, want in tensors.items():
        got = local_module.tensor_in(data, name)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        assert got.base is not None and not got.flags.writeable  # over the bytes, not a copy


def test_a_table_whose_header_does_not_account_for_its_bytes_is_refused(tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    save_file({"embeddings": np.ones((4, 8), dtype=np.float16)}, str(tmp_path / "t.safetensors"))
    data = (tmp_path / "t.safetensors").read_bytes()
    header_end = 8 + int.from_bytes(data[:8], "little")
    header = json.loads(data[8:header_end])

    def with_header(changed: dict[str, object]) -> bytes:
        text = json.dumps(changed).encode()
        return len(text).to_bytes(8, "little") + text + data[header_end:]

    cases = {
        "shorter than a safetensors header": data[:5],
        "runs past the file": (10**9).to_bytes(8, "little") + data[8:],
        "no tensor 'embeddings'": with_header({"other": header["embeddings"]}),
        "not float16 or float32": with_header({"embeddings": {**header["embeddings"], "dtype": "I64"}}),
        "do not match its shape": with_header({"embeddings": {**header["embeddings"], "shape": [4, 9]}}),
        "has no place": with_header({"embeddings": {**header["embeddings"], "data_offsets": [0]}}),
    }
    for message, broken in cases.items():
        with pytest.raises(ValueError, match=message):
            local_module.tensor_in(broken, "embeddings")
    past_end = dict(header["embeddings"], data_offsets=[8, 8 + 64])
    with pytest.raises(ValueError, match="do not match its shape"):
        local_module.tensor_in(with_header({"embeddings": past_end}), "embeddings")
    # Through the model: the one-sentence error of a model that cannot be read.
    folder = tmp_path / "model"
    shutil.copytree(MODELS_DIR / DEFAULT_MODEL, folder)
    (folder / local_module.CHECKSUMS).unlink()  # a model made by hand: its config is trusted
    config = json.loads((folder / "config.json").read_text())
    del config["sha256"]
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "model.safetensors").write_bytes(data[:5])
    with pytest.raises(EmbeddingError, match="unreadable local embedding model .*shorter than a safetensors header"):
        LocalEmbedder(folder)


def test_a_model_whose_config_disagrees_with_its_table_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "resized"
    shutil.copytree(MODELS_DIR / DEFAULT_MODEL, folder)
    (folder / local_module.CHECKSUMS).unlink()  # a model made by hand: its config is trusted
    config = json.loads((folder / "config.json").read_text())
    config["vocab_size"] += 7
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(EmbeddingError, match=f"config says {config['vocab_size']} tokens, the table has"):
        LocalEmbedder(folder)


def test_a_model_is_loaded_once_per_process_until_its_files_change(tmp_path: Path) -> None:
    folder = tmp_path / "copy"
    shutil.copytree(MODELS_DIR / DEFAULT_MODEL, folder)
    first = make_embedder("local", model=folder)
    assert make_embedder("local", model=str(folder)) is first
    assert make_embedder("local", model=folder, batch_size=7) is not first  # other options
    # Rewritten in place (the same bytes, a new mtime): read again, not served from memory.
    table = folder / "model.safetensors"
    data = table.read_bytes()
    os.utime(table, ns=(table.stat().st_atime_ns, table.stat().st_mtime_ns + 1_000_000))
    again = make_embedder("local", model=folder)
    assert again is not first
    np.testing.assert_array_equal(again.embed_query(RETRY), first.embed_query(RETRY))
    # Damaged after loading: the damage is found, the loaded model is not handed out.
    table.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(EmbeddingError, match="damaged local embedding model"):
        make_embedder("local", model=folder)


def test_shipped_model_files() -> None:
    assert DEFAULT_MODEL in available_models()
    folder = MODELS_DIR / DEFAULT_MODEL
    config = json.loads((folder / "config.json").read_text())
    for name, digest in config["sha256"].items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name
    assert "Apache License" in (folder / "LICENSE").read_text()
    notice = (folder / "NOTICE").read_text()
    assert "all-MiniLM-L6-v2" in notice and "Apache License" in notice
    size = sum(p.stat().st_size for p in folder.iterdir())
    assert size < 40_000_000


def test_the_stored_half_float_table_is_summed_as_it_is_and_as_its_widening(model: LocalEmbedder) -> None:
    assert model._table.dtype == np.float16  # loading copies nothing into float32
    texts = [RETRY, TRANSPOSE, CSS, "", "a\n\nb"]
    compiled = model._compiled
    assert compiled is not None
    halves, counts = compiled.pooled_sums(texts, model._table, model._skip_ids)
    singles, same_counts = compiled.pooled_sums(texts, model._float_table, model._skip_ids)
    np.testing.assert_array_equal(halves.view(np.uint32), singles.view(np.uint32))
    np.testing.assert_array_equal(counts, same_counts)
    with pytest.raises(ValueError, match="float32 or float16"):
        compiled.pooled_sums(texts, model._table.astype(np.float64), model._skip_ids)
