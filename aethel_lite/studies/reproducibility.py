r"""The paper's numbers beside ours (``notebooks/90_reproducibility``): one row per number the paper
reports, our value with its 95% interval, and a verdict.

Everything here is read from the result files the other chapters write (``results/*.json``) and
from :mod:`aethel_lite.studies.paper`; nothing is computed from the data again except a paired
bootstrap over per-question metrics that a result file stores. A missing result file gives rows
that say so rather than an error. A verdict is *reproduced* (the paper's value lies inside our
interval, or a crossing is the same), *differs* (outside it) or *not comparable* (synthetic
stand-in, quick mode, not run).

Intervals are the percentile bootstrap intervals over questions of
:func:`aethel_lite.evaluation.stats.bootstrap_ci` (for a difference, over :math:`d_i = a_i - b_i`).
How each chapter was made (its run in this build, the commands that re-make it, the data files'
checksums) is the book's part: :mod:`aethel_lite.book.repro`.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd

from ..evaluation.runner import paired_comparisons
from ..evaluation.stats import format_estimate, format_interval
from ..io import read_json
from .open_corpus import metric_cis, paper_verdicts
from .paper import PAPER_CROSSOVERS, PAPER_DIFFERENCES, PAPER_ROWS, PAPER_TESTS
from .scaling import crossovers

__all__ = [
    "CHAPTERS",
    "VERDICTS",
    "PRIMARY_OPEN",
    "PRIMARY_SCALING",
    "load_results",
    "paper_table",
    "paper_number_count",
    "verdict_counts",
    "repro_headline",
    "takeaways",
    "paper_figure",
    "version_table",
    "ReproducibilityStudy",
    "reproducibility_study",
]

#: chapter notebook → the result files it writes and the data folders (under the data root) it reads.
CHAPTERS: dict[str, dict[str, tuple[str, ...]]] = {
    "00_quickstart": {"results": ("quickstart",), "data": ()},
    "01_graph_construction": {"results": ("graph_construction",), "data": ("musique",)},
    "10_closed_pool": {"results": ("closed_pool",), "data": ("musique", "2wikimultihopqa")},
    "20_open_corpus": {"results": ("open_corpus",), "data": ("financebench", "musique", "2wikimultihopqa")},
    "25_hybrid": {
        "results": ("beyond", "own_files", "comparisons"),
        "data": ("financebench", "musique", "2wikimultihopqa"),
    },
    "27_multihop": {"results": ("multihop",), "data": ("musique", "2wikimultihopqa")},
    "30_scaling": {"results": ("scaling",), "data": ("financebench", "musique", "2wikimultihopqa")},
    "40_provenance": {"results": ("provenance",), "data": ("musique", "2wikimultihopqa")},
    "50_swarm": {"results": ("swarm",), "data": ("financebench",)},
}

#: The open-corpus data set compared with the paper's private corpus, first present wins: the
#: FinanceBench pages sampled to the paper's 4,123 passages, then all pages, the chunks, the rest.
PRIMARY_OPEN = ("financebench-4123", "financebench", "financebench-chunk", "musique-open", "2wiki-open")
#: The scaling corpus compared with the paper's curve, first present wins.
PRIMARY_SCALING = ("financebench", "musique-open", "2wiki-open")

#: :func:`~aethel_lite.studies.open_corpus.paper_verdicts`'s verdicts → this chapter's words.
VERDICTS = {"inside our CI": "reproduced", "outside our CI": "differs", "not comparable": "not comparable"}
_QUICK = "quick mode: a few questions over a small sample of the corpus"


def load_results(results_dir: str | os.PathLike = "results") -> dict[str, dict | None]:
    """Every chapter's result file by stem (``closed_pool``, ...); None when missing (unreadable: ``DataError``)."""
    paths = {
        stem: Path(results_dir) / f"{stem}.json" for spec in CHAPTERS.values() for stem in spec["results"]
    }
    return {stem: read_json(path) if path.exists() else None for stem, path in paths.items()}


# ------------------------------------------------------------------------------------ the table
def _row(
    chapter: str,
    number: str,
    paper: Any,
    *,
    ours: float | None = None,
    ci: tuple | None = None,
    data: str = "",
    verdict: str = "not comparable",
    why: str = "",
) -> dict:
    return {
        "chapter": chapter,
        "paper's number": number,
        "paper": paper,
        "ours": ours,
        "ci_low": None if ci is None else ci[0],
        "ci_high": None if ci is None else ci[1],
        "our data": data,
        "verdict": verdict,
        "why": why,
    }


