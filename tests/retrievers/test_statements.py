"""Statement pages first (:class:`StatementsRetriever`, ``aethel-statements``): which pages are statements and
their rows (on real filings, against the hand-checked pages of the comparison set), the line items a question
names, each anchor's first places going to its filing's matching statement pages, the stage's settings checked
in ``fit``, its files, and the stages built over fitted ones (``prefit``) ranking as the registry's."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import require
from test_hybrid_retriever import _page  # one filing page with the loader's metadata

from aethel_lite.data.docmeta import DocMeta
from aethel_lite.data.line_items import words
from aethel_lite.data.loaders import load_financebench
from aethel_lite.data.schema import Query
from aethel_lite.data.statement_pages import STATEMENTS_FILE, StatementPages
from aethel_lite.data.statements import row_figures, row_labels, statement_kind
from aethel_lite.errors import DataError, ParameterError
from aethel_lite.retrievers import (
    AnchorsRetriever,
    GraphRetriever,
    HybridRetriever,
    StatementsRetriever,
    clone,
    params_json,
)
from aethel_lite.retrievers.anchors import Anchor
from aethel_lite.retrievers.registry import make_retriever
from aethel_lite.retrievers.statements import anchor_filing, quarter_filing, statements_first
from aethel_lite.studies.comparisons import METRIC_STATEMENT

BALANCE = """ACME WIDGETS INC.
CONSOLIDATED BALANCE SHEETS
(In millions)
Fiscal Year
2019
2018
Cash and cash equivalents
$
100
$
90
Total assets ........ 900 800
Total liabilities
400
(300)
Commitments and contingencies (Note 9)
"""
OPERATIONS = "CONSOLIDATED STATEMENTS OF OPERATIONS\nRevenue\n500\n450\nNet income (loss)\n50\n(40)\n"


def test_a_statement_page_is_known_by_its_title_lines_not_by_a_mention():
    assert statement_kind(BALANCE) == "balance"
    assert statement_kind(OPERATIONS) == "income"
    assert statement_kind("Consolidated Statements of Cash Flows (continued)\nNet income\n5\n") == "cashflow"
    assert statement_kind("Balance Shee t\nTotal assets\n5\n") == "balance"  # PDF text splits words
    assert (
        statement_kind("Index\nConsolidated Balance Sheets 52\nConsolidated Statements of Operations 53\n")
        is None
    )
    assert statement_kind("Our balance sheet remained strong.\nTotal assets\n5\n") is None
    # quarterly reports and earnings releases: "Condensed", "(Unaudited)" (Foot Locker's Q3 2022 10-Q)
    assert (
        statement_kind("CONDENSED CONSOLIDATED BALANCE SHEETS\n(Unaudited)\nTotal assets\n5\n") == "balance"
    )
    assert (
        statement_kind("Condensed Consolidated Statements of Earnings (Unaudited)\nRevenue\n5\n") == "income"
    )
    # a contents page lists two statements' titles, one per line, the page numbers on lines of their own
    contents = "Item 1. Financial Statements\nCondensed Consolidated Balance Sheets (Unaudited)\n1\n"
    contents += "Condensed Consolidated Statements of Operations (Unaudited)\n2\n"
    assert statement_kind(contents) is None
    assert statement_kind("Condensed notes\nTotal assets\n5\n") is None
    assert (
        statement_kind("\n".join(["filler"] * 12 + ["CONSOLIDATED BALANCE SHEETS"])) is None
    )  # too far down


def test_rows_are_labels_with_figures_and_a_year_header_is_not_one():
    assert row_labels(BALANCE) == ["Cash and cash equivalents", "Total assets", "Total liabilities"]
    assert row_labels(OPERATIONS) == ["Revenue", "Net income (loss)"]
    assert row_labels("May 31,\n2023\nSept. 30, 2022\nRevenue\n5\n") == ["Revenue"]  # dates head columns
    assert row_figures(BALANCE, "total liabilities") == ["400", "(300)"]
    assert row_figures(BALANCE, "Commitments and contingencies") == []


def test_words_drop_plurals_and_function_words():
    assert words("Total liabilities and the Net Losses") == {"total", "liability", "net", "loss"}
    assert words("gross margin status, expenses") == {"gross", "margin", "status", "expense"}
    assert words("assets of the company") == words("Asset company")


def _stmt_page(doc, page, text, company):
    return _page(doc, page, text, company, 2019)


def _balance(total):
    return f"CONSOLIDATED BALANCE SHEETS\nCash and cash equivalents\n10\n9\nTotal assets\n{total}\n{total - 50}\n"


PASSAGES = [
    _stmt_page("ACME_2019", 0, "Acme Widgets annual report 2019. Total assets grew; total assets by segment.", "Acme Widgets"),
    _stmt_page("ACME_2019", 1, "Acme Widgets discussion: total assets rose, total assets per share rose.", "Acme Widgets"),
    _stmt_page("ACME_2019", 2, _balance(900), "Acme Widgets"),
    _stmt_page("ACME_2019", 3, "CONSOLIDATED STATEMENTS OF OPERATIONS\nRevenue\n500\n450\nNet income\n50\n40\n", "Acme Widgets"),
    _stmt_page("BOLT_2019", 0, "Bolt Motors annual report 2019. Total assets rose; total assets by region.", "Bolt Motors"),
    _stmt_page("BOLT_2019", 1, "Bolt Motors discussion of total assets: total assets increased.", "Bolt Motors"),
    _stmt_page("BOLT_2019", 2, _balance(400), "Bolt Motors"),
    _stmt_page("BOLT_2019", 3, "CONSOLIDATED STATEMENTS OF CASH FLOWS\nNet income\n20\n18\n", "Bolt Motors"),
    _stmt_page("CORA_2019", 0, "Cora Foods annual report 2019. Total assets.", "Cora Foods"),
]  # fmt: skip
COMPARE = "Which had more total assets in FY2019, Acme Widgets or Bolt Motors?"
NO_ITEM = "Which had more employees in FY2019, Acme Widgets or Bolt Motors?"
ONE = "What were Acme Widgets' total assets in FY2019?"
SETTINGS = dict(  # aethel-hybrid's defaults otherwise
    passage_seeds=("lexical",),
    seed_depth=3,
    seed_weights={"entity": 1.0, "metadata": 3.0, "lexical": 1.0},
    rank_weights={"document": 0.4, "lexical": 0.6},
)


def anchors_of(**stage) -> AnchorsRetriever:
    """The unfitted anchors stage of these tests: over a hybrid of :data:`SETTINGS` over regex entities."""
    return AnchorsRetriever(
        HybridRetriever(GraphRetriever(extractor="regex", bct="none"), **SETTINGS), **stage
    )


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    import os

    os.environ["AETHEL_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    anchored = anchors_of().fit(PASSAGES)
    return anchored, StatementsRetriever(anchored, prefit=True).fit(PASSAGES)


def _top(r, text, k):
    return [pid for pid, _ in r.search([Query("q", text, frozenset())], k=k)["q"]]


def test_the_fit_reads_the_statement_pages_and_their_line_items(pair):
    _, r = pair
    s = r.pages_
    assert s.kind_ == {2: "balance", 3: "income", 6: "balance", 7: "cashflow"}
    assert s.by_doc_ == {"ACME_2019": (2, 3), "BOLT_2019": (6, 7)}
    # line items: rows on the statement pages of two documents ("Revenue" is Acme's alone)
    assert set(s.items_) == {words("Cash and cash equivalents"), words("Net income"), words("Total assets")}
    assert s.names_item(COMPARE) and not s.names_item(NO_ITEM) and not s.names_item("Revenue of Acme?")
    assert not hasattr(pair[0], "pages_")  # the anchors stage reads none


def test_each_anchor_gives_its_first_place_to_its_statement_page(pair):
    anchored, statements = pair
    assert set(_top(statements, COMPARE, 2)) == {"ACME_2019#p2", "BOLT_2019#p2"}
    # without the setting the pages that mention "total assets" most come first
    assert not {"ACME_2019#p2", "BOLT_2019#p2"} <= set(_top(anchored, COMPARE, 2))


def test_questions_without_a_line_item_or_a_second_anchor_rank_as_before(pair):
    anchored, statements = pair
    for text in (NO_ITEM, ONE):
        a = anchored.search([Query("q", text, frozenset())], k=9)["q"]
        b = statements.search([Query("q", text, frozenset())], k=9)["q"]
        assert a == b


def test_unanchored_lifts_a_question_with_one_anchor_in_the_hybrids_ranking(pair):
    """``unanchored=True`` (the registry's ``aethel-statements``): a question naming one company and a line item
    gets its filing's matching statement page first, the rest in the hybrid's order; a question naming no line
    item ranks as before; a comparison as without the setting."""
    anchored, statements = pair
    lifted = clone(statements).set_params(anchors=anchored, unanchored=True).fit(PASSAGES)
    q = [Query("q", ONE, frozenset())]
    before, after = anchored.search(q, k=9)["q"], lifted.search(q, k=9)["q"]
    assert before[0][0] != "ACME_2019#p2" and after[0][0] == "ACME_2019#p2"  # Acme's balance sheet
    assert [pid for pid, _ in after[1:]] == [pid for pid, _ in before if pid != "ACME_2019#p2"]
    for text in (NO_ITEM, COMPARE):
        q = [Query("q", text, frozenset())]
        assert lifted.search(q, k=9)["q"] == statements.search(q, k=9)["q"]
    assert make_retriever("aethel-statements").get_params()["unanchored"] is True
    with pytest.raises(ParameterError, match="unanchored must be True or False"):
        clone(statements).set_params(unanchored="yes").fit(PASSAGES)


def test_statements_first_orders_the_lifted_pages_by_match_then_by_the_anchor():
    pages = StatementPages().fit(PASSAGES)
    doc_ids = [p.doc_id for p in PASSAGES]
    scores = np.array([0.9, 0.8, 0.1, 0.2, 0.5, 0.4, 0.3, 0.6, 0.0])
    out = statements_first(scores, None, pages, doc_ids, "Acme Widgets total assets")
    assert list(np.argsort(-out, kind="stable"))[:1] == [
        2
    ]  # Acme's (the first passage's filing) balance sheet
    assert np.array_equal(
        np.delete(out, 2), np.delete(scores, 2)
    )  # the rest as they were; "Net income" not asked
    out = statements_first(scores, None, pages, doc_ids, "Acme Widgets total assets and net income")
    assert list(np.argsort(-out, kind="stable"))[:2] == [3, 2]  # equal matches: the anchor's order
    same = statements_first(scores, None, pages, doc_ids, "Acme Widgets employees")
    assert same is scores
    # off the candidates a page is not lifted
    out = statements_first(scores, np.array([0, 1, 3]), pages, doc_ids, "Acme total assets and net income")
    assert out[2] == scores[2] and out[3] > scores[0]


def test_the_quarter_s_filing_is_the_first_of_the_best_ten_pages_filings_that_carries_it():
    """A quarter's question whose first page is another quarter's release (Lockheed Martin's Q1 release first for
    "net sales for the quarter ended June 25, 2023"): the lift reads the filing of the first of the ten best pages
    whose metadata carries the quarter named and names the first page's company; none named, or none carrying it in
    the ten: None (the first page's)."""
    doc_ids = ["Q1"] * 3 + ["Q2"] * 3 + ["K"] * 12
    periods = {"Q1": ["2023", "2023q1"], "Q2": ["2023", "2023q2"], "K": ["2022"], "X": ["2023", "2023q2"]}
    lime = {d: DocMeta(d, companies=["other" if d == "X" else "lime"], periods=p) for d, p in periods.items()}
    scores = np.array([9.0, 8, 0, 7, 0, 0, *[1.0] * 12])
    assert quarter_filing(scores, None, doc_ids, ["2023q2"], lime) == "Q2"  # Q2's page is third
    assert quarter_filing(scores, None, doc_ids, ["2023q1"], lime) == "Q1"
    assert quarter_filing(scores, None, doc_ids, [], lime) is None
    assert quarter_filing(scores, None, doc_ids, ["2023q3"], lime) is None
    late = np.array([9.0, 8, 0, -1, -1, -1, *[1.0] * 12])  # Q2's pages below eleven others
    assert quarter_filing(late, None, doc_ids, ["2023q2"], lime) is None
    assert quarter_filing(late, None, doc_ids, ["2023q2"], lime, depth=18) == "Q2"
    assert quarter_filing(scores, np.arange(6, 18), doc_ids, ["2023q2"], lime) is None  # no Q2 in the pool
    # another company's filing of the quarter is never the one lifted
    other = ["Q1"] * 3 + ["X"] * 3 + ["K"] * 12
    assert quarter_filing(scores, None, other, ["2023q2"], lime) is None


def _release(quarter: str, ended: str, sales: str) -> list:
    doc = f"LIME_2023{quarter}"
    return [
        _page(doc, 0, f"Lime Corp reports its results for the quarter ended {ended}.", "Lime Corp", 2023, "10q"),
        _page(doc, 1, "Lime Corp discussion of net sales by segment.", "Lime Corp", 2023, "10q"),
        _page(doc, 2, f"CONSOLIDATED STATEMENTS OF EARNINGS\nNet sales\n{sales}\nNet earnings\n1,689\n1,732\n",
              "Lime Corp", 2023, "10q"),
    ]  # fmt: skip


RELEASES = [
    *_release("Q1", "March 26, 2023", "15,126\n15,789"),
    *_release("Q2", "June 25, 2023", "16,693\n16,399"),
    _page(
        "LIME_2022", 0, _balance(900), "Lime Corp", 2022
    ),  # another statement: the row words weigh more than 0
]


def test_the_stage_reads_the_quarter_named_from_the_hybrid_s_metadata():
    """Each quarter's question gets its own release's statement page first (the stage reads the quarters the
    question names and each filing's periods from the hybrid it holds); a question naming no quarter ranks the
    same with or without ``quarter_filing``, which ``fit`` checks."""
    anchored = anchors_of().fit(RELEASES)
    stages = {
        setting: StatementsRetriever(anchored, unanchored=True, quarter_filing=setting, prefit=True).fit(
            RELEASES
        )
        for setting in (True, False)
    }
    for ended, doc in (("March 26, 2023", "LIME_2023Q1"), ("June 25, 2023", "LIME_2023Q2")):
        text = f"What were Lime Corp's net sales for the quarter ended {ended}?"
        assert _top(stages[True], text, 1) == [f"{doc}#p2"]
        assert stages[True]._quarter_filing(text, np.zeros(len(RELEASES)), None) == doc
    year = [Query("q", "What were Lime Corp's net sales in 2023?", frozenset())]
    assert stages[True].search(year, k=6) == stages[False].search(year, k=6)
    with pytest.raises(ParameterError, match="quarter_filing must be True or False"):
        StatementsRetriever(anchored, quarter_filing=1, prefit=True).fit(RELEASES)


@pytest.mark.parametrize(
    "stage, match",
    [
        (dict(order="pages"), "order must be"),
        (dict(anchors=anchors_of(anchor_gap=0)), "anchor_gap"),
        (dict(anchors=AnchorsRetriever(HybridRetriever(metadata=False))), "metadata=True"),
        (dict(anchors=AnchorsRetriever(HybridRetriever(seed_depth=0))), "seed_depth"),
        (dict(min_docs="2"), "min_docs"),
        (dict(min_word="x"), "min_word"),
    ],
)
def test_settings_are_checked_by_fit(stage, match):
    """A bad setting of the stage, or of a stage or hybrid it holds, is taken as given by the constructor and by
    ``set_params``; ``fit`` refuses it, naming it, before fitting anything."""
    built = StatementsRetriever(**{"anchors": anchors_of(), **stage})  # not checked here
    changed = StatementsRetriever(anchors_of()).set_params(**stage)  # nor here
    for r in (built, changed):
        with pytest.raises(ParameterError, match=match):
            r.fit(PASSAGES)
        assert not r.is_fitted and not hasattr(r, "anchors_") and not r.anchors.is_fitted


def test_registry_method_is_the_stage_over_aethel_anchors():
    """``aethel-statements`` holds ``aethel-anchors``' settings (its cache keys as they were) and its own."""
    r = make_retriever("aethel-statements")
    assert isinstance(r, StatementsRetriever) and isinstance(r.anchors, AnchorsRetriever)
    assert (r.min_docs, r.min_word, r.order, r.prefit) == (2, 1.0, "match", False)
    settings, anchors = params_json(r), params_json(make_retriever("aethel-anchors"))
    assert settings["class"] == "StatementsRetriever" and settings["anchors"] == anchors
    assert "order" not in anchors and "min_docs" not in anchors
    assert r.parts() == [*make_retriever("aethel-anchors").parts(), "statements"]
    assert make_retriever("aethel-statements", graph={"n_process": 2}).anchors.hybrid.graph.n_process == 2


# ------------------------------------------------------------------------------- on the real pages
ROWS = [
    json.loads(line)
    for line in (Path(__file__).parents[2] / "aethel_lite/manifests/financebench_comparisons.jsonl").open()
]


@pytest.fixture(scope="module")
def real(real_data: Path):
    require(real_data / "financebench" / "pages.jsonl.gz")
    data = load_financebench(real_data / "financebench", questions="comparisons")
    return data, StatementPages().fit(data.passages)


@pytest.mark.realdata
def test_on_real_filings_every_gold_page_is_its_statement_and_ranks_among_its_filings_first(real):
    """The 208 gold pages of the comparison set: each is recognised as the statement that holds its metric and has
    the row the evidence names. Among its filing's statement pages ranked by their match to the question, the
    162 of the questions worded before line items by meaning are within the first six by their words alone (an
    anchor's share of ten places and one more), within the first three for 158 and the first for 97; lifted by
    meaning (:func:`statements_first`, the statement that reports the item), all 208 are first or second and
    206 first, as measured. The 74 filings have 240 statement pages (their contents pages are not; the
    quarterly reports' and earnings releases' condensed statements are)."""
    data, pages = real
    index = {p.pid: i for i, p in enumerate(data.passages)}
    doc_ids = [p.doc_id for p in data.passages]
    assert len(pages.kind_) == 240 and sorted(set(pages.kind_.values())) == ["balance", "cashflow", "income"]
    places, lifted = [], []
    for n, row in enumerate(ROWS):
        for ev in row["evidence"]:
            gold = index[f"{ev['doc_name']}#p{ev['evidence_page_num']}"]
            text = data.passages[gold].text
            assert pages.kind_[gold] == METRIC_STATEMENT[row["metric"]], (row["financebench_id"], ev)
            assert ev["row_label"].casefold() in [x.casefold() for x in row_labels(text)]
            if n < 81:  # by words alone
                found = pages.match(row["question"], pages.by_doc_[ev["doc_name"]])
                places.append(sorted(found, key=lambda i: (-found[i], i)).index(gold))
            zero = np.zeros(len(doc_ids))
            out = statements_first(
                zero, None, pages, doc_ids, row["question"], doc=ev["doc_name"], meanings=True
            )
            order = [int(i) for i in np.argsort(-out, kind="stable") if out[i] > 0]
            lifted.append(order.index(gold) if gold in order else len(order) + 99)
    assert len(places) == 162 and max(places) <= 5 and sum(p <= 2 for p in places) >= 158
    assert places.count(0) >= 97
    assert len(lifted) == 208 and max(lifted) <= 1 and lifted.count(0) >= 206


def test_search_from_an_index_equals_the_fitted_retriever(tmp_path, capsys, monkeypatch):
    """``aethel index`` + ``aethel search --method aethel-statements`` rank as the registry's retriever fitted on
    the same passages (the statement pages are read again from the index's passages)."""
    from aethel_lite.cli import main
    from aethel_lite.core.encoders import INDEX_PRECISION, PRECISION_ENV

    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(PRECISION_ENV, INDEX_PRECISION)  # the registry's retriever embeds as the index does
    passages = tmp_path / "passages.jsonl"
    passages.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in PASSAGES))
    out = tmp_path / "index"
    assert main(["index", str(passages), "--out", str(out), "--methods", "aethel-statements", "--quiet"]) == 0
    fitted = make_retriever("aethel-statements").fit(PASSAGES)
    for text in (COMPARE, NO_ITEM, ONE):
        capsys.readouterr()
        assert main(["search", str(out), text, "-k", "4", "--method", "aethel-statements", "--json"]) == 0
        hits = json.loads(capsys.readouterr().out)["hits"]
        assert [h["pid"] for h in hits] == [
            pid for pid, _ in fitted.search([Query("q", text, frozenset())], k=4)["q"]
        ]
    capsys.readouterr()
    assert main(["search", str(out), COMPARE, "-k", "2", "--method", "aethel-statements", "--json"]) == 0
    assert {h["pid"] for h in json.loads(capsys.readouterr().out)["hits"]} == {"ACME_2019#p2", "BOLT_2019#p2"}


