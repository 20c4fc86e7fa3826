"""The ``aethel-hybrid`` chapter's study in one call: :func:`run` runs the baselines, the hybrid and its
ablations on each corpus (:func:`~aethel_lite.studies.beyond.beyond_study`), where its misses lie
(:func:`~aethel_lite.studies.anchoring.anchoring_study`), the closed-pool check and the question latency,
and returns a :class:`HybridStudy`: the result (``results/beyond.json``, :meth:`HybridStudy.save`) and the
chapter's tables, figure and generated sentences, each built from that result
(:mod:`aethel_lite.studies.beyond_report`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..data.select import load_for_eval
from ..evaluation.stats import format_estimate
from ..io import write_json
from . import beyond_report as report
from .anchoring import anchoring_sentences, anchoring_study
from .beyond import beyond_study, closed_pool_check, latency, load_study
from .record import as_record
from .tuning import halves, read_tuning

__all__ = ["HybridStudy", "run", "load_study", "chosen_setting"]

#: the methods of the halves' tables (``aethel-hybrid-v1``: the setting tuned before the heading term)
#: quick mode (CI): the closed pools' first questions, each with its own candidates
QUICK_CLOSED = 6
SHOWN = ("bm25", "dense", "dense-max", "rrf-dense", "aethel-bct", "aethel-hybrid-v1", "aethel-hybrid")
#: the closed pools (:func:`~aethel_lite.data.select.load_for_eval` formats) the hybrid is checked on
CLOSED = ("musique", "2wiki")


def chosen_setting(tuning: Mapping[str, Any] | None = None) -> list:
    """The setting chosen on the development questions (the stored tuning record,
    :func:`~aethel_lite.studies.tuning.read_tuning`): a Markdown sentence, then its development
    scores per corpus (a DataFrame)."""
    import pandas as pd

    tuning = read_tuning() if tuning is None else tuning
    best, s = tuning["best"], tuning["best"]["setting"]
    said = (
        f"**Chosen on development questions only** ({', '.join(f'`{k}`: {v}' for k, v in tuning['datasets'].items())}; "
        f"{tuning['n_settings']:,} settings tried, objective: {tuning['grid']['objective']}): "
        f"dense pooling `{s['dense_pooling']}`, seed depth K = {s['seed_depth']}, "
        f"period decay ρ = {s['period_decay']}, seed weights {' · '.join(f'{k} {v}' for k, v in s['seed_weights'].items())}, "
        f"ranking weights {' · '.join(f'{k} {v}' for k, v in s['rank_weights'].items())}; mean development MRR {best['dev_mrr']:.3f}."
    )
    return [said, pd.DataFrame([{"data set": k, **v} for k, v in best["per_dataset"].items()])]


class HybridStudy:
    """What :func:`run` measured (``result``, as ``results/beyond.json`` holds it) and the chapter's views of it.

    Each view returns what the chapter shows: a DataFrame, a figure, Markdown text, or a list of
    Markdown strings and DataFrames in the order shown.
    """

    def __init__(self, result: Mapping[str, Any], *, n_resamples: int = 10_000, seed: int = 0, tuning=None):
        self.result = as_record(result)
        self.n_resamples, self.seed = n_resamples, seed
        self.tuning = read_tuning() if tuning is None else tuning

    @property
    def datasets(self) -> dict:
        """Corpus → its :func:`~aethel_lite.studies.beyond.beyond_study` entry."""
        return self.result["datasets"]

    @property
    def synthetic_only(self) -> bool:
        return self.result["synthetic_only"]

    def save(self, results_dir: str | Path = "results") -> None:
        """Write ``results_dir/beyond.json``."""
        path = Path(results_dir) / "beyond.json"
        write_json(path, self.result)

    def headline(self, metric: str = "MRR", half: str = "test") -> tuple:
        """:func:`~aethel_lite.studies.beyond_report.hybrid_headline`: a DataFrame and the verdict."""
        return report.hybrid_headline(self.result, metric, half, n_resamples=self.n_resamples, seed=self.seed)

    def takeaways(self, metric: str = "MRR") -> str:
        return report.hybrid_takeaways(self.result, metric)

    def halves_tables(self, metrics=(("MRR", "HR@5"), ("Recall@5", "AllSupport@5"))) -> list:
        """Per corpus: its size, then for each group of ``metrics`` the methods' means on the development
        half, the test half and all questions ("dev / test / all" in one cell per metric)."""
        import pandas as pd

        out = []
        for name, r in self.datasets.items():
            s = r["summary"]
            out.append(
                f"**{name}** ({s['n_queries']} questions: {len(r['halves']['dev'])} development, "
                f"{len(r['halves']['test'])} test; {s['n_passages']:,} passages)"
            )
            for group in metrics:  # several tables: each fits the column
                wide = report.halves_table(r, SHOWN, group)
                cells = {
                    f"{m} (dev / test / all)": [
                        " / ".join(f"{v:.3f}" for v in row) for row in wide[m].to_numpy()
                    ]
                    for m in group
                }
                out.append(pd.DataFrame(cells, index=wide.index))
        return out

    def tests_tables(self, metrics=("MRR", "HR@5")) -> list:
        """Per corpus: ``aethel-hybrid`` − each baseline, the paired bootstrap's difference and 95% CI."""
        out = []
        for name, r in self.datasets.items():
            out.append(f"**{name}**: `aethel-hybrid` − baseline, paired bootstrap 95% CI")
            t = report.tests_table(r["tests"], metrics)
            t["difference [95% CI]"] = [f"{d:+.3f} {ci}" for d, ci in zip(t["difference"], t["95% CI"])]
            out.append(
                t[["half", "vs", "metric", "n", "hybrid", "baseline", "difference [95% CI]", "p (bootstrap)"]]
            )
        return out

    def figure(self, metric: str = "MRR"):
        """:func:`~aethel_lite.studies.beyond_report.difference_figure` of every corpus."""
        return report.difference_figure(self.datasets, metric)

    def ablation_tables(self, metrics=("MRR", "HR@5", "Recall@5", "AllSupport@5"), half: str = "all") -> list:
        """Per metric: each variant's value on ``half`` and its change against the full method."""
        out = []
        for metric in metrics:
            note = " (multi-hop corpora: several gold passages per question)" if metric == "Recall@5" else ""
            out.append(f"**{metric}**, all questions; in brackets the change against all components{note}")
            out.append(report.ablation_columns(self.datasets, metric, half))
        return out

    def composition(self, metric: str = "MRR") -> str:
        """What the tuned method is made of (all questions, then the test half) and the tuning's spread."""
        return "\n".join(
            report.composition(self.result, metric, "all")
            + report.composition(self.result, metric, "test")[1:]
            + report.tuning_sentences(self.tuning, self.result)
        )

    def anchoring(self) -> str:
        """The filing or the page: :func:`~aethel_lite.studies.anchoring.anchoring_sentences`, all questions
        then the test half."""
        a = self.result["anchoring"]
        return "\n".join(anchoring_sentences(a, "all") + anchoring_sentences(a, "test", skipped=False))

    def closed_and_speed(self) -> list:
        """The closed pools' tests against ``aethel-bct``, the seed sources of the top-5 hits, the latency
        table and what each stage of the study cost."""
        import pandas as pd

        rows = [
            {"data set": name, "half": t["half"], "metric": t["metric"], "hybrid": t["mean_a"],
             "aethel-bct": t["mean_b"], "difference [95% CI]": format_estimate(t, signed=True)}
            for name, c in self.result["closed"].items()
            for t in c["tests"]
        ]  # fmt: skip
        src = pd.DataFrame({n: r["sources"] for n, r in self.datasets.items()}).fillna(0.0)
        lat = self.result["timing"]["latency"]
        passes = lat.get("passes", 3)
        stages = self.result["timing"].get("stages", {})
        return [
            pd.DataFrame(rows) if rows else "*Closed pools not run (no real data).*",
            "**Share of the hybrid's top-5 hits by the seed source that brought the most of their score**",
            src.rename_axis("seed source"),
            f"**Latency** on `{lat['dataset']}` ({lat['n_passages']:,} passages, {lat['n_queries']} questions, "
            f"10 hits, {'one timing pass' if passes == 1 else f'best of {passes} passes'}; "
            "`benchmarks/bench_hybrid.py` measures the same on the full corpus):",
            pd.DataFrame({k: v for k, v in lat.items() if isinstance(v, dict)}).T.rename_axis("method"),
            "**What the study cost in this build** (wall-clock seconds of this run, as measured by the cell "
            "that wrote the result file): "
            + "; ".join(f"{k} {v:,.0f} s" for k, v in stages.items())
            + f"; in all {sum(stages.values()):,.0f} s. A step whose result was already in the result cache "
            "(`$AETHEL_CACHE/results`, keyed by data, parameters and the library's code) costs next to nothing "
            "here; `benchmarks/README.md` has the cost of a cold build.",
        ]

    def targets(self, metric: str = "MRR") -> tuple:
        """Our targets: the generated summary, the targets as a DataFrame, and what did not work (Markdown)."""
        import pandas as pd

        rows = report.targets(self.result)
        return (
            report.targets_summary(rows),
            pd.DataFrame(rows),
            "\n".join(report.what_did_not_work(self.result, metric)),
        )


