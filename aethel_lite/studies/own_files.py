r"""The hybrid on your own files: every method with the filings named (FinanceBench as loaded) and with
nothing but their pages (:mod:`aethel_lite.data.own_files`). :func:`own_files_study` measures what the
hybrid keeps of its lead over BM25 and dense retrieval, :math:`\ell_s = \bar r_\text{hybrid} -
\bar r_\text{baseline}`, when the filings are not named: the share :math:`\ell_\text{own} /
\ell_\text{named}` and the change :math:`\ell_\text{own} - \ell_\text{named}` with a paired bootstrap
over questions of the per-question differences of differences (the same questions in both settings).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from ..caching.versions import versions
from ..data.cover import STATEMENT_PAGES
from ..data.own_files import document_information, filing_first_pages
from ..errors import ParameterError
from ..evaluation.stats import format_estimate, paired_bootstrap
from ..io import write_json
from .beyond import BASELINES, COMPONENT_TESTS, beyond_study
from .docmeta_check import FIELDS, docmeta_accuracy
from .open_corpus import QUICK, ci_text, load_open, metric_cis
from .record import as_record

__all__ = [
    "NAMED",
    "OWN",
    "OWN_VARIANTS",
    "OWN_METHODS",
    "LEAD_BASELINES",
    "own_files_study",
    "metadata_accuracy",
    "lead_rows",
    "lead_sentence",
    "settings_table",
    "lead_table",
    "metadata_table",
    "OwnFilesStudy",
    "run",
]

#: the named setting (FinanceBench as loaded) and the own-files setting
NAMED, OWN = "financebench", "financebench-own"
#: hybrid variants run in the own-files setting: the method and the components it is tested against
OWN_VARIANTS = ("aethel-hybrid", *COMPONENT_TESTS)
#: every method of the comparison, baselines first
OWN_METHODS = (*BASELINES, *OWN_VARIANTS)
#: the baselines whose gap to the hybrid is its lead
LEAD_BASELINES = ("bm25", "dense")
_METRICS = ("HR@5", "MRR")
_SETTING_LABELS = {NAMED: "filings named", OWN: "own files"}


def metadata_accuracy(
    doc_names: Sequence[str] | None = None, *, directory=None, n_pages: int = 3 + STATEMENT_PAGES
) -> dict:
    """The page reader's accuracy (:func:`~aethel_lite.studies.docmeta_check.docmeta_accuracy`) on FinanceBench:
    ``{"corpus": ..., "all": ...}`` on the filings ``doc_names`` (None: no ``"corpus"``) and on every filing."""
    pages, info = filing_first_pages(directory, n_pages), document_information(directory)
    out = {"all": docmeta_accuracy(pages, info, n_pages=n_pages)}
    if doc_names is not None:
        wanted = set(doc_names)
        out["corpus"] = docmeta_accuracy(
            {d: t for d, t in pages.items() if d in wanted}, info, n_pages=n_pages
        )
    return out


def _entry_cis(entry: Mapping[str, Any], methods: Sequence[str], n_resamples: int, seed: int) -> dict:
    pq = entry["per_query_metrics"]
    block = {m: {"per_query_metrics": pq[m]} for m in methods if m in pq}
    qids = list(next(iter(block.values()))["per_query_metrics"])
    out = {}
    for half, keep in (("all", qids), ("test", entry["halves"]["test"])):
        queries = [
            SimpleNamespace(qid=q) for q in qids if q in set(keep)
        ]  # all metric_cis reads of a question
        if queries:
            cis = metric_cis(block, queries, metrics=_METRICS, n_resamples=n_resamples, seed=seed)
            out[half] = {m: c["all"] for m, c in cis.items()}
    return out


def _lead(per: Mapping[str, Mapping[str, Any]], qids: Sequence[str], base: str, metric: str) -> list[float]:
    return [per["aethel-hybrid"][q][metric] - per[base][q][metric] for q in qids]


def lead_rows(
    settings: Mapping[str, Mapping[str, Any]], *, n_resamples: int = 10_000, seed: int = 0
) -> list[dict]:
    """The hybrid's lead over each of :data:`LEAD_BASELINES` in both settings, and what it keeps.

    ``settings``: :data:`NAMED` and :data:`OWN` → entries of :func:`own_files_study`. One row per (half,
    baseline, metric): ``named`` and ``own`` (the lead with its CI), ``kept`` (own / named; None when the
    named lead is not positive) and ``change`` (own − named, paired bootstrap over the shared questions).
    """
    named, own = settings[NAMED], settings[OWN]
    rows = []
    for half in ("all", "test"):
        qids = sorted(
            set(named["per_query_metrics"]["aethel-hybrid"]) & set(own["per_query_metrics"]["aethel-hybrid"])
        )
        if half == "test":
            test = set(named["halves"]["test"]) & set(own["halves"]["test"])
            qids = [q for q in qids if q in test]
        if len(qids) < 2:
            continue
        for base in LEAD_BASELINES:
            for metric in _METRICS:
                a = _lead(own["per_query_metrics"], qids, base, metric)
                b = _lead(named["per_query_metrics"], qids, base, metric)
                boot = paired_bootstrap(a, b, n_resamples=n_resamples, seed=seed)
                cell = {}
                for name, entry in (("named", named), ("own", own)):
                    t = next(
                        t for t in entry["tests"] if (t["half"], t["b"], t["metric"]) == (half, base, metric)
                    )
                    cell[name] = {k: t[k] for k in ("diff", "ci_low", "ci_high", "mean_a", "mean_b", "n")}
                kept = cell["own"]["diff"] / cell["named"]["diff"] if cell["named"]["diff"] > 0 else None
                rows.append(
                    {
                        "half": half,
                        "baseline": base,
                        "metric": metric,
                        "n": len(qids),
                        **cell,
                        "kept": None if kept is None else round(kept, 6),
                        "change": {
                            "diff": round(boot.mean_diff, 6),
                            "ci_low": round(boot.ci_low, 6),
                            "ci_high": round(boot.ci_high, 6),
                            "p_bootstrap": round(boot.p_value, 6),
                        },
                    }
                )
    return rows


def own_files_study(
    loaded: Mapping[str, Any],
    *,
    reference: Mapping[str, Mapping[str, Any]] | None = None,
    baselines: Mapping[str, Mapping[str, Any]] | None = None,
    metadata: Mapping[str, Any] | None = None,
    baseline_names: Sequence[str] = BASELINES,
    n_resamples: int = 10_000,
    seed: int = 0,
    n_process: int = 1,
    depth: int = 1000,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Every method in the named and the own-files setting, the hybrid's lead in each, and the page reader.

    Parameters
    ----------
    loaded : mapping
        :data:`NAMED` and :data:`OWN` → Dataset (:func:`~aethel_lite.studies.open_corpus.load_open`
        with the same ``limit`` and ``corpus_size``: the same pages and questions).
    reference : mapping, optional
        :func:`~aethel_lite.studies.beyond.beyond_study` entries reused when they hold every method and question.
    baselines : mapping, optional
        Setting name → an ``aethel eval`` ``methods`` block computed on the same data set (reused).
    metadata : mapping, optional
        :func:`metadata_accuracy`'s result (computed here when omitted).
    baseline_names : sequence of str
        The baselines compared (default all of :data:`~aethel_lite.studies.beyond.BASELINES`).
    n_resamples, seed, n_process, depth : int
        As in :func:`~aethel_lite.studies.beyond.beyond_study`.

    Returns
    -------
    dict
        ``{"settings": {name: beyond entry + "ci": {"all" | "test": {method: {metric: cell}}}},
        "lead": lead_rows(...), "metadata": {"corpus", "all"}, "methods": baselines + variants}``.
    """
    if set(loaded) != {NAMED, OWN}:
        raise ParameterError(f"own_files_study: loaded must hold {NAMED!r} and {OWN!r}, got {sorted(loaded)}")
    qids = {n: [q.qid for q in ds.queries] for n, ds in loaded.items()}
    if qids[NAMED] != qids[OWN] or len(loaded[NAMED].passages) != len(loaded[OWN].passages):
        raise ParameterError(
            "own_files_study: the two settings must hold the same questions and as many pages"
        )
    if not set(LEAD_BASELINES) <= set(baseline_names):
        raise ParameterError(f"own_files_study: baseline_names must include {', '.join(LEAD_BASELINES)}")
    methods = [*baseline_names, *OWN_VARIANTS]
    settings: dict[str, dict] = {}
    todo = {}
    for name, ds in loaded.items():
        ref = (reference or {}).get(name)
        if (
            ref is not None
            and set(methods) <= set(ref.get("per_query_metrics", {}))
            and set(ref["per_query_metrics"]["aethel-hybrid"]) == set(qids[name])
        ):
            settings[name] = dict(ref)
        else:
            todo[name] = ds
    if todo:
        settings.update(
            beyond_study(
                todo,
                baselines=baselines,
                variants=list(OWN_VARIANTS),
                n_resamples=n_resamples,
                seed=seed,
                n_process=n_process,
                depth=depth,
                log=log,
                baseline_names=list(baseline_names),
            )
        )
    for entry in settings.values():
        entry["ci"] = _entry_cis(entry, methods, n_resamples, seed)
    if metadata is None:
        metadata = metadata_accuracy(sorted({p.doc_id for p in loaded[NAMED].passages}))
    return {
        "settings": {n: settings[n] for n in (NAMED, OWN)},
        "methods": methods,
        "lead": lead_rows(settings, n_resamples=n_resamples, seed=seed),
        "metadata": dict(metadata),
    }