def _verdict(
    paper_row: Mapping[str, Any], name: str, result: Mapping[str, Any]
) -> tuple[float | None, tuple | None, str, str]:
    """(ours, CI, verdict, why) of one paper number against one data set's ``{"ci": ...}`` block."""
    (v,) = paper_verdicts({name: result}, [paper_row])
    ci = None if v["ours"] is None else (v["ci_low"], v["ci_high"])
    return v["ours"], ci, VERDICTS[v["verdict"]], v["why"]


def _question_cis(
    block: Mapping[str, Mapping[str, Any]], metrics: Sequence[str], n_resamples: int, seed: int
) -> dict:
    """:func:`~aethel_lite.studies.open_corpus.metric_cis` of a ``methods`` block (per-question metrics kept in it)."""
    first = next(iter(block.values()))
    queries = [SimpleNamespace(qid=q) for q in first["per_query_metrics"]]
    return metric_cis(block, queries, metrics=metrics, n_resamples=n_resamples, seed=seed)


def _missing(stem: str) -> str:
    return f"results/{stem}.json not found: its chapter was not run in this build"


def _unmeasured(chapter: str, label: str, value: Any, stem: str, saved: Any, name: str | None) -> dict:
    """The row of a paper number this build did not measure: its result file is missing, no corpus ran, or only
    the synthetic stand-in did."""
    if saved is None or name is None:
        return _row(chapter, label, value, why=_missing(stem) if saved is None else "no corpus was run")
    return _row(chapter, label, value, data=name, why="synthetic data stands in for missing real data")


def _closed_rows(saved: Mapping[str, Any] | None, n_resamples: int, seed: int) -> list[dict]:
    chapter = "10_closed_pool"
    rows = []
    limit = (saved or {}).get("parameters", {}).get("limit")
    cis: dict[str, dict] = {}
    for r in [r for r in PAPER_ROWS if r["section"] == "closed_pool"] + list(PAPER_DIFFERENCES):
        diff = "a" in r
        name = r["dataset"]
        label = f"{r['a'] + ' − ' + r['b'] if diff else r['paper_method']}, {r['metric']}, {name}"
        if saved is None:
            rows.append(_row(chapter, label, r["value"], why=_missing("closed_pool")))
            continue
        block = saved["methods"].get(name)
        if block is None:
            rows.append(_row(chapter, label, r["value"], data=name, why=f"{name} was not run"))
            continue
        if saved.get("synthetic_fallback", {}).get(name):
            rows.append(
                _row(
                    chapter,
                    label,
                    r["value"],
                    data=f"synthetic (instead of {name})",
                    why="no real data: the synthetic corpus stood in, so no number of ours is set beside the paper's",
                )
            )
            continue
        if diff:
            if r["a"] not in block or r["b"] not in block:
                rows.append(
                    _row(chapter, label, r["value"], data=name, why=f"{r['a']} or {r['b']} was not run")
                )
                continue
            (t,) = paired_comparisons(
                block, [(r["a"], r["b"])], [r["metric"]], n_resamples=n_resamples, seed=seed
            )
            result = {
                "ci": {
                    "difference": {
                        "all": {
                            r["metric"]: {
                                "mean": t["diff"],
                                "ci_low": t["ci_low"],
                                "ci_high": t["ci_high"],
                                "n": t["n"],
                            }
                        },
                        "groups": {},
                    }
                }
            }
            ours, ci, verdict, _ = _verdict({**r, "ours": "difference", "paper_method": label}, name, result)
            why = f"paired bootstrap over the same {t['n']} questions ({r['note']})"
        else:
            if name not in cis:
                cis[name] = _question_cis(block, ("HR@1", "HR@5"), n_resamples, seed)
            ours, ci, verdict, _ = _verdict(r, name, {"ci": cis[name]})
            why = (
                f"our {r['ours']} on a public {saved['datasets'][name]['n_queries']}-question sample, not the paper's own"
                if ours is not None
                else f"{r['ours']} was not run"
            )
        if limit and ours is not None:
            verdict, why = (
                "not comparable",
                f"a run on the first {limit} questions only (limit), not the whole sample",
            )
        rows.append(_row(chapter, label, r["value"], ours=ours, ci=ci, data=name, verdict=verdict, why=why))
    return rows


