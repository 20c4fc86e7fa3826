"""Corpus transformations for open-corpus and corpus-size scaling experiments; the input is never modified."""

from __future__ import annotations

from ..errors import ParameterError
from .schema import Dataset, Query

__all__ = ["open_corpus", "sample_corpus"]


def open_corpus(dataset: Dataset) -> Dataset:
    r"""The open-corpus version of a data set: no pools, exact duplicate passages merged.

    Two passages are duplicates when their ``(title, text)`` are equal (MuSiQue and 2Wiki repeat
    a paragraph in the pools of several questions under a different pid each). Every duplicate
    is merged into the first passage of its group in corpus order, and each query's gold is
    remapped through

    .. math:: \mathrm{gold}'(q) = \{\, f(p) : p \in \mathrm{gold}(q) \,\},\qquad
              f(p) = \text{the first pid with } p\text{'s (title, text)},

    so a question whose gold paragraph appears under another question's pid is scored on that
    one passage.

    Parameters
    ----------
    dataset : Dataset
        Any data set (pools, if present, are dropped).

    Returns
    -------
    Dataset
        Same name and queries (``pool=None``, gold remapped), the deduplicated passages in corpus
        order, and ``meta`` = the input's plus ``setting="open-corpus"`` and
        ``duplicates_merged`` (number of passages removed).
    """
    first: dict[tuple[str, str], str] = {}
    rename: dict[str, str] = {}
    passages = []
    for p in dataset.passages:
        keep = first.setdefault((p.title, p.text), p.pid)
        rename[p.pid] = keep
        if keep == p.pid:
            passages.append(p)
    queries = [
        Query(q.qid, q.text, frozenset(rename.get(g, g) for g in q.gold), q.hops, None, dict(q.meta))
        for q in dataset.queries
    ]
    meta = {
        **dataset.meta,
        "setting": "open-corpus",
        "duplicates_merged": len(dataset.passages) - len(passages),
    }
    return Dataset(dataset.name, passages, queries, meta).validate()


def _check_int(value, name: str, minimum: int) -> int:
    """``value`` as an int ≥ ``minimum``, else a :class:`ParameterError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        kind = "positive" if minimum == 1 else "non-negative"
        raise ParameterError(f"{name} must be a {kind} integer, got {value!r}")
    return value


def sample_corpus(dataset: Dataset, size: int, seed: int = 0) -> Dataset:
    r"""A corpus of exactly ``size`` passages that keeps every gold passage of the queries.

    With :math:`G = \bigcup_q \mathrm{gold}(q)` and :math:`D` the other passages (corpus order), the
    sample is :math:`G` plus the first :math:`\mathrm{size} - |G|` entries of a random permutation of
    :math:`D` drawn by ``numpy.random.default_rng(seed)``; kept passages stay in corpus order. One seed
    gives nested samples of growing size (BEIR's subsampling that keeps the relevant documents).

    Parameters
    ----------
    dataset : Dataset
        An open-corpus data set (:func:`open_corpus`); closed pools are refused, as after sampling
        they would name passages that are gone.
    size : int
        :math:`|G| \le \mathrm{size} \le |\text{corpus}|`.
    seed : int
        Non-negative.

    Returns
    -------
    Dataset
        The same queries over the sampled passages, ``meta["sample"] = {"size", "seed", "n_gold",
        "n_corpus"}`` (``n_corpus`` = size of the corpus sampled from).

    Raises
    ------
    ParameterError
        ``size`` or ``seed`` not an integer in range (the message gives corpus and gold sizes), or a closed pool.
    """
    size = _check_int(size, "size", 1)
    seed = _check_int(seed, "seed", 0)
    pooled = next((q.qid for q in dataset.queries if q.pool is not None), None)
    if pooled is not None:
        raise ParameterError(
            f"sample_corpus: query {pooled!r} of {dataset.name!r} has a closed pool, which sampling "
            "would break; sample the open corpus instead (open_corpus(dataset))"
        )
    gold = set().union(*(q.gold for q in dataset.queries)) if dataset.queries else set()
    n_corpus = len(dataset.passages)
    if size > n_corpus:
        raise ParameterError(
            f"size={size} is larger than the corpus of {dataset.name!r} ({n_corpus} passages)"
        )
    if size < len(gold):
        raise ParameterError(
            f"size={size} is smaller than the {len(gold)} gold passages of {dataset.name!r}, "
            "which a sample must keep"
        )
    import numpy as np

    others = [i for i, p in enumerate(dataset.passages) if p.pid not in gold]
    order = np.random.default_rng(seed).permutation(len(others))
    chosen = {others[j] for j in order[: size - len(gold)].tolist()}
    passages = [p for i, p in enumerate(dataset.passages) if p.pid in gold or i in chosen]
    meta = {**dataset.meta, "sample": {"size": size, "seed": seed, "n_gold": len(gold), "n_corpus": n_corpus}}
    return Dataset(dataset.name, passages, list(dataset.queries), meta).validate()