# ------------------------------------------------------------------------------------ reporting
def _diff(c: Mapping[str, Any]) -> str:
    return format_estimate(c, signed=True, interval_decimals=3)


def settings_table(saved: Mapping[str, Any], metric: str = "MRR", half: str = "all"):
    """Methods × setting on one metric and half: mean [95% CI] with the filings named and as own files, and the change."""
    import pandas as pd

    rows = []
    for method in saved["methods"]:
        cells = {n: saved["settings"][n]["ci"].get(half, {}).get(method) for n in (NAMED, OWN)}
        if all(cells.values()):
            rows.append(
                {
                    "method": method,
                    **{_SETTING_LABELS[n]: ci_text(cells[n][metric]) for n in (NAMED, OWN)},
                    "change": round(cells[OWN][metric]["mean"] - cells[NAMED][metric]["mean"], 3),
                }
            )
    return pd.DataFrame(rows)


def lead_table(saved: Mapping[str, Any], half: str = "all", metric: str = "MRR"):
    """The hybrid − baseline gaps (:func:`lead_rows`) on one half and metric, one column per baseline."""
    import pandas as pd

    rows = {r["baseline"]: r for r in saved["lead"] if r["half"] == half and r["metric"] == metric}
    index = ["lead, filings named", "lead, own files", "kept", "change (own − named)"]
    data = {
        f"vs {b}": [_diff(r["named"]), _diff(r["own"]), _kept(r), _diff(r["change"])] for b, r in rows.items()
    }
    return pd.DataFrame(data, index=pd.Index(index, name=f"{metric}, {half}"))