def _open_rows(saved: Mapping[str, Any] | None) -> list[dict]:
    chapter = "20_open_corpus"
    rows = []
    datasets = (saved or {}).get("datasets", {})
    name = next((n for n in PRIMARY_OPEN if n in datasets), "synthetic" if "synthetic" in datasets else None)
    quick = (saved or {}).get("parameters", {}).get("quick")
    for r in [r for r in PAPER_ROWS if r["section"] in ("open_corpus", "open_corpus_multihop")]:
        label = f"{r['paper_method']}, {r['metric']}" + (
            " (multi-hop questions)" if r["section"].endswith("multihop") else ""
        )
        if saved is None or name is None or name == "synthetic":
            rows.append(_unmeasured(chapter, label, r["value"], "open_corpus", saved, name))
            continue
        ours, ci, verdict, why = _verdict(r, name, datasets[name])
        if quick and ours is not None:
            verdict, why = "not comparable", _QUICK
        rows.append(_row(chapter, label, r["value"], ours=ours, ci=ci, data=name, verdict=verdict, why=why))
    for p in PAPER_TESTS:
        label = f"{p['a']} − {p['b']}, {p['metric']} (paired bootstrap; paper's CI {format_interval(p['ci_low'], p['ci_high'], signed=True)})"
        value = round(p["mean_a"] - p["mean_b"], 3)
        t = next(
            (
                t
                for t in (saved or {}).get("tests", [])
                if t["dataset"] == name and (t["a"], t["b"], t["metric"]) == (p["a"], p["b"], p["metric"])
            ),
            None,
        )
        if saved is None or t is None:
            rows.append(
                _row(
                    chapter,
                    label,
                    value,
                    data=name or "",
                    why=_missing("open_corpus")
                    if saved is None
                    else f"{p['a']} − {p['b']} was not tested on {name}",
                )
            )
            continue
        if name == "synthetic":  # as for every other row: no number of ours beside the paper's
            rows.append(
                _row(chapter, label, value, data=name, why="synthetic data stands in for missing real data")
            )
            continue
        result = {
            "ci": {
                "difference": {
                    "all": {
                        p["metric"]: {
                            "mean": t["diff"],
                            "ci_low": t["ci_low"],
                            "ci_high": t["ci_high"],
                            "n": t["n"],
                        }
                    },
                    "groups": {},
                }
            }
        }
        paper_row = {
            "section": "open_corpus",
            "paper_method": label,
            "metric": p["metric"],
            "value": value,
            "ours": "difference",
        }
        _, _, verdict, why = _verdict(paper_row, name, result)
        if verdict != "not comparable":
            ours_ci, paper_ci = ("spans" if x["ci_low"] <= 0 <= x["ci_high"] else "excludes" for x in (t, p))
            why = (
                f"N = {t['n']} against the paper's {p['n']}; our CI {ours_ci} zero, the paper's {paper_ci} it"
            )
        if quick and verdict != "not comparable":
            verdict, why = "not comparable", _QUICK
        rows.append(
            _row(
                chapter,
                label,
                value,
                ours=t["diff"],
                ci=(t["ci_low"], t["ci_high"]),
                data=name,
                verdict=verdict,
                why=why,
            )
        )
    return rows