def test_the_statement_pages_are_saved_as_json_and_read_back(tmp_path):
    from aethel_lite.errors import DataError

    pids = [p.pid for p in PASSAGES]
    pages = StatementPages(order="anchor").fit(PASSAGES)
    pages.save(tmp_path / "statements.json", pids)
    back = StatementPages.load(tmp_path / "statements.json", pids)
    for name in (
        "kind_",
        "labels_",
        "weight_",
        "items_",
        "by_doc_",
        "doc_of_",
        "order",
        "min_docs",
        "min_word",
    ):
        assert getattr(back, name) == getattr(pages, name), name
    (tmp_path / "bad.json").write_text('{"format": 1, "pages": [')
    with pytest.raises(DataError, match="bad.json: unreadable statement pages"):
        StatementPages.load(tmp_path / "bad.json", pids)
    with pytest.raises(DataError, match="statements.json"):  # a page the corpus does not have
        StatementPages.load(tmp_path / "statements.json", pids[:3])


def test_prefit_stages_over_fitted_ones_rank_as_the_registry_method():
    """``StatementsRetriever(prefit=True)`` over ``AnchorsRetriever(prefit=True)`` over ``aethel-hybrid``, each
    fitted on the same passages, ranks exactly as ``aethel-statements`` fitted from scratch (the same run, open
    corpus and closed pools), and the hybrid is the one given, used as it is."""
    hybrid = make_retriever("aethel-hybrid").fit(PASSAGES)
    anchored = AnchorsRetriever(hybrid=hybrid, anchor_gap=2, prefit=True).fit(PASSAGES)
    stage = StatementsRetriever(anchors=anchored, unanchored=True, prefit=True).fit(PASSAGES)
    assert stage.anchors_ is anchored and stage.ranker_ is hybrid
    fresh = make_retriever("aethel-statements").fit(PASSAGES)
    assert not fresh.anchors.is_fitted and fresh.anchors_ is not fresh.anchors  # it fitted a clone
    qs = [Query(f"q{i}", text, frozenset()) for i, text in enumerate((COMPARE, NO_ITEM, ONE))]
    got, want = stage.search(qs, k=len(PASSAGES)), fresh.search(qs, k=len(PASSAGES))
    assert got == want and got.name == want.name
    assert {pid for pid, _ in got["q0"][:2]} == {"ACME_2019#p2", "BOLT_2019#p2"}  # the lift took place
    pool = {q.qid: [p.pid for p in PASSAGES if p.doc_id != "CORA_2019"] for q in qs}
    assert stage.search(qs, k=5, pool=pool) == fresh.search(qs, k=5, pool=pool)
    # the same for the anchors stage alone
    assert anchored.search(qs, k=len(PASSAGES)) == make_retriever("aethel-anchors").fit(PASSAGES).search(
        qs, k=len(PASSAGES)
    )


