r"""Multi-hop at open-corpus scale: ``aethel-multihop`` against BM25, dense, the paper's graph and the hybrid on
2Wiki-open and MuSiQue-open, with the published pooled-corpus table beside ours.

Every method searches the whole pooled corpus (:func:`~aethel_lite.studies.open_corpus.load_open`). The metrics
are Recall@2 and Recall@5 (the mean share of a question's gold passages in the top :math:`k`, the published
table's measure) and AllSupport@5 (every gold passage in the top 5). Each data set's questions are split into
development and test halves (:func:`~aethel_lite.evaluation.splits.split`); ``aethel-multihop``'s settings were
chosen on the development halves, and the test halves are where it is compared, with paired-bootstrap 95% CIs.

References
----------
Gutiérrez et al., "From RAG to Memory: Non-Parametric Continual Learning for Large Language Models"
(HippoRAG 2), ICML 2025, Table 2 (passage recall@5 on the pooled corpora of 1,000 questions per data set).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..caching.resultcache import cached, dataset_digest
from ..data.summary import dataset_summary
from ..errors import DataConfigError, DataNotFoundError
from ..evaluation.metrics import mean, per_query
from ..evaluation.runner import block_of, paired_comparisons, run_methods
from ..evaluation.splits import split
from ..evaluation.stats import bootstrap_ci, format_estimate
from ..io import write_json
from ..retrievers.registry import MULTIHOP_ABLATIONS, make_retriever
from .open_corpus import QUICK, load_open
from .record import as_record

__all__ = [
    "CORPORA",
    "NEW",
    "BRIDGES",
    "CHAIN",
    "STAGES",
    "BASELINES",
    "METHODS",
    "METRICS",
    "PUBLISHED",
    "TARGETS",
    "load_corpora",
    "multihop_study",
    "means_table",
    "tests_table",
    "ablation_table",
    "published_table",
    "stage_table",
    "hops_table",
    "verdict",
    "MultihopStudy",
    "run",
]

#: The pooled corpora, by their :data:`~aethel_lite.studies.open_corpus.OPEN_DATASETS` names.
CORPORA = ("2wiki-open", "musique-open")
NEW = "aethel-multihop"
#: the stage that widens ``aethel-multihop``'s walk to the rare entities two passages share (compared with it)
BRIDGES = "aethel-bridges"
#: the stage holding ``aethel-bridges`` that asks each question again after its first passages
CHAIN = "aethel-chain"
#: each stage → the retriever it holds (each is compared with it, and ``aethel-chain`` with ``aethel-multihop``)
STAGES = {BRIDGES: NEW, CHAIN: BRIDGES}
BASELINES = ("bm25", "dense", "aethel-bct", "aethel-hybrid")
METHODS = (*BASELINES, NEW, *MULTIHOP_ABLATIONS, BRIDGES, CHAIN)
METRICS = ("Recall@2", "Recall@5", "AllSupport@5")

#: HippoRAG 2's pooled-corpus Recall@5 (percent; its Table 2 and ablation table): other question samples
#: (1,000 per data set), other corpus sizes and far larger models; our BM25 is the bridge between the tables.
PUBLISHED: dict[str, dict[str, Any]] = {
    "BM25": {"2wiki-open": 65.3, "musique-open": 43.5, "models": "none"},
    "NV-Embed-v2 (dense)": {"2wiki-open": 76.5, "musique-open": 69.7, "models": "7B encoder"},
    "HippoRAG 2, NER to node (no LLM triples)": {
        "2wiki-open": 91.2,
        "musique-open": 53.8,
        "models": "7B encoder, 70B LLM for NER",
    },
    "HippoRAG 2": {
        "2wiki-open": 90.4,
        "musique-open": 74.7,
        "models": "7B encoder, 70B LLM (OpenIE, filter)",
    },
}

#: Recall@5 we aim at on each test half (the moonshot is HippoRAG 2's).
TARGETS = {"2wiki-open": 0.85, "musique-open": 0.60}


def load_corpora(
    names: Sequence[str] = CORPORA, *, quick: bool = False, data: str | None = None, fallback: bool = True
) -> tuple[dict, dict[str, str]]:
    """The corpora that load (quick: :data:`~aethel_lite.studies.open_corpus.QUICK`'s questions and sample), and
    for each that does not, why; ``fallback``: the synthetic corpus stands in when none loads.

    Raises
    ------
    ValueError
        A name that is not one of :data:`CORPORA` (before anything is loaded).
    """
    unknown = [d for d in names if d not in CORPORA]
    if unknown:
        raise ValueError(f"datasets: unknown {unknown}; choose from {', '.join(CORPORA)}")
    limit, size = (QUICK["limit"], QUICK["corpus_size"]) if quick else (None, None)
    loaded, missing = {}, {}
    for name in names:
        try:
            loaded[name] = load_open(name, data=data, limit=limit, corpus_size=size)
        except (DataNotFoundError, DataConfigError) as exc:
            missing[name] = str(exc)
    if fallback and not loaded:
        loaded = {"synthetic": load_open("synthetic", limit=limit, corpus_size=size)}
    return loaded, missing


def _summary(values: Sequence[float], n_resamples: int, seed: int) -> dict:
    ci = bootstrap_ci(values, n_resamples=n_resamples, seed=seed)
    return {
        "mean": round(mean(values), 6),
        "ci_low": round(ci.ci_low, 6),
        "ci_high": round(ci.ci_high, 6),
        "n": len(values),
    }


def _study(dataset, methods: Sequence[str], n_resamples: int, seed: int, log) -> dict:
    outcomes = run_methods(dataset, methods, setting="open", progress=False, log=log)
    metrics = (*METRICS, "MRR")
    pq = {m: per_query(o.run, dataset.queries, metrics=metrics) for m, o in outcomes.items()}
    block = {m: {"per_query_metrics": {q: {k: round(float(v), 6) for k, v in r.items()} for q, r in rows.items()}}
             for m, rows in pq.items()}  # fmt: skip
    qids = [q.qid for q in dataset.queries]
    halves = {**split(dataset.name, qids), "all": qids}
    means = {
        m: {
            half: {k: _summary([pq[m][q][k] for q in ids], n_resamples, seed) for k in metrics}
            for half, ids in halves.items()
            if ids
        }
        for m in methods
    }
    tests = []
    for half, ids in halves.items():
        if len(ids) >= 2:
            pairs = [(NEW, b) for b in (*BASELINES, *MULTIHOP_ABLATIONS) if b in methods]
            pairs += [p for p in [*STAGES.items(), (CHAIN, NEW)] if set(p) <= set(methods)]
            rows = paired_comparisons(
                block_of(block, ids), pairs, METRICS, n_resamples=n_resamples, seed=seed
            )
            tests += [{"half": half, **row} for row in rows]
    # the cost of a question: one batched search of every question, the questions encoded anew (a fresh fit
    # from the stores, without the evaluation's memo of question vectors)
    per_question_ms = {}
    for m in (NEW, *STAGES):
        if m in methods:
            timed = make_retriever(m).fit(dataset.passages)
            t0 = time.perf_counter()
            timed.search(dataset.queries, k=10)
            per_question_ms[m] = round(1000 * (time.perf_counter() - t0) / len(dataset.queries), 3)
    graph = outcomes[NEW].retriever.graph_
    bridges = outcomes[BRIDGES].retriever.bridges_ if BRIDGES in outcomes else None
    return {
        "summary": dataset_summary(dataset),
        "halves": {h: ids for h, ids in halves.items() if h != "all"},
        "means": means,
        "tests": tests,
        "per_query_metrics": block,
        "runs": {
            m: {q.qid: [pid for pid, _ in o.run.get(q.qid, [])[:10]] for q in dataset.queries}
            for m, o in outcomes.items()
        },  # fmt: skip
        "hops": {q.qid: q.hops for q in dataset.queries},
        "graph": {
            "passages": int(graph.shape[0]),
            "edges": int(graph.nnz // 2),
            "bridge_edges": None if bridges is None else int(bridges.nnz // 2),
        },
        "timing": {
            "fit_and_search_seconds": {m: round(o.seconds, 3) for m, o in outcomes.items()},
            "ms_per_question": per_question_ms,
        },
    }


def multihop_study(
    datasets: Mapping[str, Any],
    *,
    methods: Sequence[str] = METHODS,
    n_resamples: int = 10_000,
    seed: int = 0,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Run ``methods`` on each corpus in the open setting and score them (cached on disk per corpus).

    Returns
    -------
    dict
        ``{"methods", "metrics", "published", "targets", "datasets": {name: {"summary", "halves", "means"
        (method → half → metric → mean and 95% CI), "tests" (``aethel-multihop`` − each other method, paired
        bootstrap per half and metric), "per_query_metrics", "runs" (each method's top 10 per question), "graph",
        "timing"}}}``.
    """
    out = {}
    for name, dataset in datasets.items():
        out[name] = cached(
            "multihop",
            {
                "dataset": dataset_digest(dataset),
                "methods": list(methods),
                "n_resamples": n_resamples,
                "seed": seed,
            },
            lambda dataset=dataset: _study(dataset, methods, n_resamples, seed, log),
        )
    return {
        "methods": list(methods),
        "metrics": list(METRICS),
        "published": PUBLISHED,
        "targets": TARGETS,
        "datasets": out,
    }


def _fmt(cell: Mapping[str, float]) -> str:
    return format_estimate(cell)


def means_table(result: Mapping[str, Any], half: str, methods: Sequence[str] | None = None) -> list[dict]:
    """Rows (corpus, method) with each metric's mean and 95% CI on ``half``."""
    rows = []
    for name, r in result["datasets"].items():
        for m in methods or result["methods"]:
            if m in r["means"] and half in r["means"][m]:
                cells = r["means"][m][half]
                rows.append({"corpus": name, "method": m, **{k: _fmt(cells[k]) for k in result["metrics"]}})
    return rows


def tests_table(result: Mapping[str, Any], half: str, metric: str) -> list[dict]:
    """Rows (corpus, other method): ``aethel-multihop`` − it on ``half``, with the paired-bootstrap 95% CI."""
    rows = []
    for name, r in result["datasets"].items():
        for t in r["tests"]:
            if t["half"] == half and t["metric"] == metric:
                rows.append(
                    {
                        "corpus": name,
                        "vs": t["b"],
                        "n": t["n"],
                        NEW: round(t["mean_a"], 3),
                        "other": round(t["mean_b"], 3),
                        "difference [95% CI]": format_estimate(t, signed=True, interval_decimals=3),
                        "CI excludes 0": t["ci_low"] > 0 or t["ci_high"] < 0,
                    }
                )
    return rows


def ablation_table(result: Mapping[str, Any], half: str = "dev", metric: str = "Recall@5") -> list[dict]:
    """Rows (corpus, ablation): its mean on ``half`` and the full method's lead over it (paired 95% CI)."""
    return [row for row in tests_table(result, half, metric) if row["vs"] in MULTIHOP_ABLATIONS]


def published_table(result: Mapping[str, Any], half: str = "test") -> list[dict]:
    """Recall@5 in percent: the published rows, then ours on ``half`` (BM25 in both: the bridge)."""
    rows = [{"system": s, "models": v["models"], **{c: v[c] for c in CORPORA}, "source": "HippoRAG 2 (published)"}
            for s, v in result["published"].items()]  # fmt: skip
    ours = {
        "bm25": "none",
        "dense": "MiniLM (22M)",
        "aethel-hybrid": "MiniLM, spaCy",
        NEW: "MiniLM (no spaCy, no LLM)",
        BRIDGES: "MiniLM, spaCy (no LLM)",
        CHAIN: "MiniLM, spaCy (no LLM)",
    }
    for m, models in ours.items():
        row = {"system": m, "models": models, "source": f"this book ({half} half)"}
        for c in CORPORA:
            r = result["datasets"].get(c)
            cell = r["means"].get(m, {}).get(half, {}).get("Recall@5") if r else None
            row[c] = round(100 * cell["mean"], 1) if cell else None
        rows.append(row)
    return rows


def stage_table(
    result: Mapping[str, Any], stage: str = BRIDGES, held: str = NEW, metric: str = "Recall@5"
) -> list[dict]:
    """Rows (corpus, half): ``stage`` − ``held`` on ``metric``, paired 95% CI."""
    return [
        {
            "corpus": name,
            "half": t["half"],
            "n": t["n"],
            held: round(t["mean_b"], 3),
            stage: round(t["mean_a"], 3),
            "difference [95% CI]": format_estimate(t, signed=True, interval_decimals=3),
            "CI excludes 0": t["ci_low"] > 0 or t["ci_high"] < 0,
        }
        for name, r in result["datasets"].items()
        for t in r["tests"]
        if t["a"] == stage and t["b"] == held and t["metric"] == metric and t["half"] in ("dev", "test")
    ]


def hops_table(result: Mapping[str, Any], half: str = "test", metric: str = "Recall@5") -> list[dict]:
    """Rows (corpus, hops): the questions of ``half`` with that many hops, and each method's mean ``metric``
    (``aethel-multihop`` and its stages)."""
    rows = []
    for name, r in result["datasets"].items():
        ids = r["halves"].get(half, [])
        for hops in sorted({r["hops"][q] for q in ids}):
            group = [q for q in ids if r["hops"][q] == hops]
            row = {"corpus": name, "hops": hops, "questions": len(group)}
            for m in (NEW, *STAGES):
                if m in r["per_query_metrics"]:
                    block = r["per_query_metrics"][m]["per_query_metrics"]
                    row[m] = round(mean([block[q][metric] for q in group]), 3)
            rows.append(row)
    return rows


def verdict(result: Mapping[str, Any], half: str = "test") -> str:
    """One sentence per corpus: ``aethel-multihop``'s Recall@5 on ``half``, its lead over each baseline with the
    CI, and whether the target (:data:`TARGETS`) was met; in quick mode (``result["parameters"]["quick"]``)
    the targets are not judged."""
    out = []
    for name, r in result["datasets"].items():
        mine = r["means"].get(NEW, {}).get(half)
        if mine is None:
            continue
        rec = mine["Recall@5"]["mean"]
        leads = [
            t for t in r["tests"] if t["half"] == half and t["metric"] == "Recall@5" and t["b"] in BASELINES
        ]
        beats = all(t["ci_low"] > 0 for t in leads)
        target = None if result.get("parameters", {}).get("quick") else result["targets"].get(name)
        parts = ", ".join(f"`{t['b']}` {format_estimate(t, signed=True, interval_decimals=3)}" for t in leads)
        out.append(
            f"* **{name}** ({mine['Recall@5']['n']} {half}-half questions): `{NEW}` Recall@5 {rec:.3f}; "
            f"its lead over {parts}; "
            + (
                "above every baseline with the CI excluding zero"
                if beats
                else "not above every baseline beyond its CI"
            )
            + (f"; the target {target:.2f} is {'met' if rec >= target else 'not met'}." if target else ".")
        )
    if out and result.get("parameters", {}).get("quick"):
        out.append(
            "* *Quick mode: a few questions over a small sample of each corpus; the targets are about "
            "the whole corpora and are not judged here.*"
        )
    return "\n".join(out)


# ------------------------------------------------------------------------------------ the chapter
class MultihopStudy:
    """:func:`multihop_study`'s result with the chapter's parameters (``results/multihop.json``), in the form
    its file holds, and what the chapter shows of it: DataFrames, a figure and generated Markdown."""

    def __init__(self, result: Mapping[str, Any]):
        self.result = as_record(result)  # as the file holds it

    def save(self, results_dir: str | Path = "results") -> None:
        """Write ``results_dir/multihop.json``."""
        path = Path(results_dir) / "multihop.json"
        write_json(path, self.result)

    def corpora(self) -> list[str]:
        """One Markdown line per corpus: its questions (development, test), passages and mention edges."""
        return [
            f"**{name}**: {r['summary']['n_queries']} questions ({len(r['halves']['dev'])} development, "
            f"{len(r['halves']['test'])} test), {r['summary']['n_passages']:,} passages, "
            f"{r['graph']['edges']:,} mention edges"
            for name, r in self.result["datasets"].items()
        ]

    def table(self, half: str = "test"):
        """:func:`means_table` of the baselines and ``aethel-multihop`` on ``half``."""
        import pandas as pd

        return pd.DataFrame(means_table(self.result, half, [*BASELINES, NEW]))

    def tests_tables(
        self, half: str = "test", metrics: Sequence[str] = ("Recall@5", "Recall@2", "AllSupport@5")
    ):
        """Per metric (a Markdown heading, then a DataFrame): ``aethel-multihop`` − each baseline on ``half``."""
        import pandas as pd

        out = []
        for metric in metrics:
            rows = [r for r in tests_table(self.result, half, metric) if r["vs"] in BASELINES]
            out += [f"**{metric}**", pd.DataFrame(rows)]
        return out

    def ablation_tables(self, metric: str = "Recall@5") -> list:
        """:func:`ablation_table` on the development halves, then the test halves (heading, DataFrame)."""
        import pandas as pd

        out = []
        for half in ("dev", "test"):
            out.append(f"**{metric}, {'development' if half == 'dev' else 'test'} halves**")
            out.append(pd.DataFrame(ablation_table(self.result, half, metric)))
        return out

    def published_table(self, half: str = "test"):
        """:func:`published_table` as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(published_table(self.result, half))

    def cost_table(self):
        """Milliseconds per question of each new method's batched search, and the passages, per corpus."""
        import pandas as pd

        return pd.DataFrame(
            [
                {
                    "corpus": n,
                    **{f"{m} (ms per question)": ms for m, ms in r["timing"]["ms_per_question"].items()},
                    "passages": r["graph"]["passages"],
                    "bridge edges": r["graph"]["bridge_edges"],
                }
                for n, r in self.result["datasets"].items()
            ]
        )

    def stage_table(self, stage: str = BRIDGES, held: str = NEW, metric: str = "Recall@5"):
        """:func:`stage_table` as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(stage_table(self.result, stage, held, metric))

    def hops_table(self, half: str = "test"):
        """:func:`hops_table` as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(hops_table(self.result, half))

    def gains(self, corpus: str, stage: str = BRIDGES, held: str = NEW, half: str = "test") -> list[str]:
        """The questions of ``half`` whose Recall@5 ``stage`` raises over ``held``, largest gain first."""
        r = self.result["datasets"].get(corpus)
        if r is None or not {stage, held} <= set(r["per_query_metrics"]):
            return []
        a, b = (r["per_query_metrics"][m]["per_query_metrics"] for m in (stage, held))
        gain = {q: a[q]["Recall@5"] - b[q]["Recall@5"] for q in r["halves"].get(half, [])}
        return sorted((q for q in gain if gain[q] > 0), key=lambda q: -gain[q])

    def stage_verdict(self, stage: str = BRIDGES, held: str = NEW, half: str = "test") -> str:
        """One Markdown line per corpus: ``stage`` against ``held`` on ``half`` (Recall@5)."""
        rows = [r for r in stage_table(self.result, stage, held) if r["half"] == half]
        return "\n".join(
            f"* **{r['corpus']}** ({r['n']} {half}-half questions): `{stage}` Recall@5 {r[stage]:.3f} against "
            f"`{held}`'s {r[held]:.3f}, a difference of {r['difference [95% CI]']}"
            + ("; the interval excludes zero." if r["CI excludes 0"] else "; the interval includes zero.")
            for r in rows
        )

    def verdict(self, half: str = "test") -> str:
        """:func:`verdict` on ``half``."""
        return verdict(self.result, half)

    def figure(self, half: str = "test", metric: str = "Recall@5"):
        """One panel per corpus: each baseline's, ``aethel-multihop``'s and its stages' ``metric`` on ``half``,
        the mean with its 95% bootstrap interval."""
        import matplotlib.pyplot as plt

        datasets = self.result["datasets"]
        fig, axes = plt.subplots(1, len(datasets), figsize=(5 * len(datasets), 3.6), squeeze=False)
        for ax, (name, r) in zip(axes[0], datasets.items()):
            shown = [m for m in (*BASELINES, NEW, *STAGES) if m in r["means"]]
            cells = [r["means"][m][half][metric] for m in shown]
            means = [c["mean"] for c in cells]
            ax.errorbar(
                means,
                range(len(shown)),
                fmt="o",
                xerr=[[c["mean"] - c["ci_low"] for c in cells], [c["ci_high"] - c["mean"] for c in cells]],
            )
            ax.set_yticks(range(len(shown)), shown)
            ax.set_xlim(0, 1.03)  # a mean of 1 stays inside the frame
            ax.set_xlabel(f"{metric} ({half} half, 95% CI)")
            ax.set_title(name)
        fig.tight_layout()
        return fig


def run(
    loaded: Mapping[str, Any],
    *,
    datasets: Sequence[str] | None = None,
    quick: bool = False,
    n_resamples: int = 10_000,
    seed: int = 0,
    log: Callable[[str], None] | None = None,
) -> MultihopStudy:
    """The multi-hop chapter's study: :func:`multihop_study` on the corpora ``loaded``
    (:func:`load_corpora`), with the chapter's parameters (``datasets``: the corpora asked for) and
    whether only the synthetic corpus ran."""
    result = multihop_study(loaded, n_resamples=n_resamples, seed=seed, log=log)
    result["parameters"] = {"datasets": list(datasets or loaded), "quick": quick, "n_resamples": n_resamples}
    result["synthetic_only"] = set(loaded) == {"synthetic"}
    return MultihopStudy(result)