def _scaling_rows(saved: Mapping[str, Any] | None) -> list[dict]:
    chapter = "30_scaling"
    runs = (saved or {}).get("runs", {})
    name = next((n for n in PRIMARY_SCALING if n in runs), "synthetic" if "synthetic" in runs else None)
    quick = (saved or {}).get("parameters", {}).get("quick")
    rows = []
    for r in [r for r in PAPER_ROWS if r["section"] == "scaling"]:
        label = f"{r['paper_method']}, {r['metric']} at {r['size']:,} passages"
        if saved is None or name is None or name == "synthetic":
            rows.append(_unmeasured(chapter, label, r["value"], "scaling", saved, name))
            continue
        curve = runs[name]["curves"].get(r["ours"], {}).get(r["metric"], [])
        point = next((p for p in curve if p["size"] == r["size"]), None)
        if point is None:
            sizes = ", ".join(str(p["size"]) for p in curve) or "none"
            rows.append(
                _row(
                    chapter,
                    label,
                    r["value"],
                    data=name,
                    why=f"size {r['size']} not run on {name} (sizes run: {sizes})",
                )
            )
            continue
        result = {"ci": {r["ours"]: {"all": {r["metric"]: point}, "groups": {}}}}
        ours, ci, verdict, why = _verdict(r, name, result)
        if quick and verdict != "not comparable":
            verdict, why = "not comparable", _QUICK
        rows.append(
            _row(
                chapter,
                label,
                r["value"],
                ours=ours,
                ci=ci,
                data=f"{name}, {point['n_seeds']} seed(s)",
                verdict=verdict,
                why=why,
            )
        )
    for key, claim in PAPER_CROSSOVERS.items():
        a, b = claim["ours"]
        label = claim["note"]
        if (
            saved is None
            or name is None
            or a not in runs.get(name, {}).get("curves", {})
            or b not in runs[name]["curves"]
        ):
            rows.append(
                _row(
                    chapter,
                    label,
                    claim["value"],
                    data=name or "",
                    why=_missing("scaling") if saved is None else f"{a} or {b} was not run",
                )
            )
            continue
        c = crossovers(runs[name]["curves"], a, b, claim["metric"])
        ours = c["passes_from"] if key == "graph_passes_dense_from" else c["ever_above"]
        verdict = "reproduced" if ours == claim["value"] else "differs"
        why = (
            f"computed from the mean curves at sizes {', '.join(str(s) for s in runs[name]['sizes'])}; "
            f"{a} above {b} at: {', '.join(str(s) for s in c['sizes_above']) or 'no size'}"
        )
        if name == "synthetic":
            ours, verdict, why = None, "not comparable", "synthetic data stands in for missing real data"
        elif quick:
            verdict, why = "not comparable", _QUICK
        rows.append(_row(chapter, label, claim["value"], ours=ours, data=name, verdict=verdict, why=why))
    return rows


def paper_table(
    results: Mapping[str, Mapping[str, Any] | None], *, n_resamples: int = 10_000, seed: int = 0
) -> list[dict]:
    """One row per number in :mod:`aethel_lite.studies.paper`, beside ours, with a verdict.

    Parameters
    ----------
    results : mapping
        :func:`load_results`: result-file stem → its content, or None when missing.
    n_resamples, seed : int
        Bootstrap of the closed-pool intervals (recomputed from the per-question metrics the file keeps).

    Returns
    -------
    list of dict
        Keys ``chapter``, ``paper's number``, ``paper``, ``ours``, ``ci_low``, ``ci_high``, ``our data``,
        ``verdict`` (``"reproduced"``, ``"differs"`` or ``"not comparable"``) and ``why`` (one line), in
        the order of :mod:`aethel_lite.studies.paper`.
    """
    return (
        _closed_rows(results.get("closed_pool"), n_resamples, seed)
        + _open_rows(results.get("open_corpus"))
        + _scaling_rows(results.get("scaling"))
    )


def paper_number_count() -> int:
    """How many numbers :mod:`aethel_lite.studies.paper` holds: the rows :func:`paper_table` must have."""
    return len(PAPER_ROWS) + len(PAPER_TESTS) + len(PAPER_DIFFERENCES) + len(PAPER_CROSSOVERS)


