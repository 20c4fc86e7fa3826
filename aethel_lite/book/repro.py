r"""The reproducibility chapter: every number the paper reports beside ours, and how each chapter was made.

Everything here is read from the result files the other chapters write (``results/*.json``) and
from :mod:`aethel_lite.studies.paper`; nothing is computed from the data again except a paired
bootstrap over per-question metrics that a result file stores. A missing result file gives rows
that say so rather than an error. A verdict is *reproduced* (the paper's value lies inside our
interval, or a crossing is the same), *differs* (outside it) or *not comparable* (synthetic
stand-in, quick mode, not run).

Intervals are the percentile bootstrap intervals over questions of
:func:`aethel_lite.evaluation.stats.bootstrap_ci` (for a difference, over :math:`d_i = a_i - b_i`).
"""

from __future__ import annotations

import json
import os
import shlex
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from ..data.download import load_manifest, sha256_file
from ..data.paths import configured_root
from ..evaluation.runner import paired_comparisons
from ..evaluation.stats import format_interval
from ..io import read_json
from ..studies.open_corpus import metric_cis, paper_verdicts
from ..studies.paper import PAPER_CROSSOVERS, PAPER_DIFFERENCES, PAPER_ROWS, PAPER_TESTS
from ..studies.scaling import crossovers

__all__ = [
    "CHAPTERS",
    "VERDICTS",
    "PRIMARY_OPEN",
    "PRIMARY_SCALING",
    "load_results",
    "paper_table",
    "paper_number_count",
    "verdict_counts",
    "takeaways",
    "data_checksums",
    "provenance_rows",
    "version_table",
    "execution_rows",
    "rerun_command",
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
        if saved is None or name is None:
            rows.append(
                _row(
                    chapter,
                    label,
                    r["value"],
                    why=_missing("open_corpus") if saved is None else "no corpus was run",
                )
            )
            continue
        if name == "synthetic":
            rows.append(
                _row(
                    chapter,
                    label,
                    r["value"],
                    data=name,
                    why="synthetic data stands in for missing real data",
                )
            )
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
        if saved is None or name is None:
            rows.append(
                _row(
                    chapter,
                    label,
                    r["value"],
                    why=_missing("scaling") if saved is None else "no corpus was run",
                )
            )
            continue
        if name == "synthetic":
            rows.append(
                _row(
                    chapter,
                    label,
                    r["value"],
                    data=name,
                    why="synthetic data stands in for missing real data",
                )
            )
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


# ------------------------------------------------------------------------------------ provenance
def data_checksums(folders: Sequence[str] | None = None) -> list[dict]:
    """The data files (of ``folders``; None: all) with their SHA-256 from the packaged manifest and
    their state in this build: ``ok`` / ``missing`` / ``mismatch`` (the local copy hashed), or
    ``no data configured`` when neither ``$AETHEL_DATA`` nor ``./data`` is set. No local path is returned."""
    root = configured_root()
    rows = []
    for entry in load_manifest():
        if folders is not None and entry["path"].split("/")[0] not in folders:
            continue
        if root is None:
            state = "no data configured"
        else:
            path = root / entry["path"]
            state = (
                "missing"
                if not path.is_file()
                else ("ok" if sha256_file(path) == entry["sha256"] else "mismatch")
            )
        rows.append(
            {
                "file": entry["path"],
                "sha256": entry["sha256"],
                "bytes": entry.get("size"),
                "this build": state,
            }
        )
    return rows


def rerun_command(
    notebook: str, parameters: Mapping[str, Any] | None = None, environment: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The commands that re-make a chapter (the project's runner, and papermill alone) with the ``parameters``
    and ``environment`` settings the build used (:func:`~aethel_lite.book.notebooks.record_execution`)."""
    params = dict(parameters or {})
    env = "".join(f"{k}={shlex.quote(str(v))} " for k, v in sorted((environment or {}).items()))
    runner = env + " ".join(
        ["python -m aethel_lite.book.notebooks", "--only", notebook]
        + [f"-p {k} {_quoted(json.dumps(v))}" for k, v in params.items()]
    )
    pm = env + f"papermill notebooks/{notebook}.ipynb book/executed/{notebook}.ipynb --cwd ."
    if params:
        pm += f" -y {_quoted(json.dumps(params, sort_keys=True))}"
    return {"runner": runner, "papermill": pm}


def _quoted(text: str) -> str:
    """``text`` as one POSIX shell word, always in single quotes (each ``'`` inside written ``'"'"'``)."""
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _seeds(params: Mapping[str, Any]) -> str:
    found = {k: v for k, v in params.items() if "seed" in k}
    return ", ".join(f"{k}={v}" for k, v in found.items()) if found else "0 (fixed in the code)"


def provenance_rows(
    results: Mapping[str, Mapping[str, Any] | None],
    execution: Mapping[str, Mapping[str, Any]] | None,
    chapters: Sequence[str] | None = None,
) -> list[dict]:
    """Per chapter: result files, data folders, parameters, seeds, run time and the command that re-makes it
    (``execution``: ``results/execution.json`` or None)."""
    rows = []
    for chapter in chapters or CHAPTERS:
        spec = CHAPTERS[chapter]
        saved = [results.get(stem) for stem in spec["results"]]
        main = saved[0]
        run = (execution or {}).get(chapter)
        # a result file without its own parameters (results/beyond.json): those the runner gave the chapter
        params = (main or {}).get("parameters", (run or {}).get("parameters", {}))
        cmd = rerun_command(chapter, (run or {}).get("parameters"), (run or {}).get("environment"))
        rows.append(
            {
                "chapter": chapter,
                "result files": "; ".join(
                    f"results/{s}.json" + ("" if r is not None else " (missing: not run)")
                    for s, r in zip(spec["results"], saved)
                ),
                "data folders": ", ".join(f"{d}/" for d in spec["data"])
                or "none (synthetic corpus by design)",
                "parameters": json.dumps(params, sort_keys=True) if main is not None else "(no result file)",
                "seeds": _seeds(params) if main is not None else "",
                "run time (s)": None if run is None else run["seconds"],
                "re-made by": cmd["runner"],
                "papermill": cmd["papermill"],
            }
        )
    return rows


def version_table(results: Mapping[str, Mapping[str, Any] | None]) -> dict[str, dict[str, str]]:
    """package → {result file stem → version recorded in it} (``versions`` of each result file that has them)."""
    out: dict[str, dict[str, str]] = {}
    for stem, saved in results.items():
        for pkg, version in ((saved or {}).get("versions") or {}).items():
            out.setdefault(pkg, {})[stem] = version
    return out


def execution_rows(execution: Mapping[str, Mapping[str, Any]] | None, notebooks: Sequence[str]) -> list[dict]:
    """The execution statistics: one row per notebook (run time, cells, code cells, when built, UTC);
    a notebook missing from ``execution`` gets empty cells and a note."""
    rows = []
    for name in notebooks:
        run = (execution or {}).get(name)
        rows.append(
            {
                "notebook": name,
                "run time (s)": None if run is None else run["seconds"],
                "cells": None if run is None else run["cells"],
                "code cells": None if run is None else run["code_cells"],
                "built": "" if run is None else run["built"],
                "note": "" if run is not None else "no record: not run by the notebook runner in this build",
            }
        )
    return rows


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
