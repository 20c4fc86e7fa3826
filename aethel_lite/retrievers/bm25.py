"""Okapi BM25 computed by bm25s, with save/load (``.npy`` + JSON, never pickle)."""

from __future__ import annotations

import hashlib
import json
import os
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..caching.memo import TextMemo, is_shared
from ..data.schema import passage_text
from ..errors import DataError, DataNotFoundError, ParameterError
from ..imports import import_without
from ..io import read_json_shaped, read_npy, write_json
from .base import Retriever, params_json

#: the folder :meth:`BM25Retriever.save` writes inside the folder it is given
FOLDER = "bm25"
#: the shapes of the JSON files a saved index holds (:func:`~aethel_lite.io.read_json_shaped`)
_META_SHAPE = {"format": int, "pids": [str], "doc_ids": [str], "config": {str: object}}
_BM25S_SHAPES = {
    "vocab.index.json": {str: int},
    "params.index.json": {"k1": float, "b": float, "method": str, "num_docs": int},
}
#: bm25s's score arrays (``index.scores``), each in its own ``.npy`` file
_ARRAYS = {name: f"{name}.csc.index.npy" for name in ("data", "indices", "indptr")}
_TOKENS = TextMemo("BM25 tokens", 60_000)  # see caching.memo.shared
_FITTED: OrderedDict = (
    OrderedDict()
)  # digest of configuration and texts -> bm25s index (the last two); see memo
_FITTED_MAX = 2
_BM25_METHODS = ("robertson", "lucene", "atire", "bm25l", "bm25+")


def _bm25s():
    """bm25s, imported without numba: bm25s imports numba (about 0.3 s) only for its numba backend,
    which is never selected here (scores come from its numpy backend; see :mod:`aethel_lite.imports`)."""
    return import_without("bm25s", absent=("numba",))


