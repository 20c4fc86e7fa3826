"""Tables and figures for the book, built only from result files (never typed by hand)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.bct import MODES
from ..evaluation.runner import paired_comparisons
from ..evaluation.stats import format_difference, format_estimate, format_interval
from ..studies.paper import PAPER_CROSSOVERS, PAPER_DIFFERENCES, PAPER_ROWS, PAPER_TESTS, paper_rows

__all__ = [
    "Table",
    "table",
    "summary_table",
    "metrics_table",
    "paper_comparison",
    "comparisons_table",
    "ablation_figure",
    "ci_table",
    "group_table",
    "ci_figure",
    "verdict_table",
    "reliance_table",
    "scaling_figure",
    "cost_table",
    "example_markdown",
]


# ------------------------------------------------------------------------------- tables that fit
def _cell(value: Any) -> Any:
    """A dict or list cell in words ("2: 145 · 3: 32"), so no column holds a raw Python object."""
    if isinstance(value, Mapping):
        return " · ".join(f"{k}: {v}" for k, v in value.items())
    if isinstance(value, (list, tuple, set)):
        return ", ".join(str(v) for v in value)
    return "" if value is None else value


_CI_HTML = re.compile(r"(\d) \[([-+]?\d[\d.]*), ([-+]?\d[\d.]*)\]")


class Table:
    """A table as the book shows it (made by :func:`table`): HTML in a notebook, aligned text elsewhere;
    ``frame`` is the DataFrame shown."""

    def __init__(self, frame, decimals: int = 3):
        self.frame, self.decimals = frame, decimals

    def _format(self) -> dict:
        return {"index": False, "na_rep": "", "float_format": f"{{:.{self.decimals}f}}".format}

    def _repr_html_(self) -> str:
        html = self.frame.to_html(border=0, classes="dataframe aethel-table", escape=True, **self._format())
        html = _CI_HTML.sub(r"\1 [\2,&nbsp;\3]", html)  # "0.905 [0.86, 0.94]" breaks before the interval only
        # a long word (a path, an id) may break rather than push the table past the column
        return html.replace("<table ", '<table style="overflow-wrap: break-word" ', 1)

    def __repr__(self) -> str:
        return self.frame.to_string(**self._format())


def table(df, *, decimals: int = 3, transpose: bool = False) -> Table:
    """``df`` ready to read: a named or non-default index becomes an ordinary first column (pandas'
    0, 1, 2 ... is dropped), dict and list cells are flattened to words, floats get ``decimals``
    places; ``transpose`` turns a wide one-row-per-thing table into one row per field (the first
    column's values become the headers)."""
    import pandas as pd

    if transpose:
        first = df.index if df.index.name else df.iloc[:, 0]
        body = df if df.index.name else df.iloc[:, 1:]
        df = pd.DataFrame(body.to_numpy().T, index=body.columns, columns=list(first))
        df.index.name = ""
    if isinstance(df.columns, pd.MultiIndex):  # ("MRR", "dev") -> "MRR: dev": one header row
        df = df.set_axis([": ".join(str(part) for part in col if part != "") for col in df.columns], axis=1)
    named = [n for n in df.index.names if n]
    if named:  # a named index level (method, data set, ...) is a column like the others
        df = df.reset_index(level=named)
    if not isinstance(df.index, pd.RangeIndex):  # what is left: pandas' counters (dropped) or unnamed labels
        integral = pd.api.types.is_integer_dtype(df.index.dtype)
        df = df.reset_index(drop=integral) if integral else df.rename_axis("").reset_index()
    df = df.apply(lambda col: col.map(_cell)) if len(df) else df
    df.columns.name = None  # the name of a transposed frame's columns would print as an empty column
    return Table(df, decimals)


def dataframe(rows, index: str | None = None):
    """``rows`` (dicts) as a pandas DataFrame, indexed by its column ``index`` when given."""
    import pandas as pd

    df = pd.DataFrame(rows)
    return df if index is None else df.set_index(index)


SUMMARY_LABELS = {
    "n_passages": "passages",
    "n_documents": "documents",
    "n_queries": "questions",
    "hops": "questions by hop count",
    "mean_gold": "gold passages per question",
    "mean_passage_chars": "mean passage length (characters)",
    "mean_passage_words": "mean passage length (words)",
    "closed_pool": "questions with a closed pool",
}


def summary_table(summaries: Sequence[Mapping[str, Any]]) -> Table:
    """Data-set summaries (:func:`aethel_lite.data.summary.dataset_summary`), one column per data set and
    one row per field in words, so that a long list of fields never runs past the column."""
    fields = [k for k in summaries[0] if k != "name"] if summaries else []
    rows = [
        {
            "": SUMMARY_LABELS.get(k, k.replace("_", " ")),
            **{s.get("name", str(i)): _cell(s.get(k)) for i, s in enumerate(summaries)},
        }
        for k in fields
    ]
    return Table(dataframe(rows), decimals=2)


def metrics_table(block: Mapping[str, Mapping[str, Any]]):
    """A pandas DataFrame of mean metrics: one row per method (the ``methods`` block of a result)."""
    per_question = ("per_query", "per_query_metrics")
    return dataframe(
        [
            {"method": name, **{m: v for m, v in entry.items() if m not in per_question}}
            for name, entry in block.items()
        ],
        "method",
    )


def paper_comparison(
    results: Mapping[str, Mapping[str, Any]],
    rows: Sequence[Mapping[str, Any]],
    synthetic: Sequence[str] | Mapping[str, bool] = (),
):
    """The paper's numbers beside ours.

    Parameters
    ----------
    results : mapping
        data-set name → ``methods`` block of a result file.
    rows : sequence of dict
        :data:`aethel_lite.studies.paper.PAPER_ROWS` entries.
    synthetic : sequence of str, or mapping str → bool
        Data sets on which the synthetic corpus stood in for missing real data (a result file's
        ``synthetic_fallback``); their ``ours`` stays empty.

    Returns
    -------
    pandas.DataFrame
        Columns: data set, paper's method, metric, paper, ours (our method), ours − paper, note.
        ``ours`` is empty when that data set or method was not run, or ran on synthetic data.
    """
    stand_ins = {n for n, v in synthetic.items() if v} if isinstance(synthetic, Mapping) else set(synthetic)
    out = []
    for r in rows:
        ours = (
            None
            if r["dataset"] in stand_ins
            else results.get(r["dataset"], {}).get(r["ours"], {}).get(r["metric"])
        )
        note = r["note"]
        if r["dataset"] in stand_ins:
            note = "not comparable: synthetic corpus instead of the real data" + (f"; {note}" if note else "")
        out.append(
            {
                "data set": r["dataset"],
                "paper's method": r["paper_method"],
                "metric": r["metric"],
                "paper": r["value"],
                "ours": ours,
                "our method": r["ours"],
                "ours − paper": None if ours is None else round(ours - r["value"], 3),
                "note": note,
            }
        )
    return dataframe(out)


def comparisons_table(rows: Sequence[Mapping[str, Any]]):
    """Paired tests (rows of :func:`aethel_lite.evaluation.runner.paired_comparisons`) as a DataFrame."""
    df = dataframe(list(rows))
    if df.empty:
        return df
    df["95% CI"] = [format_interval(lo, hi, signed=True) for lo, hi in zip(df["ci_low"], df["ci_high"])]
    df["CI excludes 0"] = (df["ci_low"] > 0) | (df["ci_high"] < 0)
    return df[
        [
            "a",
            "b",
            "metric",
            "n",
            "mean_a",
            "mean_b",
            "diff",
            "95% CI",
            "CI excludes 0",
            "p_bootstrap",
            "p_randomization",
        ]
    ]


def ablation_figure(
    ablation: Mapping[str, Mapping[str, float]],
    metrics: Sequence[str] = ("HR@1", "HR@5", "AllSupport@5"),
    title: str = "",
):
    """Grouped bars: one group per BCT mode, one bar per metric. Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt
    import numpy as np

    # canonical order (result files store keys sorted alphabetically)
    modes = [m for m in MODES if m in ablation] + sorted(m for m in ablation if m not in MODES)
    x = np.arange(len(modes))
    width = 0.8 / len(metrics)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for i, m in enumerate(metrics):
        vals = [ablation[mode][m] for mode in modes]
        bars = ax.bar(x + (i - (len(metrics) - 1) / 2) * width, vals, width, label=m)
        ax.bar_label(bars, fmt="%.2f", fontsize=8)
    ax.set_xticks(x, [f"BCT: {m}" for m in modes])
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("seed expansion (BCT mode)")
    ax.set_ylabel("mean over questions")
    if title:
        ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------- open corpus and scaling
def ci_table(ci: Mapping[str, Mapping[str, Any]], metrics: Sequence[str]):
    """Methods × metrics over all questions, each cell ``mean [95% CI]``, from the ``ci`` block of an open-corpus
    result."""
    return dataframe(
        [
            {
                "method": method,
                **{
                    m: format_estimate(entry["all"][m], interval_decimals=3)
                    for m in metrics
                    if m in entry["all"]
                },
            }
            for method, entry in ci.items()
        ],
        "method",
    )


def group_table(ci: Mapping[str, Mapping[str, Any]], metric: str):
    """Methods × question groups for one metric (``mean [CI]``), with the group sizes in the header."""
    groups = sorted({g for entry in ci.values() for g in entry["groups"]})
    rows = []
    for method, entry in ci.items():
        row = {"method": method}
        for g in groups:
            cell = entry["groups"].get(g, {}).get(metric)
            if cell is not None:
                row[f"{g} (n={cell['n']})"] = format_estimate(cell, interval_decimals=3)
        rows.append(row)
    return dataframe(rows, "method")


def ci_figure(
    results: Mapping[str, Mapping[str, Any]],
    metric: str = "HR@5",
    methods: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
):
    """One panel per data set: each method's mean ``metric`` as a dot with its 95% CI as a bar.

    The panels stand in rows of at most three, so that each stays readable in the text column.
    """
    import matplotlib.pyplot as plt

    names = list(results)
    ncols = min(3, len(names))
    nrows = -(-len(names) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 3.2 * nrows), sharex=True, squeeze=False)
    for ax in axes.flat[len(names) :]:
        ax.set_visible(False)
    for ax, name in zip(axes.flat, names):
        ci = results[name]["ci"]
        ms = [m for m in (methods or ci) if m in ci]
        means = [ci[m]["all"][metric]["mean"] for m in ms]
        lo = [means[i] - ci[m]["all"][metric]["ci_low"] for i, m in enumerate(ms)]
        hi = [ci[m]["all"][metric]["ci_high"] - means[i] for i, m in enumerate(ms)]
        y = list(range(len(ms)))[::-1]
        ax.errorbar(means, y, xerr=[lo, hi], fmt="o", capsize=3)
        ax.set_yticks(y, ms, fontsize=8)
        ax.set_xlim(0, 1)
        ax.set_xlabel(f"{metric} (95% CI)")
        ax.set_title((labels or {}).get(name, name), fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def verdict_table(verdicts: Sequence[Mapping[str, Any]]):
    """The paper's open-corpus numbers beside ours with the generated verdict (rows of
    :func:`aethel_lite.studies.open_corpus.paper_verdicts`); ``ours`` is empty when not comparable."""
    rows = []
    for v in verdicts:  # a "not comparable" number (synthetic stand-in) is not set beside the paper's
        ours = (
            ""
            if v["ours"] is None or v["verdict"] == "not comparable"
            else format_estimate(v["ours"], v["ci_low"], v["ci_high"], interval_decimals=3)
        )
        rows.append(
            {
                "paper's method": v["paper_method"],
                "metric": v["metric"] + (" (multi-hop)" if v["section"].endswith("multihop") else ""),
                "paper": v["paper"],
                "our data set": v["dataset"],
                "ours [95% CI]": ours,
                "verdict": v["verdict"],
                "why": v["why"],
            }
        )
    return dataframe(rows)


def reliance_table(results: Mapping[str, Mapping[str, Any]]):
    """Per data set and graph method: share of questions on the BM25 fallback, share of top-5 slots
    ordered by BM25, and HR@5 of the method."""
    return dataframe(
        [
            {
                "data set": name,
                "method": method,
                "questions on BM25 fallback": rel["fallback_share"],
                "top-5 slots ordered by BM25": rel["bm25_top5_share"],
                "HR@5": res["methods"][method]["HR@5"],
            }
            for name, res in results.items()
            for method, rel in res.get("reliance", {}).items()
        ]
    )


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
    return dataframe(
        [
            {"corpus": name, "size": t["size"], "fit seconds": t["fit_seconds"], "peak MiB": t["peak_mib"]}
            for name, res in runs.items()
            for t in res.get("timing", {}).get(method, [])
        ]
    )


def example_markdown(ex: Mapping[str, Any]) -> str:
    """A worked example (:func:`aethel_lite.studies.analysis.worked_example`) as Markdown: question → seeds →
    where the mass went → top hits → the gold passage → the measured reason."""

    def pct(x):
        return "n/a" if x is None else f"{100 * x:.1f}%"

    lines = [f"**{ex['question']}** (`{ex['qid']}`)", ""]
    if ex["seeds"]:
        seeds = "; ".join(
            f"`{s['entity']}` ({s['degree']} passages in {s['n_documents']} documents, found by "
            f"{s['found_by']}{', on a gold passage' if s['on_gold'] else ''})"
            for s in ex["seeds"]
        )
        lines.append(f"* **Seeds:** {seeds}.")
    else:
        lines.append(
            "* **Seeds:** none of the question's words is an entity in the graph"
            + (" — BM25-seeded teleport (fallback)." if ex["fallback"] else ".")
        )
    mass = ex["mass"]
    top = ", ".join(f"`{e['entity']}` {pct(e['mass'])}" for e in mass["top_entities"][:5])
    lines.append(
        f"* **Mass:** {pct(mass['entity_share'])} on entity nodes, {pct(mass['passage_share'])} on passages; "
        f"top entities {top}; the gold passages hold {pct(mass['gold_share'])} of the passage mass, the gold's "
        f"documents {pct(mass['gold_doc_share'])}. {ex['n_tied_top']} passages tie at the top score."
    )
    hits = "; ".join(
        f"{h['rank']}. `{h['pid']}`" + (" (BM25 order)" if not h["reached"] else "") for h in ex["hits"]
    )
    lines.append(f"* **Top hits:** {hits}.")
    for g in ex["gold"]:
        lines.append(
            f"* **Gold** `{g['pid']}`: rank {g['rank'] if g['rank'] is not None else 'not ranked'}, "
            f"{'reached' if g['reached'] else 'not reached'} by PageRank; seed entities on it: "
            f"{', '.join(f'`{e}`' for e in g['seed_entities']) or 'none'}; {len(g['entities'])} entities in all."
        )
    lines.append(f"* **Why:** {ex['reason']}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------- closed pool, in words
def closed_pool_reading(saved: Mapping[str, Any], *, n_resamples: int = 10_000, seed: int = 0) -> str:
    r"""The closed-pool chapter's "Reading the numbers", every number and every direction read from its result file.

    Per data set run on real data: the NER3 graph's HR@5 against the paper's and the baselines; AllSupport@5
    of the graph retrievers against BM25 and dense retrieval, with the chapter's paired tests; and what BCT
    (``aethel-bct`` against ``aethel-ner3``) does to HR@1, HR@5 and AllSupport@5, each change as a paired
    bootstrap difference :math:`\bar d = \frac1n \sum_i (a_i - b_i)` with its 95% percentile CI and in
    questions (:math:`n \bar d`), against the paper's HR@1 change.

    Parameters
    ----------
    saved : mapping
        ``results/closed_pool.json``.
    n_resamples, seed : int
        Bootstrap of the BCT differences.

    Returns
    -------
    str
        Markdown bullets.
    """
    out = []
    limit = saved.get("parameters", {}).get("limit")
    if limit:
        out.append(
            f"*This build ran on the first {limit} questions of each sample only (`limit`); the numbers below are "
            "those of that subset.*"
        )
    for name, block in saved["methods"].items():
        if saved.get("synthetic_fallback", {}).get(name):
            out.append(
                f"* **{name}**: no real data — the synthetic corpus stood in, so nothing here speaks to the paper's "
                f"{name} numbers."
            )
            continue
        n = saved["datasets"][name]["n_queries"]
        hr5 = {m: e["HR@5"] for m, e in block.items()}
        parts = []
        if "aethel-ner3" in block:
            graph = hr5["aethel-ner3"]
            paper = next(
                (
                    r["value"]
                    for r in paper_rows("closed_pool", name)
                    if r["ours"] == "aethel-ner3" and r["metric"] == "HR@5"
                ),
                None,
            )
            rel = (
                ""
                if paper is None
                else (
                    f" against the paper's {paper:.3f}"
                    + (", above it" if graph > paper else ", below it" if graph < paper else "")
                )
            )
            better = sorted(
                (m for m in hr5 if m != "aethel-ner3" and not m.startswith("aethel-") and hr5[m] >= graph),
                key=lambda m: -hr5[m],
            )
            parts.append(
                f"HR@5 of the NER3 graph is {graph:.3f}{rel}; "
                + (
                    "; ".join(f"`{m}` reaches {hr5[m]:.3f}" for m in better)
                    + " — as good or better at putting one "
                    "supporting paragraph in the top 5"
                    if better
                    else "no baseline reaches it"
                )
            )
        out.append(f"* **{name}** ({n} questions): " + "; ".join(parts) + ".")
        allsup = {m: e["AllSupport@5"] for m, e in block.items() if "AllSupport@5" in e}
        graphs = sorted((m for m in allsup if m.startswith("aethel-")), key=lambda m: -allsup[m])
        base = [m for m in ("bm25", "dense") if m in allsup]
        if graphs and base:
            beats = {b: [g for g in graphs if allsup[g] > allsup[b]] for b in base}
            words = "; ".join(
                f"above `{b}` ({allsup[b]:.3f}): " + (", ".join(f"`{g}`" for g in beats[b]) or "none of them")
                for b in base
            )
            tests = [
                t
                for t in saved.get("paired_tests", {}).get(name, [])
                if t["metric"] == "AllSupport@5" and t["b"] in base
            ]
            tested = "; ".join(
                f"`{t['a']}` − `{t['b']}` {format_difference(t, interval='the CI', interval_decimals=3)}"
                for t in tests
            )
            out.append(
                "  AllSupport@5 (every supporting paragraph in the top 5): "
                + ", ".join(f"`{g}` {allsup[g]:.3f}" for g in graphs)
                + f"; {words}."
                + (f" Paired tests: {tested}." if tested else "")
            )
        if "aethel-bct" in block and "aethel-ner3" in block:
            metrics = [m for m in ("HR@1", "HR@5", "AllSupport@5") if m in block["aethel-bct"]]
            rows = paired_comparisons(
                block, [("aethel-bct", "aethel-ner3")], metrics, n_resamples=n_resamples, seed=seed
            )
            said = []
            for t in rows:
                verb = "raises" if t["diff"] > 0 else "lowers" if t["diff"] < 0 else "leaves unchanged"
                questions = round(abs(t["diff"]) * t["n"])
                said.append(
                    f"{verb} {t['metric']} {t['mean_b']:.3f} → {t['mean_a']:.3f} ({format_difference(t, interval='the CI', interval_decimals=3)}; "
                    f"{questions} question{'s' if questions != 1 else ''} of {t['n']})"
                )
            paper = next(
                (d for d in PAPER_DIFFERENCES if d["dataset"] == name and d["metric"] == "HR@1"), None
            )
            hr1 = next((t for t in rows if t["metric"] == "HR@1"), None)
            cmp = ""
            if paper is not None and hr1 is not None:
                same = (hr1["diff"] < 0) == (paper["value"] < 0) and hr1["diff"] != 0
                inside = hr1["ci_low"] <= paper["value"] <= hr1["ci_high"]
                cmp = (
                    f" The paper reports an HR@1 change of {paper['value']:+.3f} on {name}: ours goes "
                    + ("the same way" if same else "the other way" if hr1["diff"] != 0 else "nowhere")
                    + (
                        ", and the paper's change lies inside our CI."
                        if inside
                        else ", and the paper's change lies outside our CI."
                    )
                )
            elif hr1 is not None:
                cmp = " The paper reports no BCT ablation on this data set."
            out.append(
                "  BCT (`aethel-bct` against `aethel-ner3`, same questions) " + "; ".join(said) + "." + cmp
            )
    return "\n".join(out)


def paper_markdown(*sections: str) -> str:
    """What :mod:`aethel_lite.studies.paper` holds for ``sections``, as Markdown bullets: one per (paper's
    method, metric) with its values by data set or corpus size, then the paper's differences, tests and crossings."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for r in [r for r in PAPER_ROWS if r["section"] in sections]:
        key = (
            r["paper_method"],
            r["metric"],
            "multi-hop questions" if r["section"].endswith("multihop") else "",
        )
        where = f"{r['size']:,} passages" if "size" in r else r["dataset"]
        groups.setdefault(key, []).append(f"{r['value']:.3f} ({where})")
    lines = [
        f"* {method}, {metric}{f' on {extra}' if extra else ''}: " + "; ".join(vals)
        for (method, metric, extra), vals in groups.items()
    ]
    lines += [
        f"* {d['note']} ({d['dataset']}): {d['value']:+.3f}"
        for d in PAPER_DIFFERENCES
        if d["section"] in sections
    ]
    lines += [
        f"* {t['a']} − {t['b']} on {t['metric']}: {t['mean_a'] - t['mean_b']:+.3f}, paired bootstrap 95% CI "
        f"{format_interval(t['ci_low'], t['ci_high'], signed=True)}, {t['n']} questions ({t['note']})"
        for t in PAPER_TESTS
        if t["section"] in sections
    ]
    if "scaling" in sections:
        lines += [f"* {c['note']}" for c in PAPER_CROSSOVERS.values()]
    return "\n".join(lines)