def metadata_table(report: Mapping[str, Any]):
    """One :func:`~aethel_lite.studies.docmeta_check.docmeta_accuracy` report as rows: every filing, each type, then
    annual and quarterly reports of calendar and of non-calendar filers apart."""
    import pandas as pd

    names = {"company": "company", "fiscal_year": "fiscal year", "filing_type": "filing type"}
    types = {"10k": "10-K", "10q": "10-Q", "8k": "8-K", "earnings": "earnings release"}
    rows = [{"filings": "all", "n": report["n"], **{names[f]: report["accuracy"][f] for f in FIELDS}}]
    rows += [
        {"filings": types.get(t, t), "n": r["n"], **{names[f]: r[f] for f in FIELDS}}
        for t, r in report["by_type"].items()
    ]
    ends = {"calendar": "fiscal year ends in December", "non-calendar": "fiscal year ends in another month"}
    rows += [  # non-calendar filers apart: their quarters are not the calendar's
        {"filings": f"{types.get(t, t)}, {ends[end]}", "n": r["n"], **{names[f]: r[f] for f in FIELDS}}
        for end in ends
        for t, r in report.get("by_year_end", {}).get(end, {}).items()
        if t in ("10k", "10q")
    ]
    return pd.DataFrame(rows)


def _kept(r: Mapping[str, Any]) -> str:
    if r["kept"] is None:
        return "n/a"
    return "none" if r["own"]["diff"] <= 0 else f"{100 * r['kept']:.0f}%"


def _lead_phrase(r: Mapping[str, Any]) -> str:
    named, own = r["named"], r["own"]
    base = "BM25" if r["baseline"] == "bm25" else "dense retrieval"
    gap = f"{named['diff']:+.3f} → {own['diff']:+.3f}, a change of {_diff(r['change'])}"
    if named["diff"] <= 0:
        return f"Over {base} it had no lead to keep ({named['diff']:+.3f} → {own['diff']:+.3f})."
    if own["diff"] <= 0:
        return f"Over {base} its lead is gone: {gap}."
    if own["diff"] > named["diff"]:
        return f"Over {base} its lead grows: {gap}."
    sure = "the lead's CI still excludes 0" if own["ci_low"] > 0 else "the lead's CI now reaches 0"
    return f"Over {base} it keeps {_kept(r)} of its lead: {gap}; {sure}."