def test_save_and_load_rank_as_the_fitted_stage(pair, tmp_path):
    """``save`` writes the anchors stage's files and ``statements.json``; ``load`` with the stage's settings ranks
    as the fitted stage (the statement pages read back, not from the passages)."""
    anchored, statements = pair
    files = statements.save(tmp_path)
    assert files == sorted([*anchored.save(tmp_path / "anchors"), STATEMENTS_FILE])
    assert {f.split("/")[0].removesuffix(".json") for f in files} - {"ids"} == set(statements.parts())
    back = StatementsRetriever.load(tmp_path, anchors=anchors_of())
    for name in ("kind_", "labels_", "weight_", "items_", "by_doc_", "doc_of_"):
        assert getattr(back.pages_, name) == getattr(statements.pages_, name), name
    qs = [Query(f"q{i}", text, frozenset()) for i, text in enumerate((COMPARE, NO_ITEM, ONE))]
    assert back.search(qs, k=len(PASSAGES)) == statements.search(qs, k=len(PASSAGES))
    with pytest.raises(ParameterError, match="order must be"):
        StatementsRetriever.load(tmp_path, anchors=anchors_of(), order="pages")
    (tmp_path / STATEMENTS_FILE).unlink()
    with pytest.raises(DataError, match=STATEMENTS_FILE):
        StatementsRetriever.load(tmp_path, anchors=anchors_of())


