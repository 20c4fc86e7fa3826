"""`aethel memo --index`: the memo from an index of the user's own files, every figure cited by file and page.

Two indexes are built with `aethel index` (the default methods, bm25 + aethel-bct, which hold the
spaCy mentions the memo reads): one from a folder of small text filings written here, one from the
three FinanceBench PDFs (``$AETHEL_DATA/financebench/pdfs``; skipped without ``AETHEL_DATA``, a
failure when it is set and the PDFs are missing). Each memo's figures are checked against the
index's own passages: the cited file and page exist and the page's text holds the figure.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from conftest import require

from aethel_lite.cli import main
from aethel_lite.swarm.memo import AUDIT_HEADING, parse_audit_table

FILINGS = {
    "acme_2023_10k.txt": (
        "ACME WIDGETS, INC.\n(Exact name of registrant as specified in its charter)\n"
        "FORM 10-K\nAnnual report for the fiscal year ended December 31, 2023\n\n"
        "Acme Widgets designs and sells industrial widgets in North America.\n\n"
        "Liquidity. In fiscal 2023 Acme Widgets reported capital expenditures of $412.5 million. "
        "Cash and cash equivalents were $1,204.0 million at December 31, 2023.\n\n"
        "Debt. Long-term debt was $2,350.0 million at December 31, 2023.\n\n"
        "Legal proceedings. Acme Widgets is a defendant in patent litigation brought by a competitor.\n"
    ),
    "acme_2022_10k.txt": (
        "ACME WIDGETS, INC.\n(Exact name of registrant as specified in its charter)\n"
        "FORM 10-K\nAnnual report for the fiscal year ended December 31, 2022\n\n"
        "Liquidity. In fiscal 2022 Acme Widgets reported capital expenditures of $388.0 million. "
        "Cash and cash equivalents were $990.5 million at December 31, 2022.\n"
    ),
    "bolt_2023_10k.txt": (
        "BOLT MOTORS CORPORATION\n(Exact name of registrant as specified in its charter)\n"
        "FORM 10-K\nAnnual report for the fiscal year ended December 31, 2023\n\n"
        "Liquidity. In fiscal 2023 Bolt Motors reported capital expenditures of $77.1 million.\n"
    ),
    "crane_2023_10k.txt": (
        "CRANE FOODS HOLDINGS, INC.\n(Exact name of registrant as specified in its charter)\n"
        "FORM 10-K\nAnnual report for the fiscal year ended December 31, 2023\n\n"
        "Liquidity. In fiscal 2023 Crane Foods reported capital expenditures of $15.2 million.\n"
    ),
}
PDFS = (
    "COSTCO_2023_8K_dated-2023-08-16",
    "JOHNSON_JOHNSON_2023_8K_dated-2023-08-23",
    "MCDONALDS_2023Q1_EARNINGS",
)
_FIGURE = re.compile(r"\*\*([^*\n]+?)\*\*((?:\s?\[A\d+\])+)")


def _collapse(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AETHEL_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


def _index(paths, out: Path, methods: str = "bm25,aethel-bct") -> Path:
    assert main(["index", *map(str, paths), "--out", str(out), "--methods", methods, "--quiet"]) == 0
    return out


def memo(index: Path, target: str, out: Path, *extra: str) -> int:
    return main(["memo", "--index", str(index), "--target", target, "--out", str(out), "--quiet", *extra])


@pytest.fixture(scope="module")
def text_index(tmp_path_factory, cache):
    folder = tmp_path_factory.mktemp("filings")
    for name, text in FILINGS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return _index([folder], tmp_path_factory.mktemp("idx") / "text-index")


@pytest.fixture(scope="module")
def pdf_index(real_data, tmp_path_factory, cache):
    folder = real_data / "financebench" / "pdfs"
    for name in PDFS:
        require(folder / f"{name}.pdf")
    return _index([folder], tmp_path_factory.mktemp("idx") / "pdf-index")


def index_pages(index: Path) -> dict[tuple[str, str], str]:
    """(file name, page) → text of every passage of the index, read from its passages.jsonl."""
    out = {}
    for line in (index / "passages.jsonl").read_text(encoding="utf-8").splitlines():
        p = json.loads(line)
        meta = p["meta"]
        page = str(meta["page"] + 1) if "page" in meta else f"paragraph {meta['paragraph'] + 1}"
        out[(Path(meta["path"]).name, page)] = p["text"]
    return out


def check_citations(markdown: str, index: Path) -> tuple[int, int]:
    """Every audit row names a file and page of the index whose text holds its quote, and every
    bold figure cites rows whose page holds it; returns (audit rows, figures)."""
    pages = index_pages(index)
    rows = {r["Ref"]: r for r in parse_audit_table(markdown)}
    assert rows, "the memo has no audit trail"
    for r in rows.values():
        assert (r["File"], r["Page"]) in pages, (
            f"[{r['Ref']}] cites {r['File']}, page {r['Page']}: not in the index"
        )
        assert _collapse(r["Quote"]) in _collapse(pages[(r["File"], r["Page"])])
    figures = _FIGURE.findall(markdown.split(AUDIT_HEADING, 1)[0])
    for figure, refs in figures:
        for ref in re.findall(r"A\d+", refs):
            row = rows[ref]
            assert row["Figure"] == figure
            assert figure in _collapse(pages[(row["File"], row["Page"])]), (figure, row["File"], row["Page"])
    return len(rows), len(figures)


def test_memo_from_text_files_cites_file_and_paragraph(text_index, tmp_path):
    out = tmp_path / "acme.md"
    assert memo(text_index, "Acme Widgets", out, "--findings", str(tmp_path / "findings.json")) == 0
    md = out.read_text(encoding="utf-8")
    assert md.startswith("# Investment-committee memo: Acme Widgets")
    assert check_citations(md, text_index)[1] >= 4
    assert "| File | Page |" in md and "acme_2023_10k.txt" in md
    for figure in ("$412.5 million", "$388.0 million", "$1,204.0 million"):
        assert f"**{figure}**" in md
    assert "$77.1 million" not in md  # another company's figure
    records = json.loads((tmp_path / "findings.json").read_text())
    assert records and all(r["doc_id"].startswith("acme_") for r in records if r["kind"] == "fact")


def test_memo_from_the_financebench_pdfs_cites_file_and_page(pdf_index, tmp_path):
    """The release's statements are quarterly tables with change columns, which the extractor does
    not read as figures today: the memo's rows are quoted risk topics, each cited by file and PDF page."""
    out = tmp_path / "mcd.md"
    assert memo(pdf_index, "McDonald's", out) == 0
    md = out.read_text(encoding="utf-8")
    n_rows, _ = check_citations(md, pdf_index)  # every figure, if any, is checked too
    assert n_rows > 0
    rows = parse_audit_table(md)
    assert {r["File"] for r in rows} == {"MCDONALDS_2023Q1_EARNINGS.pdf"} and all(
        r["Page"].isdigit() for r in rows
    )


