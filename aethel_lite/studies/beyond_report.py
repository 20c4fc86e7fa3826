"""What the ``aethel-hybrid`` chapter shows of a saved study (:mod:`aethel_lite.studies.beyond`): each of
our targets with what was measured, the headline (:func:`hybrid_headline`), the halves', tests' and
ablations' tables, the difference figure, and the generated sentences (what did not work, the tuning's
spread, what the tuned method is made of, the chapter's takeaways).

Everything here reads the study's result, in the form written to ``results/beyond.json``; nothing is run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..evaluation.stats import bootstrap_ci, format_difference, format_estimate, format_interval
from ..retrievers.hybrid import ABLATION_LABELS, RANK_TERMS
from .beyond import VARIANTS

#: The baselines our targets compare the hybrid with.
TARGET_BASELINES = ("bm25", "dense")
#: VARIANTS entries that are not one component switched off
_NOT_ONE_OFF = ("aethel-hybrid-ppr-only", "aethel-hybrid-no-graph", "aethel-hybrid-v1")


def _test_row(rows: Sequence[Mapping[str, Any]], half: str, b: str, metric: str) -> Mapping[str, Any] | None:
    return next(
        (
            t
            for t in rows
            if t["half"] == half and t["a"] == "aethel-hybrid" and t["b"] == b and t["metric"] == metric
        ),
        None,
    )


def targets(saved: Mapping[str, Any]) -> list[dict]:
    """Each of our targets for ``aethel-hybrid`` with what was measured and whether it is met.

    The targets: on FinanceBench pages a higher MRR than BM25 and than dense retrieval, with a 95%
    CI of the difference that excludes 0; on the open MuSiQue and 2Wiki corpora a Recall@5 at least
    the better baseline's and a higher AllSupport@5; on the closed pools no loss to ``aethel-bct``
    beyond its CI; and a latency of at most 20 ms per question alone, 5 ms in a batch.

    Parameters
    ----------
    saved : mapping
        The ``beyond`` result file (``{"datasets": beyond_study(...), "closed": closed_pool_check(...),
        "timing": {"latency": {"dataset": name, **latency(...)}}}``).

    Returns
    -------
    list of dict
        ``{"target", "data set", "measured", "met"}``; ``met`` is None when the data set was not run.
    """
    rows = []
    res = saved.get("datasets", {})
    fb = res.get("financebench")
    for half in ("test", "all"):
        for b in TARGET_BASELINES:
            t = _test_row(fb["tests"], half, b, "MRR") if fb else None
            hr = _test_row(fb["tests"], half, b, "HR@5") if fb else None
            rows.append(
                {
                    "target": f"FinanceBench pages, {half}: MRR above {b}'s, 95% CI excluding 0",
                    "data set": "financebench",
                    "measured": "not run"
                    if t is None
                    else (
                        f"MRR {t['mean_a']:.3f} vs {t['mean_b']:.3f}, diff {format_estimate(t, signed=True, interval_decimals=3)}"
                        f"; HR@5 {hr['mean_a']:.3f} vs {hr['mean_b']:.3f} (n = {t['n']})"
                    ),
                    "met": None if t is None else bool(t["diff"] > 0 and t["ci_low"] > 0),
                }
            )
    for name in ("musique-open", "2wiki-open"):
        r = res.get(name)
        if r is None:
            rows.append(
                {
                    "target": "Recall@5 ≥ best of bm25/dense and AllSupport@5 higher",
                    "data set": name,
                    "measured": "not run",
                    "met": None,
                }
            )
            continue
        m = r["metrics"]
        best_r = max(m[b]["all"]["Recall@5"] for b in TARGET_BASELINES)
        best_a = max(m[b]["all"]["AllSupport@5"] for b in TARGET_BASELINES)
        hyb = m["aethel-hybrid"]["all"]
        rows.append(
            {
                "target": "all questions: Recall@5 ≥ best of bm25/dense and AllSupport@5 higher",
                "data set": name,
                "measured": f"Recall@5 {hyb['Recall@5']:.3f} vs {best_r:.3f}; AllSupport@5 {hyb['AllSupport@5']:.3f} vs {best_a:.3f}",
                "met": bool(hyb["Recall@5"] >= best_r and hyb["AllSupport@5"] > best_a),
            }
        )
    for name, c in (saved.get("closed") or {}).items():
        worst = min(
            (t for t in c["tests"] if t["half"] == "all"),
            key=lambda t: (t["diff"], t["ci_high"]),
            default=None,
        )
        rows.append(
            {
                "target": "closed pools: not worse than aethel-bct by more than its CI",
                "data set": name,
                "measured": "no test"
                if worst is None
                else f"least favourable: {worst['metric']} diff {format_estimate(worst, signed=True, interval_decimals=3)}",
                "met": c["passes"],
            }
        )
    lat = (saved.get("timing") or {}).get("latency")
    if lat:
        for row, what in (
            ("aethel-hybrid", "end to end"),
            ("aethel-hybrid (question analysed)", "question analysed"),
        ):
            h = lat.get(row)
            if h is None:
                continue
            rows.append(
                {
                    "target": f"latency ≤ 20 ms single, ≤ 5 ms batched ({what})",
                    "data set": f"{lat['dataset']} ({lat['n_passages']:,} passages)",
                    "measured": f"single {h['single_ms']:.1f} ms, batched {h['batched_ms']:.1f} ms "
                    f"(BM25 {lat['bm25']['single_ms']:.1f} / {lat['bm25']['batched_ms']:.1f} ms; "
                    f"dense {lat['dense']['single_ms']:.1f} / {lat['dense']['batched_ms']:.1f} ms)",
                    "met": bool(h["single_ms"] <= 20 and h["batched_ms"] <= 5),
                }
            )
    return rows


def targets_summary(rows: Sequence[Mapping[str, Any]]) -> str:
    """One generated sentence from :func:`targets` rows: how many targets are met, and each that is not."""
    run = [r for r in rows if r["met"] is not None]
    failed = [r for r in run if not r["met"]]
    head = f"**{len(run) - len(failed)} of the {len(run)} targets measured here are met.**"
    if not failed:
        return head
    return (
        head
        + " Not met: "
        + "; ".join(f"{r['target']} on `{r['data set']}` ({r['measured']})" for r in failed)
        + "."
    )


def halves_table(res: Mapping[str, Any], methods: Sequence[str], metrics: Sequence[str] = ("MRR", "HR@5")):
    """One corpus's methods × (metric, half) means as a DataFrame (dev, test, all)."""
    import pandas as pd

    m = res["metrics"]
    cols = pd.MultiIndex.from_tuples([(k, h) for k in metrics for h in ("dev", "test", "all")])
    data = [[m[x][h][k] for k in metrics for h in ("dev", "test", "all")] for x in methods if x in m]
    return pd.DataFrame(data, index=[x for x in methods if x in m], columns=cols)