class BM25Retriever(Retriever):
    r"""Okapi BM25 over the fitted corpus, computed by bm25s (Lù 2024).

    .. math::

        \mathrm{score}(q, d) = \sum_{t \in q} \mathrm{idf}(t)\,
            \frac{f_{t,d}}{f_{t,d} + k_1 \left(1 - b + b\,|d| / \mathrm{avgdl}\right)}

    with the variant's idf (Kamphuis et al. 2020); ``method="lucene"`` (default) uses the never negative
    :math:`\mathrm{idf}(t) = \ln\!\left(1 + \frac{N - n_t + 0.5}{n_t + 0.5}\right)`. bm25s drops the textbook
    factor :math:`(k_1 + 1)` for robertson/lucene (rankings unaffected). Repeated query terms count repeatedly.

    Parameters
    ----------
    k1, b : float
        Term-frequency saturation and length normalisation.
    method : {"lucene", "robertson", "atire", "bm25l", "bm25+"}
        bm25s scoring variant; ``"robertson"`` ranks exactly as ``rank_bm25.BM25Okapi`` unless a query term occurs
        in more than half the passages (bm25s then clips the idf to 0, rank_bm25 uses ``epsilon`` × the mean idf).
    stopwords : str, list or None
        Passed to ``bm25s.tokenize`` (``"en"`` = its English list).
    stemmer : callable or None
        Word-list stemmer passed to ``bm25s.tokenize`` (e.g. PyStemmer's ``stemWords``).
    progress : bool

    Notes
    -----
    A pool member scores the same in the open and closed settings (statistics of all fitted passages).
    Tokens: ``bm25s.tokenize`` (scikit-learn pattern ``\b\w\w+\b``, lower-cased). Query tokens not in the
    corpus vocabulary are dropped; a query left with no token scores 0 everywhere (ranking: corpus order).

    References
    ----------
    Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond", 2009.
    Kamphuis, de Vries, Boytsov & Lin, "Which BM25 Do You Mean?", ECIR 2020.
    Lù, "BM25S: Orders of magnitude faster lexical search via eager sparse scoring", 2024.
    """

    name = "bm25"

    def __init__(
        self,
        k1: float = 1.5,
        b: float = 0.75,
        method: str = "lucene",
        stopwords: Any = "en",
        stemmer: Any = None,
        progress: bool = False,
    ):
        self.k1 = k1
        self.b = b
        self.method = method
        self.stopwords = stopwords
        self.stemmer = stemmer
        self.progress = progress

    def parts(self) -> list[str]:
        """The index parts ``save`` writes (file groups an index shares between methods: :mod:`aethel_lite.search.index`)."""
        return ["bm25"]

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        """Token lists as indexed (lower-cased, stop words removed, optionally stemmed)."""
        bm25s = _bm25s()
        texts = list(texts)
        if not texts:
            return []
        out = bm25s.tokenize(
            texts,
            lower=True,
            stopwords=self.stopwords,
            stemmer=self.stemmer,
            return_ids=False,
            show_progress=False,
        )
        return [list(t) for t in out]

    def _tokens(self, texts: Sequence[str]) -> list:
        """:meth:`tokenize`, through the process-wide memo when :func:`~aethel_lite.caching.memo.shared` (and no stemmer object)."""
        if not is_shared() or self.stemmer is not None:
            return self.tokenize(texts)
        settings = json.dumps(params_json(self)["stopwords"])
        return _TOKENS.map(settings, texts, lambda todo: [tuple(t) for t in self.tokenize(todo)])

    def _fit(self, passages: list) -> None:
        if not isinstance(self.k1, (int, float)) or not self.k1 >= 0:
            raise ParameterError(f"k1 must be a number >= 0, got {self.k1!r}")
        if not isinstance(self.b, (int, float)) or not 0 <= self.b <= 1:
            raise ParameterError(f"b must be in [0, 1], got {self.b!r}")
        if self.method not in _BM25_METHODS:
            raise ParameterError(f"method must be one of {', '.join(_BM25_METHODS)}, got {self.method!r}")
        texts = [passage_text(p) for p in passages]
        if not is_shared() or self.stemmer is not None:
            self.index_ = self._index(texts)
            return
        # keyed by the configuration and the texts in order: BM25 and the graph methods' inner BM25 share it
        digest = hashlib.sha256(json.dumps(params_json(self), sort_keys=True).encode("utf-8"))
        for t in texts:
            digest.update(t.encode("utf-8"))
            digest.update(b"\0")
        key = digest.hexdigest()
        if key not in _FITTED:
            _FITTED[key] = self._index(texts)
            while len(_FITTED) > _FITTED_MAX:
                _FITTED.popitem(last=False)
        _FITTED.move_to_end(key)
        self.index_ = _FITTED[key]

    def _index(self, texts: list[str]):
        """The bm25s index of ``texts``, its vocabulary in first-appearance order (bm25s would build it
        from a set: hash-order dependent)."""
        bm25s = _bm25s()
        tokens = self._tokens(texts)
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(t, len(vocab)) for t in doc] for doc in tokens]
        if not vocab:
            raise DataError("BM25Retriever.fit: no passage has an indexable token (all empty or stop words)")
        index = bm25s.BM25(k1=float(self.k1), b=float(self.b), method=self.method, dtype="float64")
        index.index((ids, vocab), show_progress=self.progress)
        return index

    def get_scores(self, text: str) -> np.ndarray:
        """BM25 score of every fitted passage for one query text, shape ``(n_passages,)``."""
        self._check_fitted()
        vocab = self.index_.vocab_dict
        ids = [vocab[t] for t in self._tokens([text])[0] if t and t in vocab]
        return np.asarray(self.index_.get_scores_from_ids(ids), dtype=np.float64)

    def _score_queries(self, queries, candidates):
        from tqdm.auto import tqdm

        for q in tqdm(queries, desc="BM25 search", disable=not self.progress, leave=False):
            yield self.get_scores(q.text)

    def save(self, folder: str | os.PathLike) -> Path:
        """Save the fitted index into ``folder/bm25``: bm25s's own files (no pickle) plus ``aethel_bm25.json`` (pids
        and settings), written into a temporary sibling folder which then replaces it; returns that folder."""
        import shutil
        import tempfile

        self._check_fitted()
        directory = Path(folder) / FOLDER
        directory.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(
            tmp, 0o777 & ~umask
        )  # mkdtemp makes it 0700: the folder keeps the permissions of a plain mkdir
        try:
            self.index_.save(str(tmp), corpus=None, allow_pickle=False, show_progress=False)
            (tmp / "corpus.jsonl").unlink(missing_ok=True)
            write_json(
                tmp / "aethel_bm25.json",
                {"config": params_json(self), "pids": self.pids_, "doc_ids": self.doc_ids_, "format": 1},
            )
            old = None
            if directory.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{directory.name}.old.", dir=directory.parent))
                os.replace(directory, old / "index")
            os.replace(tmp, directory)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return directory

    @classmethod
    def load(cls, folder: str | os.PathLike, **params: Any) -> BM25Retriever:
        """The index :meth:`save` wrote into ``folder`` (no pickle), with its saved settings; ``params`` may give
        ``stemmer`` (the same one, if one was used) and ``progress``, and any other setting only as saved."""
        bm25s = _bm25s()
        directory = Path(folder) / FOLDER
        stemmer, progress = params.pop("stemmer", None), params.pop("progress", False)
        meta_path = directory / "aethel_bm25.json"
        if not meta_path.exists():
            raise DataNotFoundError(f"{meta_path}: not a saved BM25Retriever index (file not found)")
        meta = read_json_shaped(meta_path, _META_SHAPE, "BM25 index settings")
        if meta["format"] != 1:
            raise DataError(f"{meta_path}: unsupported BM25 index format {meta['format']!r}")
        for (
            name,
            shape,
        ) in _BM25S_SHAPES.items():  # what bm25s reads, checked first: no exception of its own reaches here
            read_json_shaped(directory / name, shape, "BM25 index")
        cfg = meta["config"]
        if cfg.get("stemmer") is not None and stemmer is None:
            raise ParameterError(
                f"{directory}: the index was built with stemmer {cfg['stemmer']!r}; pass stemmer= to load()"
            )
        self = cls(
            k1=cfg.get("k1", 1.5),
            b=cfg.get("b", 0.75),
            method=cfg.get("method", "lucene"),
            stopwords=cfg.get("stopwords", "en"),
            stemmer=stemmer,
            progress=progress,
        )
        saved = params_json(self)
        differ = [k for k, v in params.items() if k in saved and params_json(cls(**{k: v}))[k] != saved[k]]
        if differ:
            raise ParameterError(f"{meta_path}: the index was built with {differ[0]}={saved[differ[0]]!r}")
        for file in _ARRAYS.values():  # header and size, nothing read: a fault is named by its file
            read_npy(directory / file, "BM25 index", mmap_mode="r")
        try:
            index = bm25s.BM25.load(str(directory), allow_pickle=False, show_progress=False)
        except (OSError, ValueError) as exc:
            raise DataError(f"{directory}: cannot load the bm25s index ({exc})") from exc
        fault = _scores_fault(index.scores, index.vocab_dict)
        if fault:
            raise DataError(f"{directory / fault[0]}: unreadable BM25 index ({fault[1]})")
        pids = [str(p) for p in meta.get("pids", [])]
        if index.scores["num_docs"] != len(pids):
            raise DataError(
                f"{meta_path}: {len(pids)} pids but the index has {index.scores['num_docs']} documents"
            )
        self.index_ = index
        self.pids_ = pids
        self.pid_index_ = {p: i for i, p in enumerate(pids)}
        self.doc_ids_ = list(meta["doc_ids"])
        if len(self.doc_ids_) != len(pids):
            raise DataError(f"{meta_path}: {len(pids)} pids but {len(self.doc_ids_)} doc_ids")
        return self


