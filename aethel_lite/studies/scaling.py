r"""The scaling study: retrieval quality and cost as the corpus grows (the paper's scaling plot).

A corpus of each size is drawn with :func:`aethel_lite.data.sampling.sample_corpus` (every gold
passage kept, several seeds per size), so at size :math:`N` a question's gold passages compete with
:math:`N - |G|` others; :func:`crossovers` computes the paper's two claims from the curves.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from ..caching.resultcache import cached, dataset_digest
from ..data.sampling import sample_corpus
from ..errors import ParameterError
from ..evaluation.metrics import mean
from ..evaluation.runner import MethodOutcome, fuse, run_methods, score_runs
from ..evaluation.stats import bootstrap_ci
from ..retrievers.registry import FUSIONS

__all__ = [
    "DEFAULT_SIZES",
    "resolve_sizes",
    "scaling_run",
    "crossovers",
    "SCALING_METRICS",
    "check_sizes",
    "crossover_rows",
    "scaling_takeaways",
]

#: The paper's sizes (100 → 4,123 chunks) plus the full corpus ("full").
DEFAULT_SIZES: tuple = (100, 250, 500, 1000, 2000, 4123, "full")
SCALING_METRICS = ("HR@5", "MRR")


def resolve_sizes(sizes: Sequence, n_passages: int, n_gold: int) -> list[int]:
    """Numeric corpus sizes for a corpus of ``n_passages``: ``"full"`` → ``n_passages``; sizes at or
    above the corpus (or below the gold set) are dropped, since they cannot be sampled; sorted, unique."""
    out = set()
    for s in sizes:
        if s == "full":
            out.add(n_passages)
            continue
        if isinstance(s, bool) or not isinstance(s, int) or s < 1:
            raise ParameterError(f"sizes: expected positive integers or 'full', got {s!r}")
        if n_gold <= s < n_passages:
            out.add(s)
    return sorted(out)


def _peak_fit(fit: Callable[[], Any], measure_memory: bool) -> tuple[Any, float | None]:
    """Run ``fit()``; return its value and peak MiB traced by tracemalloc (Python and numpy allocations)."""
    if measure_memory:
        tracemalloc.start()
    try:
        value = fit()
    finally:
        peak = tracemalloc.get_traced_memory()[1] / 2**20 if measure_memory else None
        if measure_memory:
            tracemalloc.stop()
    return value, peak


def _scaling_job(
    sample,
    methods: Sequence[str],
    bases: Sequence[str],
    *,
    first: bool,
    traced: bool,
    graph: Mapping | None,
) -> dict:
    """Fit, run and score every method on one corpus sample (timing only for the ``first`` seed)."""
    outcomes: dict[str, MethodOutcome] = {}
    peaks: dict[str, float | None] = {}
    for base in bases:  # one fit per base method, traced alone
        out, peaks[base] = _peak_fit(
            lambda: run_methods(
                sample,
                [base],  # noqa: B023
                setting="open",
                progress=False,
                log=None,
                graph=graph,
                memo=not first,
            ),
            traced,
        )
        outcomes[base] = out[base]
    for name in methods:
        if name in FUSIONS:
            outcomes[name] = fuse(name, outcomes)
            peaks[name] = max((peaks[b] for b in FUSIONS[name] if peaks[b] is not None), default=None)
    block = score_runs({m: outcomes[m] for m in methods}, sample.queries, k=5)
    timing = (
        {
            name: {
                "fit_seconds": round(outcomes[name].seconds, 3),
                "peak_mib": None if peaks[name] is None else round(peaks[name], 1),
            }
            for name in methods
        }
        if first
        else {}
    )
    return {
        "per_query_metrics": {name: block[name]["per_query_metrics"] for name in methods},
        "timing": timing,
    }


def scaling_run(
    dataset,
    methods: Sequence[str],
    *,
    sizes: Sequence = DEFAULT_SIZES,
    seeds: Sequence[int] = (0, 1, 2),
    metrics: Sequence[str] = SCALING_METRICS,
    n_resamples: int = 2000,
    measure_memory: bool = True,
    progress: bool = True,
    graph: Mapping | None = None,
) -> dict:
    """Fit and score ``methods`` on samples of ``dataset`` of every size, for every seed.

    Parameters
    ----------
    dataset : Dataset
        An open-corpus data set (pools None).
    methods : names from :data:`aethel_lite.retrievers.registry.METHODS` / ``FUSIONS``.
    sizes : corpus sizes; ``"full"`` = the whole corpus (one sample: seeds do not change it).
    seeds : one sample per seed and size.
    n_resamples : bootstrap resamples for the CI over questions.
    measure_memory : trace the peak memory of fitting, for the first seed of each size only: the one
        whose fit time is reported, run without the process-wide memos (:mod:`aethel_lite.caching.memo`).

    Returns
    -------
    dict
        ``{"sizes": [...], "n_gold": int, "n_queries": int, "curves": {method: {metric: [{"size", "mean",
        "seed_min", "seed_max", "ci_low", "ci_high", "n_seeds"}, ...]}}, "timing": {method: [{"size",
        "fit_seconds", "peak_mib"}]}}``. Everything outside ``timing`` is deterministic for fixed seeds;
        each (size, seed) job is cached on disk, with the fit times measured when it was computed.
    """
    from tqdm.auto import tqdm

    gold = set().union(*(q.gold for q in dataset.queries))
    n = len(dataset.passages)
    grid = resolve_sizes(sizes, n, len(gold))
    if not grid:
        raise ParameterError(
            f"sizes: none of {list(sizes)} fits a corpus of {n} passages with {len(gold)} gold passages"
        )
    per_query: dict[tuple[str, int], list[dict]] = {}
    timing: dict[str, list[dict]] = {m: [] for m in methods}
    bases = list(dict.fromkeys(b for m in methods for b in FUSIONS.get(m, (m,))))
    jobs = [(size, seed) for size in grid for seed in (seeds if size < n else seeds[:1])]
    for size, seed in tqdm(jobs, desc=f"scaling {dataset.name}", disable=not progress):
        sample = sample_corpus(dataset, size, seed) if size < n else dataset
        first = seed == seeds[0]
        traced = bool(measure_memory and first)
        job = cached(
            "scaling-job",
            {
                "dataset": dataset_digest(sample),
                "methods": list(methods),
                "timed": first,
                "traced": traced,
                "graph": graph,
            },
            partial(
                _scaling_job,
                sample,
                methods,
                bases,
                first=first,
                traced=traced,
                graph=graph,
            ),
        )
        for name in methods:
            per_query.setdefault((name, size), []).append(job["per_query_metrics"][name])
            if first:
                timing[name].append({"size": size, **job["timing"][name]})
    qids = [q.qid for q in dataset.queries]

    def point(name: str, m: str, size: int) -> dict:
        runs = per_query[(name, size)]
        seed_means = [mean([r[q][m] for q in qids]) for r in runs]
        ci = bootstrap_ci([mean([r[q][m] for r in runs]) for q in qids], n_resamples=n_resamples, seed=0)
        return {
            "size": size,
            "mean": round(float(ci.mean), 6),
            "seed_min": round(min(seed_means), 6),
            "seed_max": round(max(seed_means), 6),
            "ci_low": round(float(ci.ci_low), 6),
            "ci_high": round(float(ci.ci_high), 6),
            "n_seeds": len(runs),
        }

    curves = {name: {m: [point(name, m, size) for size in grid] for m in metrics} for name in methods}
    return {
        "dataset": dataset.name,
        "n_passages": n,
        "n_gold": len(gold),
        "n_queries": len(qids),
        "sizes": grid,
        "seeds": list(seeds),
        "curves": curves,
        "timing": timing,
    }


def crossovers(
    curves: Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]], a: str, b: str, metric: str = "HR@5"
) -> dict:
    """Where method ``a``'s curve crosses ``b``'s.

    Returns ``{"a", "b", "metric", "passes_from": the smallest size s such that mean_a > mean_b at s
    and at every larger size (None if never), "ever_above": whether mean_a > mean_b at any size,
    "sizes_above": [sizes where a > b]}``. Means are compared as stored (rounded to 6 decimals), so
    a tie is not a pass.
    """
    missing = [m for m in (a, b) if m not in curves]
    if missing:
        raise ParameterError(f"crossovers: method(s) {missing} not in the scaling curves")
    pa = {p["size"]: p["mean"] for p in curves[a][metric]}
    pb = {p["size"]: p["mean"] for p in curves[b][metric]}
    sizes = sorted(set(pa) & set(pb))
    above = [s for s in sizes if pa[s] > pb[s]]
    passes_from = next((s for i, s in enumerate(sizes) if all(pa[t] > pb[t] for t in sizes[i:])), None)
    return {
        "a": a,
        "b": b,
        "metric": metric,
        "passes_from": passes_from,
        "ever_above": bool(above),
        "sizes_above": above,
    }


def check_sizes(sizes: Sequence, seeds: Sequence[int]) -> None:
    """Fail fast, naming the parameter, on sizes that are not positive ints or ``"full"``, or bad seeds."""
    if isinstance(sizes, (str, int)) or not sizes:
        raise ParameterError(
            f"sizes: expected a non-empty list of positive integers or 'full', got {sizes!r}"
        )
    for s in sizes:
        if s != "full" and (isinstance(s, bool) or not isinstance(s, int) or s < 1):
            raise ParameterError(f"sizes: expected positive integers or 'full', got {s!r}")
    if (
        isinstance(seeds, (str, int))
        or not seeds
        or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds)
    ):
        raise ParameterError(f"seeds: expected a non-empty list of integers, got {seeds!r}")


def _dense_names(curves: Mapping[str, Any]) -> list[str]:
    return [m for m in ("dense", "dense-max") if m in curves]


def crossover_rows(
    runs: Mapping[str, Mapping[str, Any]],
    paper: Mapping[str, Mapping[str, Any]],
    synthetic: Sequence[str] = ("synthetic",),
) -> list[dict]:
    """The paper's crossing claims against ours, one row per corpus and claim.

    ``paper`` is :data:`aethel_lite.studies.paper.PAPER_CROSSOVERS`. The graph is compared with every dense
    variant that was run (``dense``, ``dense-max``) and with BM25. A corpus named in ``synthetic``
    keeps its sizes but gets no ``ours`` beside the paper's value (``note`` says why): a synthetic
    crossing is not the paper's.
    """
    rows = []
    for name, run in runs.items():
        curves = run["curves"]
        graph = paper["graph_passes_dense_from"]["ours"][0]
        if graph not in curves:
            continue
        for dense in _dense_names(curves):
            c = crossovers(curves, graph, dense, paper["graph_passes_dense_from"]["metric"])
            rows.append(
                {
                    "corpus": name,
                    "claim": f"{graph} passes {dense} from size …",
                    "paper": paper["graph_passes_dense_from"]["value"],
                    "ours": c["passes_from"] if c["passes_from"] is not None else "never",
                    "sizes where graph > it": c["sizes_above"],
                }
            )
        if "bm25" in curves:
            c = crossovers(curves, graph, "bm25", paper["graph_passes_bm25"]["metric"])
            rows.append(
                {
                    "corpus": name,
                    "claim": f"{graph} ever above bm25",
                    "paper": "no" if not paper["graph_passes_bm25"]["value"] else "yes",
                    "ours": "yes" if c["ever_above"] else "no",
                    "sizes where graph > it": c["sizes_above"],
                }
            )
    for row in rows:
        if row["corpus"] in synthetic:
            row.update(ours="", note="synthetic corpus: not comparable with the paper")
    return rows


def scaling_takeaways(
    saved: Mapping[str, Any], paper: Mapping[str, Mapping[str, Any]], metric: str = "HR@5"
) -> str:
    """Markdown bullets stating, from a saved scaling result, how each method moved from the smallest
    to the largest corpus and where the graph crossed dense and BM25 (every number read from ``saved``)."""
    lines = []
    for name, run in saved["runs"].items():
        curves = run["curves"]
        moves = [
            f"`{m}` {curves[m][metric][0]['mean']:.2f} → {curves[m][metric][-1]['mean']:.2f}"
            for m in ("bm25", *_dense_names(curves), "aethel-ner3", "aethel-reg")
            if m in curves
        ]
        first, last = run["sizes"][0], run["sizes"][-1]
        text = f"* **{name}** ({first:,} → {last:,} passages, {metric}): " + ", ".join(moves) + "."
        rows = crossover_rows({name: run}, paper, synthetic=())
        synthetic = name == "synthetic"  # its crossings are stated, never set beside the paper's
        for r in rows:
            if "passes" in r["claim"]:
                text += (
                    f" The graph passes `{r['claim'].split()[2]}` "
                    + (
                        f"from {r['ours']:,} passages on"
                        if r["ours"] != "never"
                        else "at no size from which it stays ahead"
                    )
                    + ("." if synthetic else f" (paper: from {r['paper']}).")
                )
            else:
                text += f" The graph is {'above' if r['ours'] == 'yes' else 'never above'} BM25" + (
                    "." if synthetic else " (paper: never)."
                )
        lines.append(text)
    if saved.get("synthetic_only"):
        lines.insert(
            0,
            "*These curves come from the synthetic corpus (no real data was found); they are not the paper's experiment.*",
        )
    return "\n".join(lines)