def verdict_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Number of rows per verdict, in the order reproduced, differs, not comparable."""
    return {v: sum(r["verdict"] == v for r in rows) for v in ("reproduced", "differs", "not comparable")}


def version_table(results: Mapping[str, Mapping[str, Any] | None]) -> dict[str, dict[str, str]]:
    """package → {result file stem → version recorded in it} (``versions`` of each result file that has them)."""
    out: dict[str, dict[str, str]] = {}
    for stem, saved in results.items():
        for pkg, version in ((saved or {}).get("versions") or {}).items():
            out.setdefault(pkg, {})[stem] = version
    return out


def takeaways(rows: Sequence[Mapping[str, Any]]) -> str:
    """The chapter's closing bullets from the paper table (:func:`paper_table` rows): how many numbers
    were reproduced, which differ (paper against ours), and why the rest are not comparable."""
    counts = verdict_counts(rows)
    out = [
        f"* Of the paper's {len(rows)} numbers, {counts['reproduced']} are reproduced (the paper's value inside our "
        f"95% CI, or the same crossing), {counts['differs']} differ and {counts['not comparable']} are not comparable "
        "in this build."
    ]

    def show(x: Any) -> str:  # a crossing that never happens is None
        return f"{x:.3f}" if isinstance(x, float) else "never" if x is None else str(x)

    differ = [r for r in rows if r["verdict"] == "differs"]
    if differ:
        key = "paper's number"
        out.append(
            "* Differ: "
            + "; ".join(
                f"{r[key]} — paper {show(r['paper'])}, ours {show(r['ours'])}"
                + ("" if r["ci_low"] is None else " " + format_interval(r["ci_low"], r["ci_high"]))
                for r in differ
            )
            + "."
        )
    reasons = Counter(r["why"] for r in rows if r["verdict"] == "not comparable")
    if reasons:
        out.append("* Not comparable: " + "; ".join(f"{n} × {why}" for why, n in reasons.items()) + ".")
    return "\n".join(out)


def repro_headline(rows: Sequence[Mapping[str, Any]]) -> tuple[pd.DataFrame, str]:
    """The paper table's verdicts counted per chapter, and one paragraph naming what differs."""
    kinds = ("reproduced", "differs", "not comparable")
    chapters: dict[str, dict[str, int]] = {}
    for r in rows:
        chapters.setdefault(r["chapter"], dict.fromkeys(kinds, 0))[r["verdict"]] += 1
    frame = pd.DataFrame([{"chapter": ch, **counts} for ch, counts in chapters.items()])
    totals = {k: sum(c[k] for c in chapters.values()) for k in kinds}
    differ = [r["paper's number"] for r in rows if r["verdict"] == "differs"]
    apart = list(
        dict.fromkeys(r["why"] for r in rows if r["verdict"] == "not comparable")
    )  # the reasons, in table order

    def first(items, n):
        return "; ".join(items[:n]) + ("; …" if len(items) > n else "")

    verdict = (
        f"Of the paper's {len(rows)} numbers, {totals['reproduced']} are reproduced (the paper's value inside our "
        f"95% interval, or the same crossing), {totals['differs']} differ and {totals['not comparable']} cannot "
        "be compared in this build" + (f": {first(apart, 2)}" if apart else "") + "."
    )
    if differ:
        verdict += f" Those that differ: {first(differ, 4)}."
    return frame, verdict


VERDICT_COLOURS = {"reproduced": "tab:green", "differs": "tab:red", "not comparable": "tab:gray"}