def lead_sentence(saved: Mapping[str, Any], metrics: Sequence[str] = ("MRR", "HR@5")) -> str:
    """What the hybrid keeps of its lead when the filings are not named: Markdown bullets from a saved
    study, one per half and metric, then the page reader's accuracy."""
    out = []
    for half, what in (("all", "all {n} questions"), ("test", "the {n} test questions")):
        for metric in metrics:
            rows = [r for r in saved["lead"] if r["half"] == half and r["metric"] == metric]
            if not rows:
                continue
            h = saved["settings"]
            hyb = {n: h[n]["ci"][half]["aethel-hybrid"][metric] for n in (NAMED, OWN)}
            out.append(
                f"* On {what.format(n=rows[0]['n'])}, with the filings' names and metadata hidden, "
                f"`aethel-hybrid`'s {metric} goes from {ci_text(hyb[NAMED])} to {ci_text(hyb[OWN])}. "
                + " ".join(_lead_phrase(r) for r in rows)
            )
    md = (saved.get("metadata") or {}).get("corpus") or (saved.get("metadata") or {}).get("all")
    if md:
        acc = md["accuracy"]
        out.append(
            f"* Read from the pages alone, the company is right for {100 * acc['company']:.1f}% of the "
            f"{md['n']} filings, the fiscal year for {100 * acc['fiscal_year']:.1f}% and the filing type for "
            f"{100 * acc['filing_type']:.1f}%."
        )
    return "\n".join(out)


# ------------------------------------------------------------------------------------ the chapter
class OwnFilesStudy:
    """:func:`own_files_study`'s result with its parameters, versions and seconds (``results/own_files.json``),
    or None when the real FinanceBench pages were not loaded, and what the chapter shows of it."""

    def __init__(self, result: Mapping[str, Any] | None):
        self.result = None if result is None else as_record(result)

    def save(self, results_dir: str | Path = "results") -> None:
        """Write ``results_dir/own_files.json``; when the study did not run, remove an earlier build's file
        (not this build's result, so not kept beside it)."""
        path = Path(results_dir) / "own_files.json"
        if self.result is not None:
            write_json(path, self.result)
        elif path.exists():
            path.unlink()

    def metadata_tables(self) -> list:
        """The page reader's accuracy (:func:`metadata_table`): on the filings of this corpus, then on every
        filing with pages; Markdown headings and DataFrames in the order shown."""
        if self.result is None:
            return ["*Not run in this build: the own-files setting needs the real FinanceBench pages.*"]
        out = []
        for scope, what in (
            ("corpus", "The filings of this corpus"),
            ("all", "Every FinanceBench filing with pages"),
        ):
            out.append(f"**{what}** ({self.result['metadata'][scope]['n']} filings)")
            out.append(metadata_table(self.result["metadata"][scope]))
        return out

    def tables(self) -> list:
        """Every method in both settings (:func:`settings_table`, all questions then the test half), the
        hybrid's lead (:func:`lead_table`) and :func:`lead_sentence`; nothing when the study did not run."""
        if self.result is None:
            return []
        saved, out = self.result, []
        for half, metric in (("all", "MRR"), ("all", "HR@5"), ("test", "MRR"), ("test", "HR@5")):
            n = saved["settings"][OWN]["ci"][half]["aethel-hybrid"][metric]["n"]
            out.append(f"**{metric}**, {'all' if half == 'all' else 'test-half'} questions (n = {n})")
            out.append(settings_table(saved, metric, half))
        out += [lead_table(saved, half, metric) for half in ("all", "test") for metric in ("MRR", "HR@5")]
        return [*out, lead_sentence(saved)]


def run(
    loaded: Mapping[str, Any],
    *,
    reference: Mapping[str, Mapping[str, Any]] | None = None,
    quick: bool = False,
    n_resamples: int = 10_000,
    seed: int = 0,
    n_process: int = 1,
) -> OwnFilesStudy:
    """The hybrid chapter's own-files study: when ``loaded`` (the chapter's corpora) holds the real
    FinanceBench pages (:data:`NAMED`), the same pages and questions are loaded again with the names hidden
    (:data:`OWN`) and :func:`own_files_study` compares the two, reusing the ``reference`` entries
    (:func:`~aethel_lite.studies.beyond.beyond_study`); ``quick``: the open-corpus quick sample, and BM25
    and dense retrieval only as baselines (``dense-max`` encodes every window anew)."""
    if NAMED not in loaded:  # the synthetic stand-in has no filings to hide
        return OwnFilesStudy(None)
    limit, size = (QUICK["limit"], QUICK["corpus_size"]) if quick else (None, None)
    pair = {NAMED: loaded[NAMED], OWN: load_open(OWN, limit=limit, corpus_size=size)}
    t0 = time.perf_counter()
    result = own_files_study(
        pair,
        reference=reference,
        baseline_names=LEAD_BASELINES if quick else BASELINES,
        n_resamples=n_resamples,
        seed=seed,
        n_process=n_process,
    )
    result.update(
        parameters={"quick": quick, "n_resamples": n_resamples},
        versions=versions(),
        seconds=round(time.perf_counter() - t0, 1),
    )
    return OwnFilesStudy(result)
