r"""The scaling study: retrieval quality and cost as the corpus grows (the paper's scaling plot).

A corpus of each size is drawn with :func:`aethel_lite.data.sampling.sample_corpus` (every gold
passage kept, several seeds per size), so at size :math:`N` a question's gold passages compete with
:math:`N - |G|` others; :func:`crossovers` computes the paper's two claims from the curves.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ..caching.resultcache import cached, dataset_digest
from ..caching.versions import versions
from ..data.sampling import sample_corpus
from ..errors import DataNotFoundError, ParameterError
from ..evaluation.cluster import cluster_options, precompute_methods
from ..evaluation.metrics import mean
from ..evaluation.runner import MethodOutcome, fuse, run_methods, score_runs
from ..evaluation.stats import bootstrap_ci, format_estimate
from ..retrievers.registry import FUSIONS
from .open_corpus import QUICK, OpenCorpora, check_parameters, load_open
from .paper import PAPER_CROSSOVERS, paper_rows
from .record import as_record, save_record

__all__ = [
    "DEFAULT_SIZES",
    "resolve_sizes",
    "scaling_run",
    "crossovers",
    "SCALING_METRICS",
    "check_sizes",
    "crossover_rows",
    "scaling_takeaways",
    "QUICK_GRID",
    "EXTENDED_SIZES",
    "scaling_grid",
    "load_scaling",
    "ScalingCorpora",
    "scaling_study",
    "ScalingStudy",
    "scaling_verdict",
    "scaling_figure",
    "cost_table",
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


# --------------------------------------------------------------------------------------- the chapter
#: ``quick`` mode (CI): these sizes and the first two seeds, on :data:`~aethel_lite.studies.open_corpus.QUICK`'s
#: questions and sample.
QUICK_GRID: dict = {"sizes": [60, 80, "full"], "n_seeds": 2}
#: ``extended`` mode adds these sizes (FinanceBench with every filing, not only those asked about).
EXTENDED_SIZES: tuple[int, ...] = (10206, 20000)


def scaling_grid(
    sizes: Sequence, seeds: Sequence[int], *, quick: bool = False, extended: bool = False
) -> tuple[list, list]:
    """The sizes and seeds a scaling run uses, checked (:func:`check_sizes`): ``quick`` replaces them by
    :data:`QUICK_GRID`'s, ``extended`` adds :data:`EXTENDED_SIZES` before ``"full"``."""
    check_sizes(sizes, seeds)
    sizes, seeds = list(sizes), list(seeds)
    if quick:
        sizes, seeds = list(QUICK_GRID["sizes"]), seeds[: QUICK_GRID["n_seeds"]]
    if extended:
        sizes = sorted({s for s in sizes if s != "full"} | set(EXTENDED_SIZES)) + ["full"]
    return sizes, seeds


@dataclass
class ScalingCorpora(OpenCorpora):
    """The corpora a scaling chapter asked for (``datasets``), those it loaded and those it could not
    (``missing``: name → why), from :func:`load_scaling`; ``extended``: FinanceBench's larger sizes."""

    extended: bool = False

    def table(self):
        """One row per corpus: passages, questions and gold passages (every sample keeps them)."""
        import pandas as pd

        return pd.DataFrame(
            [
                {
                    "corpus": n,
                    "passages": len(ds.passages),
                    "questions": len(ds.queries),
                    "gold passages (always kept)": len(set().union(*(q.gold for q in ds.queries))),
                }
                for n, ds in self.loaded.items()
            ]
        )


def load_scaling(
    datasets: Sequence[str],
    methods: Sequence[str],
    *,
    extended: bool = False,
    quick: bool = False,
    scheduler: str | None = None,
    workers: int | None = None,
) -> ScalingCorpora:
    """Check the names, then load every corpus of ``datasets`` whole (:func:`load_open`; ``quick``:
    :data:`~aethel_lite.studies.open_corpus.QUICK`'s questions and sample; ``extended``: FinanceBench with
    every filing). Without any real data the synthetic corpus runs instead. With a Dask ``scheduler`` or
    local ``workers``, the entity extraction and encoding of every corpus runs on that cluster first
    (:func:`~aethel_lite.evaluation.cluster.precompute_methods`; the runs find it in the stores)."""
    check_parameters(datasets, methods)
    cluster = cluster_options(scheduler, workers)  # None: everything in-process
    limit, corpus_size = (QUICK["limit"], QUICK["corpus_size"]) if quick else (None, None)
    loaded, missing = {}, {}
    for name in datasets:
        try:
            docs = "all" if (extended and name == "financebench") else "question"
            loaded[name] = load_open(name, limit=limit, corpus_size=corpus_size, docs=docs)
        except DataNotFoundError:  # only when no data folder is configured
            missing[name] = "no real data configured"
    if not loaded:
        loaded["synthetic"] = load_open("synthetic", limit=limit, corpus_size=corpus_size)
    if cluster is not None:
        for ds in loaded.values():
            precompute_methods(ds.passages, methods, progress=False, **cluster)
    return ScalingCorpora(list(datasets), loaded, missing, quick=quick, extended=extended)