def run(
    loaded: Mapping[str, Any],
    *,
    quick: bool = False,
    n_resamples: int = 10_000,
    seed: int = 0,
    n_process: int = 1,
    log: Callable[[str], None] | None = None,
) -> HybridStudy:
    """The hybrid chapter's study on the corpora ``loaded`` (:func:`~aethel_lite.studies.beyond.load_study`).

    In order, each stage timed (``timing["stages"]``, wall-clock seconds): the baselines, ``aethel-hybrid``
    and its ablations on each corpus (``datasets``); the filing-or-page study with each corpus's fitted
    hybrid (``anchoring``); ``aethel-hybrid`` against ``aethel-bct`` in MuSiQue's and 2Wiki's closed pools
    (``closed``; none when only the synthetic corpus loaded; ``quick``: the first questions with their own
    candidates); the latency on the FinanceBench corpus (else the synthetic one), one timing pass with the
    hybrid fitted above (``timing["latency"]``). The result also keeps ``synthetic_only`` and the tuning
    record's choice (``tuning``).
    """
    hybrids, stages = {}, {}
    t0 = time.perf_counter()
    result: dict[str, Any] = {
        "datasets": beyond_study(
            loaded, n_resamples=n_resamples, seed=seed, n_process=n_process, log=log, keep=hybrids
        )
    }
    stages["study (the baselines, the hybrid and its ablations)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    result["anchoring"] = {
        n: anchoring_study(
            ds,
            fitted={"aethel-hybrid": hybrids[n]} if n in hybrids else None,
            halves={h: [q.qid for q in qs] for h, qs in halves(ds).items()},
        )
        for n, ds in loaded.items()
    }
    stages["filing or page (anchoring study)"] = time.perf_counter() - t0
    synthetic_only = set(loaded) == {"synthetic"}
    closed, t0 = {}, time.perf_counter()
    for fmt in () if synthetic_only else CLOSED:
        ds = load_for_eval(fmt)
        # quick: the first questions with their own candidates only (each question ranks its own pool)
        closed[fmt] = ds.subset(limit=QUICK_CLOSED, keep_all_passages=False) if quick else ds
    result["closed"] = closed_pool_check(
        closed, n_resamples=n_resamples, seed=seed, n_process=n_process, log=log
    )
    stages["closed pools (aethel-bct and aethel-hybrid)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    timed = next((n for n in ("financebench", "synthetic") if n in loaded), next(iter(loaded)))
    reuse = {"aethel-hybrid": hybrids[timed]} if timed in hybrids else {}  # fitted above: not fitted again
    passes = 1  # one timing pass: benchmarks/bench_hybrid.py repeats it on an idle machine (best of 3)
    result["timing"] = {
        "latency": {
            "dataset": timed,
            "passes": passes,
            **latency(loaded[timed], repeats=passes, n_process=n_process, fitted=reuse),
        }
    }
    stages["latency"] = time.perf_counter() - t0
    result["timing"]["stages"] = {k: round(v, 1) for k, v in stages.items()}
    result["synthetic_only"] = synthetic_only
    tuning = read_tuning()
    result["tuning"] = {k: tuning[k] for k in ("best", "datasets", "grid", "n_settings")}
    return HybridStudy(result, n_resamples=n_resamples, seed=seed, tuning=tuning)