def _scores_fault(scores: dict, vocab: dict) -> tuple[str, str] | None:
    """``(file, reason)`` when bm25s's loaded CSC arrays do not fit together, the passages (``num_docs``) and the
    vocabulary (a token's scores: ``data[indptr[id]:indptr[id + 1]]``, its passages: ``indices`` there), else None."""
    data, indices, indptr, n = (scores[k] for k in (*_ARRAYS, "num_docs"))
    files = {**_ARRAYS, "vocab": "vocab.index.json"}
    for name, array, kinds in (("data", data, "f"), ("indices", indices, "iu"), ("indptr", indptr, "iu")):
        if array.ndim != 1 or array.dtype.kind not in kinds:
            return files[name], f"an array of shape {array.shape} and type {array.dtype}"
    if not np.isfinite(data).all():
        return files["data"], "scores that are not finite"
    if len(data) != len(indices):
        return files["data"], f"{len(data)} scores, {len(indices)} passage numbers in {files['indices']}"
    if indices.size and not (0 <= indices.min() and indices.max() < n):
        return files["indices"], f"passage numbers outside 0..{n - 1}"
    ids = [i for token, i in vocab.items() if token]  # bm25s's empty token is never looked up
    if ids and min(ids) < 0:
        return files["vocab"], f"a negative token id {min(ids)}"
    if len(indptr) < max(ids, default=-1) + 2:
        return files["indptr"], f"{len(indptr)} offsets for token ids up to {max(ids)}"
    if indptr[0] != 0 or (np.diff(indptr) < 0).any() or indptr[-1] != len(data):
        return files["indptr"], f"offsets that do not rise from 0 to the {len(data)} scores"
    return None