def scaling_study(
    corpora: ScalingCorpora,
    methods: Sequence[str],
    *,
    sizes: Sequence = DEFAULT_SIZES,
    seeds: Sequence[int] = (0, 1, 2),
    n_resamples: int = 2000,
    n_process: int = 2,
    progress: bool = True,
) -> ScalingStudy:
    """:func:`scaling_run` on every corpus of ``corpora``, at every size and seed.

    Returns
    -------
    ScalingStudy
        ``result``: ``{"runs", "missing", "synthetic_only", "parameters", "versions"}``
        (``results/scaling.json``, ``scaling_extended.json`` when extended).
    """
    runs = {
        name: scaling_run(
            ds,
            methods,
            sizes=sizes,
            seeds=seeds,
            n_resamples=n_resamples,
            progress=progress,
            graph={"n_process": n_process},
        )
        for name, ds in corpora.loaded.items()
    }
    result = {
        "runs": runs,
        "missing": corpora.missing,
        "synthetic_only": corpora.synthetic_only,
        "parameters": {
            "datasets": corpora.datasets,
            "methods": list(methods),
            "sizes": list(sizes),
            "seeds": list(seeds),
            "extended": corpora.extended,
            "quick": corpora.quick,
            "n_resamples": n_resamples,
        },
        "versions": versions(),
    }
    return ScalingStudy(as_record(result))


@dataclass
class ScalingStudy:
    """The scaling result (``result``, as ``results/scaling.json`` holds it) and what the chapter shows of
    it: pandas DataFrames, matplotlib Figures and Markdown text."""

    result: dict

    def save(self, results_dir: str | Path = "results") -> None:
        """Write ``results_dir/scaling.json`` (``scaling_extended.json`` for an extended run)."""
        name = "scaling_extended" if self.result["parameters"]["extended"] else "scaling"
        save_record(self.result, results_dir, name)

    def figure(self, metric: str = "HR@5"):
        """:func:`scaling_figure` of every corpus, with the paper's points of ``metric`` (none beside
        synthetic curves)."""
        points = [] if self.result["synthetic_only"] else paper_rows("scaling")
        return scaling_figure(
            self.result["runs"], metric, paper_points=[p for p in points if p["metric"] == metric]
        )

    def crossings(self):
        """:func:`crossover_rows` against the paper's claims, as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(crossover_rows(self.result["runs"], PAPER_CROSSOVERS))

    def headline(self) -> tuple[Any, str]:
        """The chapter's answer: the HR@5 figure and :func:`scaling_verdict`."""
        verdict = scaling_verdict(self.result, crossover_rows(self.result["runs"], PAPER_CROSSOVERS))
        return self.figure("HR@5"), verdict

    def cost_table(self, methods: Sequence[str] = ("bm25", "aethel-ner3")):
        """Fit seconds and peak MiB of ``methods`` (those run) side by side, per corpus and size."""
        import pandas as pd

        costs = {
            m: cost_table(self.result["runs"], m).set_index(["corpus", "size"])
            for m in methods
            if m in self.result["parameters"]["methods"]
        }
        wide = pd.concat(costs, axis=1)
        wide.columns = [f"{m}: {c}" for m, c in wide.columns]
        return wide

    def takeaways(self) -> str:
        """:func:`scaling_takeaways` of the result."""
        return scaling_takeaways(self.result, PAPER_CROSSOVERS)


