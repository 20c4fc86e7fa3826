"""The FinanceBench comparison set (manifests/financebench_comparisons.jsonl) and its gold rule.

The manifest tests need no data; the gold-page tests read the filings' pages ($AETHEL_DATA) and take
the page text itself as the oracle: the row label and the recorded figure must be on the page.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from conftest import require

from aethel_lite.data.loaders import FB_COMPARISONS, load_financebench
from aethel_lite.errors import ParameterError
from aethel_lite.studies.comparisons import (
    COMPARISON_PAIRS,
    METRIC_STATEMENT,
    STATEMENTS_UNORDERED,
    STATEMENTS_WITHOUT,
    assign_splits,
    find_statement_page,
    row_figures,
)

ROWS = [json.loads(line) for line in FB_COMPARISONS.read_text(encoding="utf-8").splitlines() if line.strip()]
TYPES = ("comparison-two-companies", "comparison-two-years")


# ------------------------------------------------------------------------------- the manifest
def test_the_set_has_both_kinds_and_unique_ids():
    kinds = Counter(r["question_type"] for r in ROWS)
    assert set(kinds) == set(TYPES) and min(kinds.values()) >= 20
    assert len(ROWS) == 104
    ids = [r["financebench_id"] for r in ROWS]
    assert len(set(ids)) == len(ids) and all(re.fullmatch(r"cmp_\d{3}", i) for i in ids)
    assert len({r["question"] for r in ROWS}) == len(ROWS)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["financebench_id"])
def test_each_question_has_two_pages_in_two_filings_and_no_copied_text(row):
    evidence = row["evidence"]
    assert len(evidence) == 2
    assert evidence[0]["doc_name"] != evidence[1]["doc_name"]
    assert row["doc_name"] == evidence[0]["doc_name"]
    assert all(ev["doc_name"].endswith("_10K") for ev in evidence)
    assert all(
        set(ev) == {"doc_name", "evidence_page_num", "fiscal_year", "row_label", "figure", "unit"}
        for ev in evidence
    )
    assert not any("evidence_text" in ev for ev in evidence)
    for ev in evidence:  # the answer restates both figures
        assert f"${ev['figure']} {ev['unit'][:-1]}" in row["answer"]
    a, b = evidence
    if row["question_type"] == "comparison-two-companies":
        assert a["fiscal_year"] == b["fiscal_year"]
        assert len(set(row["company"].split(" / "))) == 2
        assert str(a["fiscal_year"]) in row["question"]
    else:  # far enough apart that no 10-K holds both (balance sheet: 2 year-ends; other statements: 3 years)
        gap = 2 if METRIC_STATEMENT[row["metric"]] == "balance" else 3
        assert b["fiscal_year"] - a["fiscal_year"] >= gap
        assert len(set(row["company"].split(" / "))) == 1
        assert str(a["fiscal_year"]) in row["question"] and str(b["fiscal_year"]) in row["question"]


def test_the_wording_is_not_one_template():
    for kind in TYPES:
        openings = Counter(" ".join(r["question"].split()[:2]) for r in ROWS if r["question_type"] == kind)
        assert len(openings) >= 6, openings
        assert max(openings.values()) <= len(ROWS) // 6


def test_the_split_is_the_stated_rule():
    # independent re-statement of the rule: per type, ids by sha256 hex digest, first half (rounded up) dev,
    # the 58 hand-written questions, the 23 drawn after them and the 23 analyst-worded ones apart
    for group in (ROWS[:58], ROWS[58:81], ROWS[81:]):
        for kind in TYPES:
            ids = sorted(
                (r["financebench_id"] for r in group if r["question_type"] == kind),
                key=lambda i: hashlib.sha256(i.encode()).hexdigest(),
            )
            dev = set(ids[: (len(ids) + 1) // 2])
            assert {
                r["financebench_id"] for r in group if r["question_type"] == kind and r["split"] == "dev"
            } == dev
    assert {r["financebench_id"]: r["split"] for r in ROWS} == assign_splits(ROWS)


# ------------------------------------------------------------------------------- the gold rule
STATEMENT = """Table of Contents
ACME CORP
CONSOLIDATED BALANCE SHEETS
(In millions)
2019
2018
Cash and cash equivalents
$
1,200
$
900
Total assets.........................
$ 10,500
9,800
Total liabilities
(4,000)
3,000
"""


def test_row_figures_reads_the_row_as_printed():
    assert row_figures(STATEMENT, "Total assets") == ["10,500", "9,800"]
    assert row_figures(STATEMENT, "cash and cash equivalents") == ["1,200", "900"]
    assert row_figures(STATEMENT, "Total liabilities") == ["(4,000)", "3,000"]
    assert row_figures(STATEMENT, "Total liabilities and equity") == []
    assert row_figures("Total assets\nsee Note 4\n", "Total assets") == []


def test_find_statement_page_skips_contents_selected_data_and_notes():
    pages = {
        0: "Index\nConsolidated Balance Sheets\n52\nTotal assets\nsee below\n",  # contents: no figure
        1: "Item 6\nConsolidated Balance Sheets:\nTotal assets\n10,500\n",  # selected data: heading with a colon
        2: "Note 7\nThe consolidated balance sheets include\nTotal assets\n10,500\n",  # prose, not a heading
        3: STATEMENT,
        4: STATEMENT,
    }
    assert find_statement_page(pages, "balance", "Total assets") == 3
    assert find_statement_page(pages, "income", "Total assets") is None
    split_words = {5: STATEMENT.replace("CONSOLIDATED BALANCE SHEETS", "Consolidated Balance Shee t")}
    assert find_statement_page(split_words, "balance", "Total assets") == 5


def test_the_loader_refuses_unknown_sets_and_chunks():
    with pytest.raises(ParameterError):
        load_financebench(questions="nope")
    with pytest.raises(ParameterError):
        load_financebench(questions="comparisons", granularity="chunk")


# ------------------------------------------------------------------------------- on the real pages
@pytest.fixture(scope="module")
def comparisons(real_data: Path):
    require(real_data / "financebench" / "pages.jsonl.gz")
    return load_financebench(real_data / "financebench", questions="comparisons")


def _filings(dataset) -> dict[str, dict[int, str]]:
    out: dict[str, dict[int, str]] = {}
    for p in dataset.passages:
        out.setdefault(p.doc_id, {})[p.meta["page"]] = p.text
    return out


@pytest.mark.realdata
def test_the_loader_gives_the_set_over_the_74_filings(comparisons, real_data):
    plain = load_financebench(real_data / "financebench")
    assert [p.pid for p in comparisons.passages] == [p.pid for p in plain.passages]
    assert comparisons.meta["n_filings"] == 74 and comparisons.meta["n_pages"] == 10_206
    assert comparisons.meta["skipped"] == {} and comparisons.meta["questions"] == "comparisons"
    assert [q.qid for q in comparisons.queries] == [r["financebench_id"] for r in ROWS]
    for q, row in zip(comparisons.queries, ROWS):
        assert q.gold == {f"{ev['doc_name']}#p{ev['evidence_page_num']}" for ev in row["evidence"]}
        assert q.hops == 2 and q.pool is None and q.meta["split"] == row["split"]
    assert Counter(q.meta["split"] for q in comparisons.queries) == {"dev": 53, "test": 51}
    assert "split" not in plain.queries[0].meta and "questions" not in plain.meta


@pytest.mark.realdata
def test_every_gold_page_holds_the_label_and_the_figure(comparisons):
    filings = _filings(comparisons)
    periods = {p.doc_id: p.meta["doc_period"] for p in comparisons.passages}
    for row in ROWS:
        for ev in row["evidence"]:
            text = filings[ev["doc_name"]][ev["evidence_page_num"]]
            flat = " ".join(text.split())
            assert ev["row_label"].casefold() in flat.casefold(), (row["financebench_id"], ev)
            assert _printed(ev["figure"]).search(flat), (row["financebench_id"], ev)
            assert ev["unit"] in flat.casefold()
            assert ev["fiscal_year"] == periods[ev["doc_name"]]


@pytest.mark.realdata
def test_every_gold_page_is_the_rule_s_page(comparisons):
    filings = _filings(comparisons)
    for row in ROWS:
        kind = METRIC_STATEMENT[row["metric"]]
        for ev in row["evidence"]:
            pages = filings[ev["doc_name"]]
            assert find_statement_page(pages, kind, ev["row_label"]) == ev["evidence_page_num"], (
                row["financebench_id"],
                ev,
            )
            assert ev["figure"] in row_figures(pages[ev["evidence_page_num"]], ev["row_label"])


@pytest.mark.realdata
def test_the_questions_after_the_hand_written_ones_are_the_rules_draw(comparisons):
    """cmp_059-cmp_081 are exactly what :func:`~aethel_lite.studies.comparison_set.extension` draws from the
    pages, cmp_082 on what :func:`~aethel_lite.studies.comparison_set.analyst_extension` draws after them, and
    none of them names a statement."""
    from aethel_lite.studies.comparison_set import (
        ANALYST_PHRASES,
        FIRST_ANALYST,
        FIRST_HAND_WRITTEN,
        analyst_extension,
        extension,
    )

    about = {
        p.doc_id: (p.meta["company"], p.meta["doc_type"], p.meta["doc_period"]) for p in comparisons.passages
    }
    filings = _filings(comparisons)
    drawn = extension(filings, about, ROWS[:FIRST_HAND_WRITTEN])
    assert drawn == ROWS[FIRST_HAND_WRITTEN : FIRST_ANALYST - 1]
    analyst = analyst_extension(filings, about, ROWS[: FIRST_ANALYST - 1])
    assert analyst == ROWS[FIRST_ANALYST - 1 :]
    assert {r["metric"] for r in analyst} == set(ANALYST_PHRASES)
    drawn += analyst
    statement = re.compile(
        r"balance sheet|income statement|cash flow statement|statement of|financial position", re.I
    )
    assert not any(statement.search(r["question"]) for r in drawn)


def _printed(figure: str):
    return re.compile(rf"(?<![\d,.]){re.escape(figure)}(?![\d,]|\.\d)")


@pytest.mark.realdata
def test_no_other_filing_has_the_figure_and_no_filing_holds_both_years(comparisons):
    filings = _filings(comparisons)
    about = {
        p.doc_id: (p.meta["company"], p.meta["doc_type"], p.meta["doc_period"]) for p in comparisons.passages
    }
    for row in ROWS:
        for ev in row["evidence"]:
            company = about[ev["doc_name"]][0]  # the evidence's own company
            printed = _printed(ev["figure"])
            for doc, pages in filings.items():
                if doc == ev["doc_name"]:
                    continue
                if about[doc][0] == company:  # the company's other filings never print the figure
                    hits = [n for n, t in pages.items() if printed.search(t)]
                else:  # other companies' filings never have the row with it
                    hits = [
                        n
                        for n, t in pages.items()
                        if ev["figure"] in t and ev["figure"] in row_figures(t, ev["row_label"])
                    ]
                assert hits == [], (row["financebench_id"], ev["figure"], doc, hits)
        if row["question_type"] == "comparison-two-years":
            span = 2 if METRIC_STATEMENT[row["metric"]] == "balance" else 3
            years = {ev["fiscal_year"] for ev in row["evidence"]}
            for doc, (c, doc_type, period) in about.items():
                if c == company and doc_type == "10k":
                    assert len(years & set(range(period - span + 1, period + 1))) <= 1, (
                        row["financebench_id"],
                        doc,
                    )


# ------------------------------------------------------------------------------- the study
@pytest.fixture(scope="module")
def quick_study(real_data, run_cache):
    from aethel_lite.studies.comparisons import comparison_study

    require(real_data / "financebench" / "pages.jsonl.gz")
    with pytest.MonkeyPatch.context() as mp:  # the hybrid chapter's test encodes the same sample
        mp.setenv("AETHEL_CACHE", str(run_cache))
        return comparison_study(quick=True, n_resamples=500, log=None)


def test_study_anchors_every_comparison_and_leaves_single_filings_alone(quick_study):
    """Every comparison question names two anchors; aethel-anchors ranks a FinanceBench question with fewer as
    aethel-hybrid does (its per-question metrics equal), and the ones it ranks differently are counted
    (aethel-statements lifts a one-anchor question's statement pages: tests/retrievers/test_statements.py)."""
    s = quick_study
    assert s["anchored"]["two_or_more"] == s["anchored"]["questions"] == s["comparisons"]["all"]["n"] == 8
    single = s["single"]
    assert single["identical"] >= single["n"] - single["anchored"]
    per_half = {h: s["comparisons"][h]["n"] for h in ("dev", "test")}
    assert per_half == {"dev": 4, "test": 4}
    for half in ("dev", "test", "all"):
        block = s["comparisons"][half]
        for method in s["methods"]:
            cell = block["ci"][method]["all"]["AllSupport@10"]
            assert cell["ci_low"] <= cell["mean"] <= cell["ci_high"] and 0 <= cell["mean"] <= 1
        assert {(t["a"], t["b"]) for t in block["tests"]} == set(COMPARISON_PAIRS)
        ablation = s["ablation"][half]
        assert ablation["steps"] == ["aethel-anchors", STATEMENTS_UNORDERED, "aethel-statements"]
        for step in ("aethel-anchors", "aethel-statements"):  # the same runs as the main table's
            assert ablation["ci"][step]["all"]["AllSupport@10"] == block["ci"][step]["all"]["AllSupport@10"]
        leave = s["leave_out"][half]
        assert leave["parts"] == list(STATEMENTS_WITHOUT)
        cell = leave["ci"]["aethel-statements"]["all"]["AllSupport@10"]
        assert cell == block["ci"]["aethel-statements"]["all"]["AllSupport@10"]
        assert {(t["a"], t["b"]) for t in leave["tests"]} == {
            ("aethel-statements", p) for p in STATEMENTS_WITHOUT
        }
    values = list(s["per_query"]["aethel-anchors"].values())
    assert s["comparisons"]["all"]["ci"]["aethel-anchors"]["all"]["AllSupport@10"]["mean"] == pytest.approx(
        sum(values) / len(values)
    )


def test_headline_says_what_the_file_says(quick_study):
    from aethel_lite.studies.comparisons import comparisons_headline, statements_ablation

    frame, verdict = comparisons_headline(quick_study)
    assert list(frame["method"]) == ["bm25", "dense", "aethel-hybrid", "aethel-anchors", "aethel-statements"]
    mean = quick_study["comparisons"]["test"]["ci"]["aethel-anchors"]["all"]["AllSupport@10"]["mean"]
    assert f"{100 * mean:.0f}%" in verdict and verdict.startswith("Quick build")
    mean = quick_study["comparisons"]["test"]["ci"]["aethel-statements"]["all"]["AllSupport@10"]["mean"]
    assert f"`aethel-statements` finds both gold pages for {100 * mean:.0f}%" in verdict
    table, said = statements_ablation(quick_study)
    assert len(table) == 3 + len(STATEMENTS_WITHOUT)
    kinds = len([k for k, t in quick_study["by_kind_tests"]["test"].items() if t])
    assert said.count("against") == 2 + len(STATEMENTS_WITHOUT) + kinds


def test_the_study_is_deterministic(quick_study, run_cache, monkeypatch):
    """A second run, reading the stores back, gives the same file (the hybrid chapter runs once in CI)."""
    from aethel_lite.evaluation.runner import without_timing
    from aethel_lite.studies.comparisons import comparison_study

    monkeypatch.setenv("AETHEL_CACHE", str(run_cache))
    again = comparison_study(quick=True, n_resamples=500, log=None)
    assert without_timing(again) == without_timing(quick_study)