def tests_table(rows: Sequence[Mapping[str, Any]], metrics: Sequence[str] = ("MRR", "HR@5")):
    """Paired tests of ``aethel-hybrid`` against each baseline (rows of :func:`~aethel_lite.studies.beyond.beyond_study`)."""
    import pandas as pd

    out = [
        {
            "half": t["half"],
            "vs": t["b"],
            "metric": t["metric"],
            "n": t["n"],
            "hybrid": t["mean_a"],
            "baseline": t["mean_b"],
            "difference": t["diff"],
            "95% CI": format_interval(t["ci_low"], t["ci_high"], signed=True),
            "p (bootstrap)": t["p_bootstrap"],
            "CI excludes 0": "yes" if t["excludes_zero"] else "no",
        }
        for t in rows
        if t["metric"] in metrics
    ]
    return pd.DataFrame(out)


def ablation_table(datasets: Mapping[str, Any], metric: str = "MRR", half: str = "all"):
    """Each hybrid variant's ``metric`` on ``half`` of every corpus, and its change against the full method."""
    import pandas as pd

    names = ["aethel-hybrid", *VARIANTS]
    data = {}
    for corpus, res in datasets.items():
        m = res["metrics"]
        full = m["aethel-hybrid"][half][metric]
        data[(corpus, metric)] = [m[n][half][metric] if n in m else None for n in names]
        data[(corpus, "Δ")] = [
            None if n not in m or n == "aethel-hybrid" else round(m[n][half][metric] - full, 3) for n in names
        ]
    df = pd.DataFrame(data, index=names)
    df.insert(0, "variant (component switched off)", [ABLATION_LABELS[n] for n in names])
    return df