def test_clone_is_an_unfitted_copy_of_the_setting(pair):
    from sklearn.base import clone as sk_clone

    _, statements = pair
    setting = StatementsRetriever(anchors_of(anchor_gap=3), order="anchor")
    for copy in (clone(setting), sk_clone(setting)):
        assert params_json(copy) == params_json(setting) and copy.anchors is not setting.anchors
        assert not copy.is_fitted and not copy.anchors.is_fitted
    deep = statements.get_params(deep=True)
    assert (
        deep["anchors__hybrid__graph__extractor"] == "regex"
        and deep["prefit"]
        and not deep["anchors__prefit"]
    )


#: one filing's income statement and cash-flow statement, both printing "Net income"; another filing's balance sheet
#: so that the row words weigh more than nothing
KIND_PAGES = [
    _page("PINE_2019", 0, "Pine Tools annual report 2019. Net earnings grew; capital spending rose.", "Pine Tools", 2019),
    _page("PINE_2019", 1, "CONSOLIDATED STATEMENTS OF OPERATIONS\nNet sales\n500\n450\nOperating income\n80\n70\n"
          "Net income\n50\n40\n", "Pine Tools", 2019),
    _page("PINE_2019", 2, "CONSOLIDATED STATEMENTS OF CASH FLOWS\nNet income\n50\n40\n"
          "Purchases of property and equipment\n(30)\n(20)\n", "Pine Tools", 2019),
    _page("OAK_2019", 0, _balance(700), "Oak Mills", 2019),
    _page("OAK_2019", 1, "CONSOLIDATED STATEMENTS OF CASH FLOWS\nNet income\n9\n8\nPurchases of property and "
          "equipment\n(3)\n(2)\n", "Oak Mills", 2019),
    _page("OAK_2019", 2, "CONSOLIDATED STATEMENTS OF EARNINGS\nNet sales\n90\n80\nOperating income\n12\n10\n"
          "Net income\n9\n8\n", "Oak Mills", 2019),
]  # fmt: skip