@pytest.mark.parametrize(
    "which, target, first",
    [
        ("text", "Acme Widgits", "Acme Widgets"),
        ("text", "Crane Food", "CRANE FOODS HOLDINGS"),
        ("pdf", "Costko", "Costco Wholesale"),
    ],
)
def test_an_unknown_target_lists_the_known_companies_closest_first(
    which, target, first, request, tmp_path, capsys
):
    index = request.getfixturevalue(f"{which}_index")
    out = tmp_path / "memo.md"
    capsys.readouterr()
    assert memo(index, target, out) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()
    listed = err.split("closest first: ", 1)[1].split(", ")
    assert listed[0] == first
    known = {"text": {"Acme Widgets", "Bolt Motors", "CRANE FOODS HOLDINGS"}}.get(
        which
    )  # as the filings print them
    if known:
        assert set(listed) == known


def test_an_existing_file_is_kept_unless_force(text_index, tmp_path, capsys):
    out = tmp_path / "notes.md"
    out.write_text("my own notes\n", encoding="utf-8")
    capsys.readouterr()
    assert memo(text_index, "Bolt Motors", out) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--force" in err and "notes.md" in err
    assert out.read_text(encoding="utf-8") == "my own notes\n"
    findings = tmp_path / "findings.json"
    findings.write_text('{"mine": true}\n', encoding="utf-8")
    assert memo(text_index, "Bolt Motors", tmp_path / "new.md", "--findings", str(findings)) == 2
    assert findings.read_text(encoding="utf-8") == '{"mine": true}\n' and not (tmp_path / "new.md").exists()
    assert memo(text_index, "Bolt Motors", out, "--force") == 0
    assert "**$77.1 million**" in out.read_text(encoding="utf-8")
    assert memo(text_index, "Bolt Motors", out) == 0  # a memo it wrote is replaced without --force
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_an_index_without_the_entities_names_the_rebuild_command(tmp_path, capsys, cache):
    folder = tmp_path / "filings"
    folder.mkdir()
    (folder / "bolt.txt").write_text(FILINGS["bolt_2023_10k.txt"], encoding="utf-8")
    index = _index([folder], tmp_path / "bm25-only", methods="bm25")
    capsys.readouterr()
    assert memo(index, "Bolt Motors", tmp_path / "memo.md") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "entities-ner" in err and f"aethel index {folder} --out {index} --methods bm25,aethel-bct" in err
    assert not (tmp_path / "memo.md").exists()