def ablation_columns(datasets: Mapping[str, Any], metric: str = "MRR", half: str = "all"):
    """:func:`ablation_table` narrowed to the text column: one column per corpus whose cell is the
    variant's ``metric`` and, in brackets, its change against the full method (``0.512 (−0.031)``)."""
    import pandas as pd

    wide = ablation_table(datasets, metric, half)
    out = pd.DataFrame({"variant (component switched off)": wide.iloc[:, 0]})
    for corpus in datasets:
        out[corpus] = [
            "–"
            if value is None or pd.isna(value)
            else f"{value:.3f}"
            if delta is None or pd.isna(delta)
            else f"{value:.3f} ({delta:+.3f})".replace("-", "−")
            for value, delta in zip(wide[(corpus, metric)], wide[(corpus, "Δ")])
        ]
    return out.reset_index(drop=True)


def difference_figure(
    datasets: Mapping[str, Any],
    metric: str = "MRR",
    baselines: Sequence[str] = ("bm25", "dense", "dense-max", "rrf-dense"),
):
    """Forest plot: ``aethel-hybrid`` − each baseline on ``metric``, paired-bootstrap 95% CI, test half and all."""
    import matplotlib.pyplot as plt

    names = list(datasets)
    fig, axes = plt.subplots(1, len(names), figsize=(3.6 * len(names), 2.8), sharex=False, squeeze=False)
    for ax, corpus in zip(axes[0], names):
        rows = datasets[corpus]["tests"]
        labels = []
        for b in baselines:
            for half, colour in (("test", "tab:blue"), ("all", "tab:orange")):
                t = _test_row(rows, half, b, metric)
                if t is None:
                    continue
                ax.errorbar(
                    t["diff"],
                    len(labels),
                    xerr=[[t["diff"] - t["ci_low"]], [t["ci_high"] - t["diff"]]],
                    fmt="o",
                    color=colour,
                    capsize=3,
                    label=half if b == baselines[0] else None,
                )
                labels.append(f"vs {b} ({half})")
        ax.axvline(0, color="grey", lw=1)
        ax.set_yticks(range(len(labels)))
        ax.set_yticklabels(labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_title(corpus, fontsize=9)
        ax.set_xlabel(f"{metric} difference")
    axes[0][0].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def what_did_not_work(saved: Mapping[str, Any], metric: str = "MRR") -> list[str]:
    """Generated bullets: components whose removal did not lower ``metric`` (all questions), per corpus,
    and how the graph-only and text-only variants compare with the full method."""
    out = []
    for corpus, res in saved.get("datasets", {}).items():
        m = res["metrics"]
        full = m["aethel-hybrid"]["all"][metric]
        useless = [
            (n, m[n]["all"][metric] - full)
            for n in VARIANTS
            if n in m and n not in _NOT_ONE_OFF and m[n]["all"][metric] >= full
        ]
        if useless:
            out.append(
                f"* `{corpus}`: {metric} did not drop (full method {full:.3f}) with "
                + "; ".join(f"{ABLATION_LABELS[n]} ({d:+.3f})" for n, d in useless)
                + " — those components did not pay their way here."
            )
        if "aethel-hybrid-ppr-only" in m:
            d = m["aethel-hybrid-ppr-only"]["all"][metric] - full
            out.append(
                f"* `{corpus}`: ranking by PageRank alone, with the same seeds: {metric} "
                f"{m['aethel-hybrid-ppr-only']['all'][metric]:.3f} ({d:+.3f} against the fused ranking)."
            )
        if "aethel-hybrid-no-graph" in m:
            d = full - m["aethel-hybrid-no-graph"]["all"][metric]
            out.append(
                f"* `{corpus}`: the graph's own contribution (full method − the same BM25, dense and heading "
                f"terms without the PageRank terms): {d:+.3f} {metric}."
            )
    return out


def tuning_sentences(
    tuning: Mapping[str, Any], saved: Mapping[str, Any] | None = None, top: int = 5
) -> list[str]:
    """Generated bullets: how flat the development objective is near its best, and the chosen
    setting's development MRR re-scored in this build beside the tuning record's.

    ``tuning``: the whole record (:func:`~aethel_lite.studies.tuning.read_tuning`); ``saved``: the study's result file.
    """
    rows = sorted(tuning.get("rows", []), key=lambda r: -r["dev_mrr"])[: max(int(top), 1)]
    out = []
    if len(rows) > 1:
        corpora = sorted(rows[0]["per_dataset"])
        spans = {c: [r["per_dataset"][c]["MRR"] for r in rows] for c in corpora}
        wide = max(corpora, key=lambda c: (max(spans[c]) - min(spans[c]), c))
        out.append(
            f"* The development objective is flat near its best: the {len(rows)} best of the {len(tuning['rows'])} seed "
            f"settings (each with its best ranking weights) score {rows[-1]['dev_mrr']:.4f}–{rows[0]['dev_mrr']:.4f} "
            "mean development MRR, while their per-corpus development MRR ranges "
            + ", ".join(f"`{c}` {min(v):.3f}–{max(v):.3f}" for c, v in spans.items())
            + f". Between settings this close the choice trades one corpus against another (widest: `{wide}`); "
            "a different tie-break or a few questions more would pick another of them."
        )
    best = (tuning.get("best") or {}).get("per_dataset", {})
    tuned_n = tuning.get("datasets", {})
    now = {}
    for c, r in ((saved or {}).get("datasets") or {}).items():
        mrr = ((r.get("metrics", {}).get("aethel-hybrid") or {}).get("dev") or {}).get("MRR")
        # comparable only on the same development questions (not a quick build's few, not an empty half)
        if mrr is not None and len(r.get("halves", {}).get("dev", [])) == tuned_n.get(c):
            now[c] = mrr
    shared = [c for c in best if c in now]
    if shared:
        out.append(
            "* The chosen setting's development MRR, in the tuning record → re-scored in this build: "
            + ", ".join(f"`{c}` {best[c]['MRR']:.3f} → {now[c]:.3f}" for c in shared)
            + f" (the record's MiniLM precision: {tuning.get('precision', 'not recorded')}"
            + (
                "; identical)."
                if all(abs(best[c]["MRR"] - now[c]) < 5e-7 for c in shared)
                else "; they differ where this build's dense scores differ from the tuning's in their last bits "
                "and near-tied ranks move)."
            )
        )
    return out


def _rank_formula(rank_weights: Mapping[str, float]) -> str:
    names = {
        "document": "its document node's PageRank",
        "dense": "the dense cosine",
        "lexical": "BM25",
        "ppr": "its own PageRank",
        "heading": "the dense cosine with its heading",
    }
    live = {t: float(w) for t, w in rank_weights.items() if w > 0}
    total = sum(live.values())
    return " + ".join(
        f"{w / total:.2f} × {names[t]}" for t, w in sorted(live.items(), key=lambda kv: (-kv[1], kv[0]))
    )


def composition(saved: Mapping[str, Any], metric: str = "MRR", half: str = "all") -> list[str]:
    r"""Generated bullets: what the tuned ``aethel-hybrid`` is made of, and how much of its gain is the graph's.

    The tuned ranking weights (``saved["tuning"]``) are stated as a formula. Per corpus, the gain
    of ``aethel-hybrid`` over the better of BM25 and dense retrieval on ``metric`` is split into

    .. math::

        \underbrace{r_\text{hybrid} - r_\text{no-graph}}_\text{graph}
        + \underbrace{r_\text{no-graph} - \max(r_\text{bm25}, r_\text{dense})}_\text{fusion of the text terms},

    where ``aethel-hybrid-no-graph`` is the same weighted sum of the min–max normalised text terms
    (BM25, dense, heading) without the PageRank terms (weights renormalised). The graph part, and
    the parts of the metadata nodes and of the heading term, are given with their paired-bootstrap
    95% CI (``components`` of :func:`~aethel_lite.studies.beyond.beyond_study`); ``aethel-hybrid-v1`` is set beside them.

    Parameters
    ----------
    saved : mapping
        The ``beyond`` result as read back from its file.
    metric, half : str

    Returns
    -------
    list of str
        Markdown bullets.

    References
    ----------
    Gutiérrez, B. J. et al. (2025). From RAG to memory: non-parametric continual learning for
    large language models (HippoRAG 2). arXiv:2502.14802.
    """
    out = []
    rw = ((saved.get("tuning") or {}).get("best") or {}).get("setting", {}).get("rank_weights")
    if rw:
        zero = [t for t in RANK_TERMS if float(rw.get(t, 0.0)) == 0.0]
        names = {
            "ppr": "the passage's own PageRank",
            "document": "the document node's PageRank",
            "lexical": "BM25",
            "dense": "the dense cosine",
            "heading": "the heading's dense cosine",
        }
        out.append(
            f"* **What it ranks by.** The weights chosen on the development halves rank a passage by "
            f"{_rank_formula(rw)} (each min–max normalised over the corpus)"
            + (f"; {' and '.join(names[t] for t in zero)} got weight 0" if zero else "")
            + ". "
            + (
                "The graph therefore enters the ranking only through the PageRank of the passage's document "
                "node — the mass that the entity, metadata and passage seeds bring to the filing; the walk "
                "itself ranks no passage. "
                if "ppr" in zero and float(rw.get("document", 0)) > 0
                else ""
            )
            + "`aethel-hybrid-no-graph` is the same weighted sum of the text terms (BM25, dense, heading) "
            "with the graph term dropped."
        )
    for corpus, res in (saved.get("datasets") or {}).items():
        m = res["metrics"]
        if "aethel-hybrid-no-graph" not in m or not all(b in m for b in TARGET_BASELINES):
            continue
        full = m["aethel-hybrid"][half][metric]
        fused = m["aethel-hybrid-no-graph"][half][metric]
        best = max(TARGET_BASELINES, key=lambda b: (m[b][half][metric], b))
        single = m[best][half][metric]
        rows = {t["b"]: t for t in res.get("components", []) if t["half"] == half and t["metric"] == metric}

        def ci(name: str) -> str:
            t = rows.get(name)  # noqa: B023
            return " " + format_interval(t["ci_low"], t["ci_high"], signed=True) if t else ""

        text = (
            f"* `{corpus}` ({half} questions, {metric}): `aethel-hybrid` {full:.3f}, the better of BM25 and dense "
            f"(`{best}`) {single:.3f}, so a gain of {full - single:+.3f}; of it, the fusion of the text terms "
            f"(BM25, dense, heading) without a graph brings {fused - single:+.3f} and the graph "
            f"{full - fused:+.3f}{ci('aethel-hybrid-no-graph')}."
        )
        if "aethel-hybrid-no-metadata" in m:
            text += (
                f" Without metadata nodes (company, period, filing type) the hybrid scores "
                f"{m['aethel-hybrid-no-metadata'][half][metric]:.3f} (the metadata nodes' part: "
                f"{full - m['aethel-hybrid-no-metadata'][half][metric]:+.3f}{ci('aethel-hybrid-no-metadata')})."
            )
        if "aethel-hybrid-no-heading" in m:
            text += (
                f" Without the heading term: {m['aethel-hybrid-no-heading'][half][metric]:.3f} (the heading's part: "
                f"{full - m['aethel-hybrid-no-heading'][half][metric]:+.3f}{ci('aethel-hybrid-no-heading')})."
            )
        if "aethel-hybrid-v1" in m:
            text += (
                f" The earlier setting, tuned before the heading term existed (`aethel-hybrid-v1`): "
                f"{m['aethel-hybrid-v1'][half][metric]:.3f}."
            )
        out.append(text)
    return out


def _hybrid_rows(saved: Mapping[str, Any], metric: str, half: str):
    """Per corpus of a ``beyond`` result: its block, the questions of ``half``, the better baseline on that half,
    and the paired test of ``aethel-hybrid`` against it (None if not run)."""
    for name, r in saved.get("datasets", {}).items():
        m = r["metrics"]
        if (
            "aethel-hybrid" not in m
            or not all(b in m for b in TARGET_BASELINES)
            or m["aethel-hybrid"][half][metric] is None
        ):
            continue
        qids = list(r["per_query_metrics"]["aethel-hybrid"]) if half == "all" else r["halves"][half]
        better = max(TARGET_BASELINES, key=lambda b: (m[b][half][metric], b))
        test = next(
            (
                t
                for t in r["tests"]
                if (t["half"], t["a"], t["b"], t["metric"]) == (half, "aethel-hybrid", better, metric)
            ),
            None,
        )
        yield name, r, qids, better, test


def hybrid_headline(
    saved: Mapping[str, Any],
    metric: str = "MRR",
    half: str = "test",
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
):
    """``aethel-hybrid`` against BM25 and dense retrieval on the ``half`` of each corpus no weight was chosen on
    (``results/beyond.json``), with 95% CIs; the verdict adds the closed pools and our targets.

    Returns ``(DataFrame, str)``: one row per corpus, and the verdict (Markdown)."""
    rows, said = [], []
    for name, r, qids, better, t in _hybrid_rows(saved, metric, half):
        row = {"data set": name, f"{half} questions": len(qids)}
        for method in ("aethel-hybrid", *TARGET_BASELINES):
            pq = r["per_query_metrics"][method]
            values = [pq[q][metric] for q in qids if q in pq]
            ci = bootstrap_ci(values, n_resamples=n_resamples, seed=seed) if len(values) >= 2 else None
            row[f"{method} [95% CI]"] = (
                format_estimate(ci) if ci else f"{r['metrics'][method][half][metric]:.3f}"
            )
        row["hybrid − better [95% CI]"] = f"{format_estimate(t, signed=True)} ({better})" if t else ""
        rows.append(row)
        if t:
            said.append(f"on {name} ({t['n']} questions) {format_difference(t)}")
    verdict = (
        f"On the {half} halves — questions no weight was chosen on — `aethel-hybrid` minus the better of BM25 and "
        f"dense retrieval on {metric}: " + "; ".join(said) + "."
        if said
        else f"No corpus has a {half} half large enough for a paired test of `aethel-hybrid` in this build."
    )
    closed = saved.get("closed") or {}
    if closed:
        ok = [n for n, c in closed.items() if c["passes"]]
        worse = [n for n in closed if n not in ok]
        verdict += (
            " In the closed pools it is not worse than `aethel-bct` beyond the interval"
            + (f" on {', '.join(ok)}" if ok else " on none")
            + (f", and worse on {', '.join(worse)}" if worse else "")
            + "."
        )
    run = [x for x in targets(saved) if x["met"] is not None]
    if run:
        verdict += f" {sum(x['met'] for x in run)} of our {len(run)} targets measured here are met."
    if saved.get("synthetic_only"):
        verdict = (
            "Only the synthetic corpus ran (no real data was found): these numbers are not about filings. "
            + verdict
        )
    import pandas as pd

    return pd.DataFrame(rows), verdict


def hybrid_takeaways(saved: Mapping[str, Any], metric: str = "MRR") -> str:
    """The hybrid chapter's closing bullets: per corpus the test-half gain over the better baseline and the
    graph's part of it, each with its paired-bootstrap 95% CI, then our targets."""
    out = []
    if saved.get("synthetic_only"):
        out.append("*No real data was found: every number here comes from the synthetic corpus.*")
    for name, r, qids, better, t in _hybrid_rows(saved, metric, "test"):
        m = r["metrics"]
        text = (
            f"* **{name}**, {metric} on the {len(qids)} test questions: `aethel-hybrid` {m['aethel-hybrid']['test'][metric]:.3f}, "
            f"`{better}` {m[better]['test'][metric]:.3f}"
        )
        text += f", difference {format_difference(t)}" if t else " (too few questions for a paired test)"
        g = next(
            (
                c
                for c in r.get("components", [])
                if (c["half"], c["b"], c["metric"]) == ("test", "aethel-hybrid-no-graph", metric)
            ),
            None,
        )
        if g:
            text += (
                ". The graph's part, against the same text terms without it (`aethel-hybrid-no-graph`): "
                + format_difference(g)
            )
        out.append(text + ".")
    run = [x for x in targets(saved) if x["met"] is not None]
    failed = [x for x in run if not x["met"]]
    if run:
        out.append(
            f"* Our targets: {len(run) - len(failed)} of {len(run)} met"
            + (
                " — not met: " + "; ".join(f"{x['target']} (`{x['data set']}`)" for x in failed)
                if failed
                else ""
            )
            + "."
        )
    return "\n".join(out)