def test_line_items_by_meaning_match_an_analysts_words_to_the_statement_that_reports_them():
    """ "income from operations", "net earnings" and "capex" share no line item's words ("Operating income", "Net
    income", "Purchases of property and equipment"); by meaning they name them, and only the statement that reports
    the item is lifted (the income statement for net income, not the cash-flow statement that starts from it)."""
    pages = StatementPages().fit(KIND_PAGES)
    doc_ids = [p.doc_id for p in KIND_PAGES]
    scores = np.array([0.9, 0.1, 0.2, 0.0, 0.0, 0.0])
    for text, first in (
        ("Pine Tools' income from operations in 2019", 1),
        ("Pine Tools' net earnings in 2019", 1),
        ("Pine Tools' capex in 2019", 2),
    ):
        assert not pages.names_item(text) and pages.names_item(text, meanings=True), text
        assert statements_first(scores, None, pages, doc_ids, text) is scores  # by words: no lift
        out = statements_first(scores, None, pages, doc_ids, text, meanings=True)
        assert int(np.argmax(out)) == first, text
        lifted = [i for i in range(len(scores)) if out[i] > scores.max()]
        assert lifted == [first], text  # only the statement that reports the item
    # without the statement kind both statements printing "Net income" are lifted, in the ranking's order
    out = statements_first(
        scores, None, pages, doc_ids, "Pine Tools' net earnings", meanings=True, statement_kind=False
    )
    assert list(np.argsort(-out, kind="stable"))[:2] == [2, 1]
    assert {"operation", "operating"} <= pages.question_words("income from operations", meanings=True)
    assert "operating" not in pages.question_words("income from operations")