def test_memo_needs_one_corpus(tmp_path, capsys, text_index):
    assert main(["memo", "--target", "x", "--out", str(tmp_path / "m.md")]) == 2
    assert "--format" in capsys.readouterr().err
    assert (
        main(
            [
                "memo",
                "--format",
                "synthetic",
                "--index",
                str(text_index),
                "--target",
                "x",
                "--out",
                str(tmp_path / "m.md"),
            ]
        )
        == 2
    )


# --- figures of different lengths: real 10-Q statements ---------------------------------------------
#: cover, income statement, cash-flow statement of two FinanceBench 10-Qs: three months beside six
#: (Amcor, fiscal Q2) and beside nine (Apple, fiscal Q3) ended the same day
TENQ = {"AMCOR_2023Q2_10Q": (0, 4, 7), "APPLE_2023Q3_10Q": (0, 3, 7)}
_LENGTHS = r"(?:three|six|nine|twelve) months"


@pytest.fixture(scope="module")
def tenq_index(real_data, tmp_path_factory, cache):
    rows = []
    with gzip.open(require(real_data / "financebench" / "pages.jsonl.gz"), "rt", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r["page"] in TENQ.get(r["doc_name"], ()):
                pid = f"{r['doc_name']}#p{r['page']}"
                rows.append(
                    {
                        "pid": pid,
                        "doc_id": r["doc_name"],
                        "title": "",
                        "text": r["text"],
                        "meta": {"page": r["page"]},
                    }
                )
    assert len(rows) == 6
    path = tmp_path_factory.mktemp("tenq") / "pages.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return _index([path], tmp_path_factory.mktemp("idx") / "tenq-index")


@pytest.mark.realdata
@pytest.mark.parametrize("target, longer", [("Amcor", 6), ("Apple", 9)])
def test_a_memo_compares_only_figures_of_one_length(tenq_index, tmp_path, target, longer):
    """The statements print three months beside six or nine months ended the same day: each figure
    keeps its length, a trend compares figures of one length only, and the audit trail states every
    figure's length."""
    out, findings = tmp_path / "memo.md", tmp_path / "findings.json"
    assert memo(tenq_index, target, out, "--findings", str(findings)) == 0
    md = out.read_text(encoding="utf-8")
    facts = [r for r in json.loads(findings.read_text()) if r["kind"] == "fact"]
    income = {(f["period"], f["duration"]) for f in facts if f["metric"] in ("net_income", "revenue")}
    assert {d for _, d in income} == {3, longer}
    assert any((period, longer) in income for period, d in income if d == 3)  # side by side
    assert all(f["duration"] is None for f in facts if f["metric"] in ("total_assets", "cash"))
    rows = [r for r in parse_audit_table(md) if r["Figure"] not in ("", "—")]
    day = r"[A-Z][a-z]+ \d{1,2}, \d{4}"
    assert rows and all(
        re.search(
            rf", (?:(?:{_LENGTHS}) ended {day}|as of {day}|period ended {day} \(length not stated\))$",
            r["Period"],
        )
        for r in rows
    )
    body = md.split(AUDIT_HEADING, 1)[0]
    trends = [t for t in re.split(r"; |\n", body) if re.search(r"\b(?:up|down|unchanged) from\b", t)]
    assert trends
    for (
        t
    ) in trends:  # "(Q2 FY2022, three months ended December 31, 2021) to ... (Q2 FY2023, three months ...)"
        lengths = re.findall(rf"\([^()]*?({_LENGTHS}) ended ", t)
        assert len(lengths) in (0, 2) and len(set(lengths)) <= 1, t


@pytest.mark.realdata
def test_search_findings_and_memo_give_one_page_number(tenq_index, tmp_path, capsys):
    """The same passage has one page number wherever a person or a program reads it: the memo's audit trail,
    the findings JSON and `aethel search --json` (text and JSON) all give the PDF page as a viewer shows it,
    the pid's 0-based index plus one."""
    out, findings = tmp_path / "memo.md", tmp_path / "findings.json"
    assert memo(tenq_index, "Apple", out, "--findings", str(findings)) == 0
    records = [r for r in json.loads(findings.read_text()) if r["passage_id"]]
    rows = [r for r in parse_audit_table(out.read_text(encoding="utf-8")) if r["Passage"]]
    assert records and rows
    page_of = {r["passage_id"]: r["page"] for r in records}
    for r in records:
        assert r["page"] == int(r["passage_id"].rsplit("#p", 1)[1]) + 1
        assert all(s["page"] == page_of[s["passage_id"]] for s in r["sources"] if "page" in s)
    for row in rows:  # the audit trail cites the same page as the findings
        page = row.get("Page") or row.get("PDF page")
        assert page == str(int(row["Passage"].rsplit("#p", 1)[1]) + 1)
        if row["Passage"] in page_of:
            assert page == str(page_of[row["Passage"]])
    capsys.readouterr()
    quote = records[0]["quote"]
    assert main(["search", str(tenq_index), quote, "--method", "bm25", "-k", "6", "--json"]) == 0
    hits = {h["pid"]: h for h in json.loads(capsys.readouterr().out)["hits"]}
    assert hits[records[0]["passage_id"]]["page"] == records[0]["page"]


# --- the company's totals, in fiscal terms and units, from real Apple filings -------------------------
#: Apple's 10-Q for its third fiscal quarter of 2023 (cover, income statement, revenue note, segment
#: note) and 10-K for fiscal 2022 (cover, MD&A segment table, income statement, segment note)
APPLE = {"APPLE_2023Q3_10Q": (0, 3, 9, 15), "APPLE_2022_10K": (0, 24, 31, 51)}
#: Apple's net sales as its filings report them (USD millions): the company's, then its segments'
APPLE_NET_SALES = {
    ("Q3 FY2023", "three months ended July 1, 2023"): 81_797,
    ("Q3 FY2022", "three months ended June 25, 2022"): 82_959,
    ("9M FY2023", "nine months ended July 1, 2023"): 293_787,
    ("9M FY2022", "nine months ended June 25, 2022"): 304_182,
    ("FY2022", "twelve months ended September 24, 2022"): 394_328,
    ("FY2021", "twelve months ended September 25, 2021"): 365_817,
    ("FY2020", "twelve months ended September 26, 2020"): 274_515,
}
APPLE_SEGMENT_SALES = {  # fiscal period -> segment -> net sales
    "Q3 FY2023": {"Americas": 35_383, "Europe": 20_205, "Greater China": 15_758, "Japan": 4_821,
                  "Rest of Asia Pacific": 5_630},
    "9M FY2023": {"Americas": 122_445, "Europe": 71_831, "Greater China": 57_475, "Japan": 18_752,
                  "Rest of Asia Pacific": 23_284},
    "FY2022": {"Americas": 169_658, "Europe": 95_118, "Greater China": 74_200, "Japan": 25_977},
}  # fmt: skip


@pytest.fixture(scope="module")
def apple_index(real_data, tmp_path_factory, cache):
    rows = []
    with gzip.open(require(real_data / "financebench" / "pages.jsonl.gz"), "rt", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r["page"] in APPLE.get(r["doc_name"], ()):
                meta = {"page": r["page"]}
                rows.append(
                    {"pid": f"{r['doc_name']}#p{r['page']}", "doc_id": r["doc_name"], "title": "", "text": r["text"],
                     "meta": meta}
                )  # fmt: skip
    assert len(rows) == 8
    path = tmp_path_factory.mktemp("apple") / "apple.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return _index([path], tmp_path_factory.mktemp("idx") / "apple-index")


@pytest.mark.realdata
def test_memo_gives_the_statement_total_never_a_segment_row(apple_index, tmp_path):
    """Apple's filings state net sales on the income statement and per geographic segment in a note
    (Americas, Europe, Greater China, ...): the memo's revenue is the statement's total, in Apple's
    fiscal terms (its year ends in September) and in the statement's unit; every segment row is
    listed as that segment's and appears nowhere in the summary. The ticker names the company."""
    out, findings = tmp_path / "memo.md", tmp_path / "findings.json"
    assert memo(apple_index, "AAPL", out, "--findings", str(findings)) == 0
    md = out.read_text(encoding="utf-8")
    check_citations(md, apple_index)
    records = [
        r for r in json.loads(findings.read_text()) if r["kind"] == "fact" and r["metric"] == "revenue"
    ]
    company = {(r["fiscal_period"], r["value"]) for r in records if r["segment"] is None}
    assert company == {(name, float(v)) for (name, _), v in APPLE_NET_SALES.items()}
    assert all(r["printed_unit"] == "USD millions" for r in records)
    assert all(
        r["statement"] for r in records if r["segment"] is None and r["passage_id"].endswith(("#p3", "#p31"))
    )
    segments = {(r["fiscal_period"], r["segment"], r["value"]) for r in records if r["segment"] is not None}
    for period, by_segment in APPLE_SEGMENT_SALES.items():
        for segment, value in by_segment.items():
            assert (period, segment, float(value)) in segments
    assert {s for _, s, _ in segments} == {
        "Americas",
        "Europe",
        "Greater China",
        "Japan",
        "Rest of Asia Pacific",
    }
    body = md.split(AUDIT_HEADING, 1)[0]
    summary = body.split("## Liquidity Specialist", 1)[0]
    assert (
        "revenue **293,787** [A" in summary
        and "USD millions (9M FY2023, nine months ended July 1, 2023)" in summary
    )
    segment_values = {f"{v:,}" for by in APPLE_SEGMENT_SALES.values() for v in by.values()}
    assert not [v for v in segment_values if v in summary]
    for (name, length), value in APPLE_NET_SALES.items():  # each period's row: the total, one figure
        assert re.search(
            rf"\| revenue \| {name}, {length} \| \*\*{value:,}\*\* (?:\[A\d+\] ?)+USD millions \|", body
        )
    for segment, value in APPLE_SEGMENT_SALES["Q3 FY2023"].items():
        assert re.search(
            rf"\| revenue — {segment} segment \| Q3 FY2023, three months ended July 1, 2023 \| \*\*{value:,}\*\* ",
            body,
        )
    # the same memo whether the company is named by its ticker or its name
    assert memo(apple_index, "Apple", tmp_path / "by-name.md") == 0
    assert (tmp_path / "by-name.md").read_text(encoding="utf-8") == md


@pytest.mark.realdata
def test_an_unknown_ticker_is_the_one_line_error(apple_index, tmp_path, capsys):
    capsys.readouterr()
    assert memo(apple_index, "MSFT", tmp_path / "m.md") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and "'MSFT'" in err and "Apple" in err
