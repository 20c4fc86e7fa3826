"""FinanceBench comparison questions: each needs one page from each of two filings.

``aethel_lite/manifests/financebench_comparisons.jsonl`` holds 104 questions (ids ``cmp_001``…) over
the 10-Ks among the 74 filings FinanceBench asks about (``load_financebench(questions="comparisons")``):

* ``comparison-two-companies`` (34 + 18 + 15): one metric of two companies in one fiscal year (each company's
  own, as the document information file labels its 10-K: Walmart's FY2020 ends in January 2020);
* ``comparison-two-years`` (24 + 5 + 8): one metric of one company in two fiscal years that no filing holds
  together (2 or more years apart for a balance-sheet metric, 3 or more otherwise).

The first 58 were written by hand; the 23 after them (``cmp_059``…) were drawn by the rules of
:mod:`aethel_lite.studies.comparison_set` from the (filing, metric) pairs the first 58 do not use, and
no question among them names a statement; the 23 after those (``cmp_082``…) by the same rules for two line items
no question before asks, capital expenditures and cost of revenue, named in an analyst's words ("capex", "COGS").

Metrics (:data:`METRIC_STATEMENT`) appear under the company's own row label ("Net sales", "Net loss", ...).

**Gold rule** (:func:`find_statement_page`): the first page of the filing one of whose first
:data:`HEAD_LINES` non-blank lines *is* the statement's heading (:data:`HEADINGS`: spaces and case
ignored, "(continued)" allowed) and which has a row with the label (:func:`row_figures`). Evidence
items record ``fiscal_year``, ``row_label``, the printed ``figure`` and its ``unit``; the 116 pages of
the first 58 questions were checked by hand, the rest by the rules. A (company, year, metric) was used
only if no other of the 74 filings has a row with that label and figure and no other filing *of the
same company* prints the figure at all, so no filing holds both figures of a two-year question (not
checked over all 344 filings, ``docs="all"``).

**Split rule** (:func:`assign_splits`, fixed before any method was run on the questions it splits):
:func:`split_of` within each question type, separately for the first 58 (17 + 12 dev, 17 + 12 test)
for those drawn after them (9 + 3 dev, 9 + 2 test) and for the analyst-worded ones (8 + 4 dev, 7 + 4 test), so
that adding questions moved none.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..caching.memo import shared
from ..data.loaders import load_financebench
from ..data.runs import RUN_DEPTH
from ..data.sampling import sample_corpus
from ..data.schema import Dataset
from ..data.statements import HEAD_LINES, HEADINGS, row_figures, title_lines
from ..evaluation.runner import MethodOutcome, block_of, paired_comparisons, score_runs
from ..evaluation.splits import split
from ..evaluation.stats import format_difference, format_estimate
from ..io import write_json
from ..retrievers import StatementsRetriever, clone
from ..retrievers.registry import METHODS, make_retriever
from .open_corpus import metric_cis
from .record import as_record

__all__ = [
    "HEADINGS",
    "HEAD_LINES",
    "METRIC_STATEMENT",
    "find_statement_page",
    "row_figures",
    "split_of",
    "assign_splits",
    "GROUPS",
    "COMPARISON_METHODS",
    "COMPARISON_PAIRS",
    "COMPARISON_METRICS",
    "QUICK_COMPARISONS",
    "comparison_study",
    "comparisons_headline",
    "statements_ablation",
    "STATEMENTS_WITHOUT",
    "ComparisonStudy",
    "run",
]

#: the statement that holds each ``metric`` of the set (the row label differs by company: see each evidence item)
METRIC_STATEMENT = {
    "total_assets": "balance",
    "total_liabilities": "balance",
    "cash": "balance",
    "revenue": "income",
    "net_income": "income",
    "operating_income": "income",
    "cfo": "cashflow",
    # the second extension's line items, named in analysts' words (comparison_set.ANALYST_PHRASES)
    "capex": "cashflow",
    "cost_of_revenue": "income",
}


def find_statement_page(pages: Mapping[int, str], kind: str, label: str) -> int | None:
    """The gold page of a filing for one statement row (the module's gold rule), or None.

    Parameters
    ----------
    pages : mapping page number (0-based) → page text, the pages of one filing
    kind : ``"balance"``, ``"income"`` or ``"cashflow"`` (a key of :data:`HEADINGS`)
    label : the row label, e.g. ``"Total assets"``
    """
    heading = HEADINGS[kind]
    for page in sorted(pages):
        text = pages[page]
        if any(heading.match(line) for line in title_lines(text)) and row_figures(text, label):
            return page
    return None


def split_of(ids: Iterable[str]) -> dict[str, str]:
    """``id → "dev"/"test"`` for one stratum: sorted by sha256 of the id, first half (rounded up) dev."""
    ranked = sorted(ids, key=lambda i: hashlib.sha256(i.encode("utf-8")).hexdigest())
    half = (len(ranked) + 1) // 2
    return {qid: ("dev" if n < half else "test") for n, qid in enumerate(ranked)}


#: where each group of the set starts: the hand-written questions, the first drawn group, the analyst-worded one
GROUPS = (0, 58, 81)


def assign_splits(rows: Iterable[Mapping], groups: Iterable[int] = GROUPS) -> dict[str, str]:
    """The split rule over question rows: stratified by ``question_type``, each group (rows from each start of
    ``groups`` to the next) apart (the module docstring)."""
    rows = list(rows)
    starts = list(groups)
    out: dict[str, str] = {}
    for a, b in zip(starts, [*starts[1:], len(rows)]):
        group = rows[a:b]
        by_type: dict[str, list[str]] = {}
        for row in group:
            by_type.setdefault(row["question_type"], []).append(row["financebench_id"])
        out.update({qid: split for ids in by_type.values() for qid, split in split_of(ids).items()})
    return out


# ------------------------------------------------------------------------------------ the study
#: Methods of :func:`comparison_study`; ``aethel-anchors`` and ``aethel-statements`` are derived from the fitted
#: ``aethel-hybrid``.
COMPARISON_METHODS = ("bm25", "dense", "aethel-hybrid", "aethel-anchors", "aethel-statements")
#: The paired tests on comparison questions: ``aethel-anchors`` against the methods before it, ``aethel-statements``
#: against ``aethel-anchors`` and ``aethel-hybrid``.
COMPARISON_PAIRS = (
    ("aethel-anchors", "bm25"),
    ("aethel-anchors", "dense"),
    ("aethel-anchors", "aethel-hybrid"),
    ("aethel-statements", "aethel-anchors"),
    ("aethel-statements", "aethel-hybrid"),
)
#: ``aethel-statements`` with its lifted pages in the anchor's own order (no row-label match): an ablation
STATEMENTS_UNORDERED = "statement pages in the anchor's order"
#: ``aethel-statements`` with one of its parts off (a setting each), and with the two added last both off (the method
#: before them): the leave-one-out ablation
STATEMENTS_WITHOUT = {
    "without line items by meaning": {"meanings": False},
    "without the statement that reports the item": {"statement_kind": False},
    "without the anchor's own filing": {"anchor_filing": False},
    "as it was before both (words only, the first page's filing)": {
        "meanings": False,
        "anchor_filing": False,
    },
}
#: AllSupport@10 (both filings' pages in the top 10) is the headline metric of a comparison question.
COMPARISON_METRICS = ("AllSupport@10", "Recall@10", "MRR")
#: Quick mode: the first comparison questions of each half and FinanceBench questions, over a sample of the pages.
QUICK_COMPARISONS = {"per_half": 4, "single": 8, "corpus_size": 120}


def _pages(data, quick: bool) -> tuple[Dataset, Dataset]:
    """The comparison questions and FinanceBench's own over one corpus (quick: gold kept in a sample)."""
    comp, single = load_financebench(data, questions="comparisons"), load_financebench(data)
    if not quick:
        return comp, single
    n = QUICK_COMPARISONS["per_half"]
    keep = [
        q for half in ("dev", "test") for q in [q for q in comp.queries if q.meta.get("split") == half][:n]
    ]
    both = Dataset(
        "financebench-comparisons",
        single.passages,
        keep + single.queries[: QUICK_COMPARISONS["single"]],
        dict(single.meta),
    )
    both = sample_corpus(both, QUICK_COMPARISONS["corpus_size"], 0)
    ids = {q.qid for q in keep}
    return (
        Dataset(comp.name, both.passages, [q for q in both.queries if q.qid in ids], dict(comp.meta)),
        Dataset(single.name, both.passages, [q for q in both.queries if q.qid not in ids], dict(single.meta)),
    )


def _statements(anchors, **settings) -> StatementsRetriever:
    """The registry's ``aethel-statements`` (``settings`` changed) over the fitted ``anchors`` stage."""
    return clone(METHODS["aethel-statements"]).set_params(anchors=anchors, prefit=True, **settings)


def _all_support(block, names, pairs, qids, by_id, n_resamples: int, seed: int) -> dict:
    """AllSupport@10 of the methods ``names`` on the questions ``qids``: ``ci`` (95% CIs) and ``tests`` (the paired
    tests ``pairs``; none on one question)."""
    sub = block_of({n: block[n] for n in names}, qids)
    metric = ("AllSupport@10",)
    return {
        "ci": metric_cis(sub, [by_id[q] for q in qids], metrics=metric, n_resamples=n_resamples, seed=seed),
        "tests": paired_comparisons(sub, pairs, metric, n_resamples=n_resamples, seed=seed)
        if len(qids) > 1
        else [],
    }


def comparison_study(
    *,
    data: str | None = None,
    quick: bool = False,
    n_resamples: int = 10_000,
    seed: int = 0,
    progress: bool = False,
    log: Callable[[str], None] | None = print,
) -> dict:
    """BM25, dense, ``aethel-hybrid``, ``aethel-anchors`` and ``aethel-statements`` on the comparison questions, an
    ablation of ``aethel-statements``, and the single-filing check.

    One corpus (quick mode: a sample of :data:`QUICK_COMPARISONS` pages with every gold page) is fitted once per method;
    ``aethel-anchors`` is a stage holding the fitted ``aethel-hybrid``, ``aethel-statements`` a stage holding
    ``aethel-anchors`` (``prefit``: nothing is fitted again).

    Returns
    -------
    dict
        ``comparisons``: per half (``dev``, ``test``, ``all``) ``n``, ``ci`` (:func:`metric_cis` of
        :data:`COMPARISON_METRICS`) and ``tests`` (:data:`COMPARISON_PAIRS`);
        ``by_kind``: AllSupport@10 per question type, and ``by_kind_tests``: per half and question type,
        ``aethel-statements`` against ``aethel-anchors``; ``ablation``: per half, AllSupport@10 of
        ``aethel-anchors``, of :data:`STATEMENTS_UNORDERED` and of ``aethel-statements``, and the test of
        the last two; ``leave_out``: per half, AllSupport@10 of ``aethel-statements`` and of it with each part of
        :data:`STATEMENTS_WITHOUT` off, and the test of each against it; ``anchored``: comparison questions with
        two or more anchors. ``single``:
        FinanceBench's own questions: ``aethel-anchors`` and ``aethel-statements`` against ``aethel-hybrid``
        on MRR and HR@5 per half, and the questions they rank differently.
        ``timing``: ms per comparison question of each graph method's top-10 search, timed alone
        after a warm-up question, with no per-text memo.
    """
    comp, single = _pages(data, quick)
    log and log(
        f"comparisons: {len(comp.queries)} comparison questions, {len(single.queries)} FinanceBench questions, "
        f"{len(comp.passages)} pages"
    )
    fitted = {}
    for name in ("bm25", "dense", "aethel-hybrid"):
        t0 = time.perf_counter()
        with shared():
            fitted[name] = make_retriever(name, progress=progress).fit(comp.passages)
        log and log(f"  {name}: fitted in {time.perf_counter() - t0:.1f}s")
    # the stages hold the fitted hybrid (prefit): nothing is extracted, encoded or indexed again
    anchors = clone(METHODS["aethel-anchors"]).set_params(hybrid=fitted["aethel-hybrid"], prefit=True)
    fitted["aethel-anchors"] = anchors.fit(comp.passages)
    fitted["aethel-statements"] = _statements(anchors).fit(comp.passages)
    unordered = _statements(anchors, order="anchor").fit(comp.passages)
    without = {
        name: _statements(anchors, **off).fit(comp.passages) for name, off in STATEMENTS_WITHOUT.items()
    }
    with shared():
        runs = {
            (tag, name): MethodOutcome(name, r.search(questions, k=RUN_DEPTH), 0.0)
            for questions, tag in ((comp.queries, "comparisons"), (single.queries, "single"))
            for name, r in fitted.items()
        }
        ablated = MethodOutcome(STATEMENTS_UNORDERED, unordered.search(comp.queries, k=RUN_DEPTH), 0.0)
        left = {n: MethodOutcome(n, r.search(comp.queries, k=RUN_DEPTH), 0.0) for n, r in without.items()}
    timing = {}
    for name in (
        "aethel-hybrid",
        "aethel-anchors",
        "aethel-statements",
    ):  # timed apart: no memo shared, after one warm-up question
        r = fitted[name]
        with shared(False):
            r.search(comp.queries[:1], k=10)
            t0 = time.perf_counter()
            r.search(comp.queries, k=10)
        timing[name] = round(1000 * (time.perf_counter() - t0) / max(len(comp.queries), 1), 2)
    out: dict[str, Any] = {
        "methods": list(COMPARISON_METHODS),
        "metrics": list(COMPARISON_METRICS),
        "quick": quick,
        "n_pages": len(comp.passages),
    }
    block = score_runs(
        {**{n: runs[("comparisons", n)] for n in fitted}, STATEMENTS_UNORDERED: ablated, **left},
        comp.queries,
        k=10,
    )
    halves = {h: [q.qid for q in comp.queries if q.meta.get("split") == h] for h in ("dev", "test")}
    halves["all"] = [q.qid for q in comp.queries]
    by_id = {q.qid: q for q in comp.queries}
    pairs = list(COMPARISON_PAIRS)
    kinds = {q.qid: q.meta.get("question_type", "comparison") for q in comp.queries}
    steps = ("aethel-anchors", STATEMENTS_UNORDERED, "aethel-statements")
    out["comparisons"], out["by_kind_tests"], out["ablation"], out["leave_out"] = {}, {}, {}, {}
    for half, qids in halves.items():
        sub = block_of({n: block[n] for n in COMPARISON_METHODS}, qids)
        out["comparisons"][half] = {
            "n": len(qids),
            "ci": metric_cis(
                sub, [by_id[q] for q in qids], metrics=COMPARISON_METRICS, n_resamples=n_resamples, seed=seed
            ),
            "tests": paired_comparisons(sub, pairs, COMPARISON_METRICS, n_resamples=n_resamples, seed=seed)
            if len(qids) > 1
            else [],
        }
        out["by_kind_tests"][half] = {
            kind: paired_comparisons(
                block_of(sub, ids),
                [("aethel-statements", "aethel-anchors")],
                ("AllSupport@10",),
                n_resamples=n_resamples,
                seed=seed,
            )
            if len(ids) > 1
            else []
            for kind in sorted(set(kinds.values()))
            for ids in [[q for q in qids if kinds[q] == kind]]
        }
        out["ablation"][half] = {
            "steps": list(steps),
            **_all_support(
                block, steps, [("aethel-statements", STATEMENTS_UNORDERED), (STATEMENTS_UNORDERED, "aethel-anchors")],
                qids, by_id, n_resamples, seed,
            ),
        }  # fmt: skip
        out["leave_out"][half] = {
            "parts": list(STATEMENTS_WITHOUT),
            **_all_support(
                block, ("aethel-statements", *STATEMENTS_WITHOUT),
                [("aethel-statements", n) for n in STATEMENTS_WITHOUT], qids, by_id, n_resamples, seed,
            ),
        }  # fmt: skip
    out["by_kind"] = metric_cis(
        {n: block[n] for n in COMPARISON_METHODS},
        comp.queries,
        kinds,
        metrics=("AllSupport@10",),
        n_resamples=n_resamples,
        seed=seed,
    )
    anchors_r = fitted["aethel-anchors"]
    out["anchored"] = {
        "questions": len(comp.queries),
        "two_or_more": sum(len(anchors_r.anchors(q.text)) >= 2 for q in comp.queries),
    }
    sblock = score_runs(
        {n: runs[("single", n)] for n in ("aethel-hybrid", "aethel-anchors", "aethel-statements")},
        single.queries,
        k=5,
    )
    parts = split("financebench", [q.qid for q in single.queries])
    parts["all"] = [q.qid for q in single.queries]
    changed = [q.qid for q in single.queries if len(anchors_r.anchors(q.text)) >= 2]
    out["single"] = {
        "n": len(single.queries),
        "anchored": len(changed),
        "anchored_qids": changed,
        "identical": sum(
            runs[("single", "aethel-hybrid")].run[q.qid] == runs[("single", "aethel-anchors")].run[q.qid]
            for q in single.queries
        ),
        "identical_statements": sum(
            runs[("single", "aethel-hybrid")].run[q.qid] == runs[("single", "aethel-statements")].run[q.qid]
            for q in single.queries
        ),
        "tests": {
            h: paired_comparisons(
                block_of(sblock, qids),
                [("aethel-anchors", "aethel-hybrid"), ("aethel-statements", "aethel-hybrid")],
                ("MRR", "HR@5"),
                n_resamples=n_resamples,
                seed=seed,
            )
            if len(qids) > 1
            else []
            for h, qids in parts.items()
        },
    }
    out["per_query"] = {
        n: {q: block[n]["per_query_metrics"][q]["AllSupport@10"] for q in halves["all"]}
        for n in COMPARISON_METHODS
    }
    out["timing"] = {"ms_per_question": timing}
    return out


def comparisons_headline(saved: Mapping[str, Any], half: str = "test") -> tuple[Any, str]:
    """Questions that need two filings (``results/comparisons.json``): each method's metrics with 95% CIs on
    ``half``, and a verdict from the paired tests of ``aethel-anchors`` and ``aethel-statements`` and the
    single-filing check."""
    block = saved["comparisons"][half]
    rows = []
    for method in saved["methods"]:
        cells = block["ci"][method]["all"]
        rows.append(
            {
                "method": method,
                **{f"{m} [95% CI]": format_estimate(cells[m]) for m in saved["metrics"]},
            }
        )
    tests = [t for t in block["tests"] if t["metric"] == "AllSupport@10" and t["a"] == "aethel-anchors"]
    said = [f"against {t['b']} {format_difference(t)}" for t in tests]
    beats = [t["b"] for t in tests if t["ci_low"] > 0]
    share = {
        m: 100 * block["ci"][m]["all"]["AllSupport@10"]["mean"]
        for m in ("aethel-anchors", "aethel-hybrid", "aethel-statements")
        if m in block["ci"]
    }
    verdict = (
        f"On the {block['n']} {half} questions (fixed before any method was run), `aethel-anchors` finds a page of "
        f"each filing in its top 10 for {share['aethel-anchors']:.0f}% of them, "
        f"`aethel-hybrid` for {share['aethel-hybrid']:.0f}%. "
        f"AllSupport@10 difference {'; '.join(said)}. "
    )
    verdict += (
        f"The interval excludes zero against {', '.join(beats)}" if beats else "No interval excludes zero"
    )
    verdict += f"{' and not against ' + ', '.join(t['b'] for t in tests if t['b'] not in beats) if beats and len(beats) < len(tests) else ''}."
    stmt = next(
        (
            t
            for t in block["tests"]
            if t["metric"] == "AllSupport@10" and (t["a"], t["b"]) == ("aethel-statements", "aethel-anchors")
        ),
        None,
    )
    if stmt is not None:
        verdict += (
            f" With each anchor's first places given to its filing's statement pages, `aethel-statements` finds "
            f"both gold pages for {share['aethel-statements']:.0f}%: against `aethel-anchors` {format_difference(stmt)}."
        )
    single = saved["single"]
    mrr = {
        (h, t["a"]): t for h in ("test", "all") for t in single["tests"].get(h, []) if t["metric"] == "MRR"
    }
    if ("all", "aethel-anchors") in mrr:
        verdict += (
            f" On FinanceBench's own {single['n']} questions {single['anchored']} "
            f"{'names' if single['anchored'] == 1 else 'name'} two anchors or more; "
            f"`aethel-anchors` ranks the others exactly as `aethel-hybrid` (MRR against it "
            f"{format_difference(mrr[('all', 'aethel-anchors')])}), while `aethel-statements` gives a question "
            f"with one anchor the same lift: the statement pages of its first filing that report the line item "
            f"come first (a choice made on the development half)."
        )
        if ("all", "aethel-statements") in mrr:
            test = mrr.get(("test", "aethel-statements"))
            verdict += (
                " MRR against `aethel-hybrid`: "
                + (f"test half {format_difference(test)}; " if test else "")
                + f"all questions {format_difference(mrr[('all', 'aethel-statements')])}."
            )
    if saved.get("quick"):
        verdict = (
            "Quick build: a handful of questions over a sample of the pages; the intervals are wide. "
            + verdict
        )
    import pandas as pd

    return pd.DataFrame(rows), verdict


def statements_ablation(saved: Mapping[str, Any], half: str = "test") -> tuple[Any, str]:
    """What each part of ``aethel-statements`` adds on ``half`` (``results/comparisons.json``'s ``ablation`` and
    ``leave_out``): AllSupport@10 of each step and of ``aethel-statements`` with each of its later parts off
    (:data:`STATEMENTS_WITHOUT`), with 95% CIs, and the paired tests between consecutive steps, against each part
    off, and per kind of question."""
    block = saved["ablation"][half]
    labels = {
        "aethel-anchors": "one PageRank per anchor (`aethel-anchors`)",
        "aethel-statements": "+ ordered by their rows' match to the question (`aethel-statements`)",
    }
    rows = []
    for step in block["steps"]:
        c = block["ci"][step]["all"]["AllSupport@10"]
        rows.append(
            {
                "step": labels.get(step, f"+ the filing's {step}"),
                "AllSupport@10 [95% CI]": format_estimate(c),
            }
        )
    said = [f"{t['a']} against {t['b']} {format_difference(t)}" for t in block["tests"]]
    leave = saved.get("leave_out", {}).get(half)
    if leave:
        for part in leave["parts"]:
            c = leave["ci"][part]["all"]["AllSupport@10"]
            rows.append({"step": f"`aethel-statements` {part}", "AllSupport@10 [95% CI]": format_estimate(c)})
        said += [f"{t['a']} against its part {t['b']} {format_difference(t)}" for t in leave["tests"]]
    kinds = saved["by_kind_tests"][half]
    said += [
        f"{kind.replace('comparison-', '').replace('-', ' ')}: `aethel-statements` against `aethel-anchors` "
        f"{format_difference(tests[0])}"
        for kind, tests in kinds.items()
        if tests
    ]
    import pandas as pd

    return pd.DataFrame(rows), f"On the {half} half: " + "; ".join(said) + "."


# ------------------------------------------------------------------------------------ the chapter
#: why the study does not run when only the synthetic corpus loaded
MISSING = "the FinanceBench pages: the comparison questions are asked about them"


class ComparisonStudy:
    """:func:`comparison_study`'s result (``results/comparisons.json``; ``{"missing": why}`` when it did not run)
    and what the chapter shows of it (:meth:`tables`)."""

    def __init__(self, result: Mapping[str, Any]):
        self.result = as_record(result)  # as the file holds it

    def save(self, results_dir: str | Path = "results") -> None:
        """Write ``results_dir/comparisons.json``."""
        path = Path(results_dir) / "comparisons.json"
        write_json(path, self.result)

    def tables(self, half: str = "test") -> list:
        """Markdown strings and DataFrames in the order shown: :func:`comparisons_headline` on ``half``,
        AllSupport@10 by kind of question, :func:`statements_ablation` and the search time per question."""
        import pandas as pd

        saved = self.result
        if "missing" in saved:
            return [f"Not run in this build: it needs {saved['missing']}."]
        headline, verdict = comparisons_headline(saved, half)
        kinds = [
            {"method": m, **{kind: format_estimate(g["AllSupport@10"]) for kind, g in saved["by_kind"][m]["groups"].items()}}
            for m in saved["methods"]
        ]  # fmt: skip
        ablation, said = statements_ablation(saved, half)
        ms = saved["timing"]["ms_per_question"]
        return [
            headline,
            verdict,
            "**AllSupport@10 by kind of question** (all questions, both halves):",
            pd.DataFrame(kinds),
            f"**What each part of `aethel-statements` adds** ({half} half):",
            ablation,
            said,
            f"Search time per comparison question in this build: `aethel-hybrid` {ms['aethel-hybrid']:.0f} ms, "
            f"`aethel-anchors` {ms['aethel-anchors']:.0f} ms (one extra PageRank column per anchor), "
            f"`aethel-statements` {ms['aethel-statements']:.0f} ms; the machine was shared while the book was built.",
        ]


def run(
    loaded: Mapping[str, Any] | None = None,
    *,
    quick: bool = False,
    n_resamples: int = 10_000,
    seed: int = 0,
    log: Callable[[str], None] | None = None,
) -> ComparisonStudy:
    """The hybrid chapter's comparison study: :func:`comparison_study`, or, when only the synthetic corpus
    loaded (``loaded``: the chapter's corpora; no real data), a result saying what it needs (:data:`MISSING`)."""
    if loaded is not None and set(loaded) == {"synthetic"}:
        return ComparisonStudy({"missing": MISSING})
    return ComparisonStudy(comparison_study(quick=quick, n_resamples=n_resamples, seed=seed, log=log))