def test_each_anchor_lifts_the_filing_of_its_company_and_year():
    """An anchor's first page may be another year's filing of its company (a long 10-K sharing the question's
    words): the filing lifted is that of the first of its thirty best pages whose metadata carries the anchor's year
    and company, an annual report first when no quarter is named; none among them: None (the first page's)."""
    doc_ids = ["K18"] * 4 + ["K22"] * 2 + ["X22"] * 2 + ["K20"] * 10
    metas = {
        "K18": DocMeta("K18", ["cvs health"], ["2018"]),
        "K22": DocMeta("K22", ["cvs health"], ["2022"]),
        "X22": DocMeta("X22", ["pepsico"], ["2022"]),
        "K20": DocMeta("K20", ["cvs health"], ["2020"]),
    }
    scores = np.array([9.0, 8, 7, 6, 2, 1, 5, 4, *[0.5] * 10])
    assert anchor_filing(scores, None, doc_ids, ["2022"], ["cvs health"], metas) == "K22"
    assert anchor_filing(scores, None, doc_ids, ["2022"], ["pepsico"], metas) == "X22"
    assert anchor_filing(scores, None, doc_ids, ["2018"], ["cvs health"], metas) == "K18"
    assert anchor_filing(scores, None, doc_ids, ["2021"], ["cvs health"], metas) is None
    assert anchor_filing(scores, None, doc_ids, [], ["cvs health"], metas) is None
    assert anchor_filing(scores, None, doc_ids, ["2022"], [], metas) is None
    late = np.array([9.0, 8, 7, 6, 0, 0, 0, 0, *[1.0] * 10])  # K22 below ten other pages
    assert anchor_filing(late, None, doc_ids, ["2022"], ["cvs health"], metas, depth=10) is None
    assert anchor_filing(late, None, doc_ids, ["2022"], ["cvs health"], metas) == "K22"  # thirty deep
    # a fiscal year's question: the year's annual report before its fourth quarter's release, even when lower;
    # a quarter's question: the first filing carrying the quarter
    metas["R22"] = DocMeta("R22", ["cvs health"], ["2022", "2022q4"], ["earnings"])
    metas["K22"].types = ["10k"]
    released = ["R22"] * 4 + ["K22"] * 2 + ["X22"] * 2 + ["K20"] * 10
    assert anchor_filing(scores, None, released, ["2022"], ["cvs health"], metas) == "K22"
    assert anchor_filing(scores, None, released, ["2022q4"], ["cvs health"], metas) == "R22"
    metas["K22"].types = ["8k"]  # no annual report among them: the first
    assert anchor_filing(scores, None, released, ["2022"], ["cvs health"], metas) == "R22"


def test_the_stage_reads_an_anchors_company_and_year_from_its_seeds(pair):
    """The stage turns an anchor's seeds (``company:bolt_motors``, ``period:2019``) into the company keys and years
    the hybrid's metadata holds; ``anchor_filing=False`` lifts the first page's filing."""
    _, statements = pair
    anchor = Anchor(
        "company:bolt_motors", "company", ({"company:bolt_motors": 1.0}, {"period:2019": 1.0}, {})
    )
    scores = np.array([9.0, 8, 0, 0, 1, 0, 0, 0, 0])  # Acme's pages first
    assert statements._anchor_filing(anchor, scores, None) == "BOLT_2019"
    off = clone(statements).set_params(anchors=statements.anchors_, anchor_filing=False).fit(PASSAGES)
    assert off._anchor_filing(anchor, scores, None) is None
    for name in ("anchor_filing", "meanings", "statement_kind"):
        assert make_retriever("aethel-statements").get_params()[name] is True
        with pytest.raises(ParameterError, match=f"{name} must be True or False"):
            clone(statements).set_params(**{name: "yes"}).fit(PASSAGES)