def paper_figure(rows: Sequence[Mapping[str, Any]]):
    """The paper's numbers beside ours: one line per rate (a number between 0 and 1), our value as a
    dot with its 95% CI as a bar, coloured by verdict, the paper's value as a black cross.

    ``rows`` are :func:`paper_table`'s; numbers that are not rates (a corpus size where two curves
    cross, yes/no) are left to that table.
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    def rate(x):
        return isinstance(x, float) and 0.0 <= x <= 1.0

    shown = [r for r in rows if rate(r["paper"]) and rate(r["ours"])]
    height = 0.32 * len(shown) + 1.2
    fig, ax = plt.subplots(figsize=(7.0, height))
    y = list(range(len(shown)))[::-1]
    for yi, r in zip(y, shown):
        lo = r["ours"] - r["ci_low"] if r["ci_low"] is not None else 0.0
        hi = r["ci_high"] - r["ours"] if r["ci_high"] is not None else 0.0
        ax.errorbar(
            [r["ours"]], [yi], xerr=[[lo], [hi]], fmt="o", capsize=3, color=VERDICT_COLOURS[r["verdict"]]
        )
        ax.plot([r["paper"]], [yi], "x", color="black", markersize=7)
    ax.set_yticks(y, [r["paper's number"] for r in shown], fontsize=7)
    ax.set_xlim(0, 1.02)
    ax.set_xlabel("value (ours: dot and 95% CI; the paper's: cross)")
    ax.set_ylabel("the paper's number")
    ax.grid(axis="x", alpha=0.3)
    handles = [Line2D([], [], marker="o", linestyle="", color=c, label=v) for v, c in VERDICT_COLOURS.items()]
    handles.append(Line2D([], [], marker="x", linestyle="", color="black", label="the paper"))
    fig.legend(handles=handles, fontsize=7, loc="upper center", ncol=4, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / height))
    return fig


def _show(x: Any) -> str:
    """A cell of the paper table: floats to three places, nothing for a number not computed."""
    return "" if x is None else (f"{x:.3f}" if isinstance(x, float) else str(x))


def _ours(r: Mapping[str, Any]) -> str:
    """ "0.905 [0.86, 0.94]": our value with its 95% interval, when it has one."""
    if r["ci_low"] is None or not isinstance(r["ours"], float):
        return _show(r["ours"])
    return format_estimate(r["ours"], r["ci_low"], r["ci_high"])


@dataclass
class ReproducibilityStudy:
    """:func:`paper_table` over the result files of one build (:func:`reproducibility_study`).

    ``results`` are :func:`load_results`'s, ``rows`` the paper table's (one dict per number the paper
    reports), ``n_resamples`` and ``quick`` the bootstrap setting they were made with.
    """

    results: dict[str, dict | None]
    rows: list[dict]
    n_resamples: int
    quick: bool

    def found(self) -> str:
        """The result files this build has and those it misses, in one Markdown sentence."""
        have = [s for s, saved in self.results.items() if saved is not None]
        miss = [s for s, saved in self.results.items() if saved is None]
        return (
            "**Result files found:** "
            + (", ".join(f"`{s}.json`" for s in have) or "none")
            + "; missing: "
            + (", ".join(f"`{s}.json`" for s in miss) or "none")
            + "."
        )

    def table(self) -> pd.DataFrame:
        """The paper table as the chapter shows it: one row per number, ours with its 95% interval."""
        return pd.DataFrame(
            [
                {
                    "chapter": r["chapter"],
                    "paper's number": r["paper's number"],
                    "paper": _show(r["paper"]),
                    "ours [95% CI]": _ours(r),
                    "our data": r["our data"],
                    "verdict": r["verdict"],
                    "why": r["why"],
                }
                for r in self.rows
            ]
        )

    def headline(self) -> tuple[pd.DataFrame, str]:
        """:func:`repro_headline`: the verdicts per chapter and the paragraph that says them."""
        return repro_headline(self.rows)

    def figure(self):
        """:func:`paper_figure`: every rate, ours beside the paper's."""
        return paper_figure(self.rows)

    def counts(self) -> str:
        """The verdicts counted, in one Markdown line."""
        counts = verdict_counts(self.rows)
        return f"**{len(self.rows)} numbers:** " + ", ".join(f"{v}: {n}" for v, n in counts.items()) + "."

    def takeaways(self) -> str:
        """:func:`takeaways`: the chapter's closing bullets."""
        return takeaways(self.rows)

    def versions(self) -> pd.DataFrame:
        """One row per package and version the chapters recorded, with the chapters that recorded it."""
        rows = []
        for package, by_chapter in version_table(self.results).items():
            for version in sorted(set(by_chapter.values())):
                chapters = [c for c, v in by_chapter.items() if v == version]
                every = len(chapters) == len(by_chapter)
                rows.append(
                    {
                        "package": package,
                        "version": version,
                        "recorded by": "every chapter" if every else ", ".join(chapters),
                    }
                )
        return pd.DataFrame(rows)


def reproducibility_study(
    results_dir: str | os.PathLike = "results",
    *,
    n_resamples: int = 10_000,
    quick: bool = False,
    seed: int = 0,
) -> ReproducibilityStudy:
    """Every number the paper reports beside ours, from the result files in ``results_dir``.

    Parameters
    ----------
    results_dir : path
        Where the other chapters wrote their result files (:func:`load_results`).
    n_resamples : int
        Bootstrap resamples of the closed-pool intervals and the BCT difference.
    quick : bool
        At most 1,000 resamples (CI).
    seed : int
        The bootstrap's seed.

    Returns
    -------
    ReproducibilityStudy
        Its ``rows`` are :func:`paper_table`'s, one per number in :mod:`aethel_lite.studies.paper`.
    """
    if quick:
        n_resamples = min(n_resamples, 1000)
    results = load_results(results_dir)
    rows = paper_table(results, n_resamples=n_resamples, seed=seed)
    if len(rows) != paper_number_count():
        raise AssertionError("one row per number in aethel_lite.studies.paper")
    return ReproducibilityStudy(results, rows, n_resamples, quick)