def scaling_verdict(
    saved: Mapping[str, Any], crossings: Sequence[Mapping[str, Any]], metric: str = "HR@5"
) -> str:
    """One paragraph from a scaling result: per corpus, the graph's and the best baseline's ``metric`` at the
    largest size and where the graph passed the others (``crossings``: its :func:`crossover_rows`)."""
    said = []
    for name, run in saved["runs"].items():
        curves = run["curves"]
        graph = next((m for m in ("aethel-ner3", "aethel-reg") if m in curves), None)
        if graph is None:
            continue
        last = {m: c[metric][-1] for m, c in curves.items() if metric in c}
        rival = max(
            (m for m in last if m != graph and not m.startswith("aethel")),
            key=lambda m: last[m]["mean"],
            default=None,
        )
        text = (
            f"On {name} ({run['sizes'][0]:,} to {run['sizes'][-1]:,} passages), at the largest size `{graph}` "
            f"has {metric} {format_estimate(last[graph])}"
        )
        if rival:
            text += f" against `{rival}`'s {format_estimate(last[rival])}"
        parts = []
        for c in (c for c in crossings if c["corpus"] == name):
            other = c["claim"].split()[2] if " passes " in c["claim"] else c["claim"].split()[-1]
            sizes = c["sizes where graph > it"]
            part = (
                f"above `{other}` at {', '.join(f'{x:,}' for x in sizes)} passages"
                if sizes
                else f"never above `{other}`"
            )
            ours = c.get("ours")  # never set for a synthetic corpus
            if " passes " in c["claim"] and ours not in ("", None):
                part += " (at no size for good)" if ours == "never" else f" (for good from {ours:,})"
            parts.append(part)
        said.append(text + ("; the graph is " + "; ".join(parts) if parts else "") + ".")
    verdict = " ".join(said)
    if saved.get("synthetic_only"):
        verdict = (
            "These curves come from the synthetic corpus (no real data was found), not the paper's experiment. "
            + verdict
        )
    return verdict


def scaling_figure(
    runs: Mapping[str, Mapping[str, Any]],
    metric: str = "HR@5",
    methods: Sequence[str] | None = None,
    paper_points: Sequence[Mapping[str, Any]] = (),
    labels: Mapping[str, str] | None = None,
):
    """One panel per corpus: ``metric`` against corpus size (log x), a line per method with its 95%
    CI band (over questions, seeds averaged), and the paper's points as black markers."""
    import matplotlib.pyplot as plt

    names = list(runs)
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.8), sharey=True, squeeze=False)
    for ax, name in zip(axes[0], names):
        curves = runs[name]["curves"]
        for method in [m for m in (methods or curves) if m in curves]:
            pts = curves[method][metric]
            xs = [p["size"] for p in pts]
            (line,) = ax.plot(xs, [p["mean"] for p in pts], marker="o", ms=3, label=method)
            ax.fill_between(
                xs,
                [p["ci_low"] for p in pts],
                [p["ci_high"] for p in pts],
                color=line.get_color(),
                alpha=0.15,
            )
        for i, p in enumerate(paper_points):
            if p["metric"] == metric:
                ax.scatter(
                    [p["size"]],
                    [p["value"]],
                    marker="x",
                    color="black",
                    zorder=5,
                    label="paper (private corpus)" if i == 0 else None,
                )
                ax.annotate(
                    p["paper_method"].split(",")[0],
                    (p["size"], p["value"]),
                    fontsize=7,
                    xytext=(4, 3),
                    textcoords="offset points",
                )
        ax.set_xscale("log")
        ax.set_xlabel("corpus size (passages, log scale)")
        ax.set_title((labels or {}).get(name, name), fontsize=9)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"{metric} (mean, 95% CI band)")
    axes[0][0].set_ylim(0, 1.02)
    handles, names_ = axes[0][-1].get_legend_handles_labels()
    fig.legend(
        handles, names_, loc="lower center", ncol=min(len(names_), 6), fontsize=8, bbox_to_anchor=(0.5, -0.02)
    )
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def cost_table(runs: Mapping[str, Mapping[str, Any]], method: str):
    """Fit seconds and peak traced MiB of one method per corpus size (from a scaling result's ``timing``)."""
    import pandas as pd

    return pd.DataFrame(
        [
            {"corpus": name, "size": t["size"], "fit seconds": t["fit_seconds"], "peak MiB": t["peak_mib"]}
            for name, res in runs.items()
            for t in res.get("timing", {}).get(method, [])
        ]
    )
