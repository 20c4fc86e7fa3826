"""The "your own files" setting (aethel_lite.data.own_files): FinanceBench with the filings' names and
metadata hidden, as a user's own PDFs would give it; `aethel eval --own-files`; the study's lead rows.

The real-data tests (``AETHEL_DATA`` set: a missing file fails them) check that nothing a retriever
reads of a passage — its text, pid, doc_id, title, meta — names a FinanceBench filing (its ``doc_name``),
and that no pid, doc_id, title or meta value names a company of the document-information file (a
page's text does: a filing names its company on its own pages, as a user's PDF would), and that the
gold pages are the same pages with the same text. Company names are matched as whole words
(``"3M"`` in ``"3M Company"``, not ``"AES"`` inside another word).
"""

from __future__ import annotations

import json
import re

import pytest
from conftest import require

from aethel_lite.cli import main
from aethel_lite.data.loaders import load_financebench
from aethel_lite.data.own_files import KEPT_META, load_own_files, opaque_id, opaque_ids, own_files
from aethel_lite.data.schema import Dataset, Passage, Query, passage_text
from aethel_lite.data.select import load_for_eval
from aethel_lite.errors import DataError, ParameterError
from aethel_lite.io import write_jsonl
from aethel_lite.studies.own_files import (
    NAMED,
    OWN,
    OWN_METHODS,
    lead_rows,
    lead_sentence,
    lead_table,
    own_files_study,
    settings_table,
)


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cache"))


def _folder(tmp_path):
    """A small FinanceBench folder: three filings of two companies, three questions (one unanswerable)."""
    d = tmp_path / "financebench"
    d.mkdir()
    cover = "UNITED STATES SECURITIES AND EXCHANGE COMMISSION FORM 10-K For the fiscal year ended December 31, {y}"
    pages = []
    for doc, company, year in (
        ("ACME_2021_10K", "Acme Widgets Inc.", 2021),
        ("ACME_2022_10K", "Acme Widgets Inc.", 2022),
        ("BOLT_2022_10K", "Bolt Motors Corp.", 2022),
    ):
        pages += [
            {"doc_name": doc, "page": 0, "text": f"{cover.format(y=year)} {company}"},
            {
                "doc_name": doc,
                "page": 1,
                "text": f"{company} capital expenditure in {year} was {year - 1900} million",
            },
            {"doc_name": doc, "page": 2, "text": f"Risk factors of {company} for fiscal {year}"},
        ]
    write_jsonl(d / "pages.jsonl.gz", pages)
    questions = [
        {
            "financebench_id": "q1",
            "question": "Acme capital expenditure FY2022?",
            "company": "Acme Widgets",
            "doc_name": "ACME_2022_10K",
            "answer": "122",
            "evidence": [
                {"doc_name": "ACME_2022_10K", "evidence_page_num": 1, "evidence_text": "capital expenditure"}
            ],
        },
        {
            "financebench_id": "q2",
            "question": "Bolt capital expenditure FY2022?",
            "company": "Bolt Motors",
            "doc_name": "BOLT_2022_10K",
            "answer": "122",
            "evidence": [
                {"doc_name": "BOLT_2022_10K", "evidence_page_num": 1, "evidence_text": "capital expenditure"},
                {"doc_name": "BOLT_2022_10K", "evidence_page_num": 2, "evidence_text": "risk"},
            ],
        },
        {
            "financebench_id": "q3",
            "question": "Gamma?",
            "company": "Gamma",
            "doc_name": "GAMMA_2020_10K",
            "answer": "?",
            "evidence": [{"doc_name": "GAMMA_2020_10K", "evidence_page_num": 0, "evidence_text": "x"}],
        },
        {
            "financebench_id": "q4",
            "question": "Acme risks FY2021?",
            "company": "Acme Widgets",
            "doc_name": "ACME_2021_10K",
            "answer": "-",
            "evidence": [{"doc_name": "ACME_2021_10K", "evidence_page_num": 2, "evidence_text": "risk"}],
        },
    ]
    write_jsonl(d / "financebench_open_source.jsonl", questions)
    write_jsonl(
        d / "financebench_document_information.jsonl",
        [
            {"doc_name": "ACME_2021_10K", "company": "Acme Widgets", "doc_type": "10k", "doc_period": 2021},
            {"doc_name": "ACME_2022_10K", "company": "Acme Widgets", "doc_type": "10k", "doc_period": 2022},
        ],
    )
    return d


def _names_nothing(ds: Dataset, names: list[str]) -> list[str]:
    """Where a doc name shows (any case) in a passage's text, pid, doc_id, title or meta, in a query's
    meta or in the data set's meta. Every FinanceBench doc name holds a ``_``: only text with one is searched."""
    assert all("_" in n for n in names)
    lowered = [n.lower() for n in names]

    def hits(label: str, text: str) -> list[str]:
        text = text.lower()
        return [f"{label}: {n}" for n in lowered if n in text] if "_" in text else []

    found = []
    for p in ds.passages:
        found += hits(p.pid, " ".join([p.text, p.pid, p.doc_id, p.title, json.dumps(p.meta, sort_keys=True)]))
    for q in ds.queries:
        found += hits(q.qid, json.dumps(q.meta, ensure_ascii=False))
    return found + hits("meta", json.dumps(ds.meta, default=str, ensure_ascii=False))


# ------------------------------------------------------------------------------ synthetic folder
def test_own_files_hides_names_titles_and_metadata(tmp_path):
    d = _folder(tmp_path)
    named, own = load_financebench(d), load_own_files(d)
    assert own.name == "financebench-own" and own.meta["own_files"]["n_documents"] == 3
    ids = opaque_ids(["ACME_2021_10K", "ACME_2022_10K", "BOLT_2022_10K"])
    assert set(ids.values()) == {p.doc_id for p in own.passages} and all(
        v.startswith("doc-") for v in ids.values()
    )
    assert _names_nothing(own, ["ACME_2021_10K", "ACME_2022_10K", "BOLT_2022_10K", "GAMMA_2020_10K"]) == []
    assert all(p.title == "" and set(p.meta) == {"page"} for p in own.passages)
    assert all(passage_text(p) == p.text for p in own.passages)  # nothing prepended to the indexed text
    assert all("company" not in q.meta for q in own.queries)
    # the same pages (text and number) in an order by opaque id, and the same gold pages
    by_pid = {p.pid: p for p in named.passages}
    mapped = {f"{ids[p.doc_id]}#p{p.meta['page']}": p for p in named.passages}
    assert sorted(mapped) == sorted(p.pid for p in own.passages)
    assert [p.doc_id for p in own.passages] == sorted(p.doc_id for p in own.passages)
    for p in own.passages:
        assert p.text == mapped[p.pid].text and p.meta["page"] == mapped[p.pid].meta["page"]
    assert [q.qid for q in own.queries] == [q.qid for q in named.queries] == ["q1", "q2", "q4"]
    for a, b in zip(named.queries, own.queries):
        assert {f"{ids[by_pid[g].doc_id]}#p{by_pid[g].meta['page']}" for g in a.gold} == set(b.gold)
        assert (a.text, a.hops) == (b.text, b.hops)
        assert [ev["doc_name"] for ev in b.meta["evidence"]] == [
            ids[ev["doc_name"]] for ev in a.meta["evidence"]
        ]
    assert list(own.meta["left_out"]) == ["q3"]
    # deterministic, and the same as hiding a loaded data set or loading through load_for_eval
    again = own_files(load_financebench(d), name="financebench-own")
    assert [p.to_dict() for p in again.passages] == [p.to_dict() for p in own.passages]
    assert [p.to_dict() for p in load_for_eval("financebench", str(d), own_files=True).passages] == [
        p.to_dict() for p in own.passages
    ]


def test_own_files_chunks_keep_their_place(tmp_path):
    own = load_own_files(_folder(tmp_path), granularity="chunk", chunk_words=5, chunk_overlap=1)
    assert all(set(p.meta) <= set(KEPT_META) and {"page", "chunk"} <= set(p.meta) for p in own.passages)
    assert all(re.fullmatch(r"doc-[0-9a-f]{10}#p\d+c\d+", p.pid) for p in own.passages)
    assert all(q.gold and all(g in own.by_pid for g in q.gold) for q in own.queries)


def test_opaque_ids_are_stable_and_refuse_a_pid_outside_its_document():
    assert opaque_id("3M_2018_10K") == opaque_id("3M_2018_10K") != opaque_id("3M_2019_10K")
    assert re.fullmatch(r"doc-[0-9a-f]{10}", opaque_id("3M_2018_10K"))
    bad = Dataset(
        "x", [Passage("other#p0", "doc", "doc", "text", {"page": 0})], [Query("q", "?", {"other#p0"})]
    )
    with pytest.raises(DataError, match="does not start with its document"):
        own_files(bad)


def test_cli_own_files_flag(tmp_path):
    d = _folder(tmp_path)
    out = tmp_path / "own.json"
    assert (
        main(
            [
                "eval",
                "--data",
                str(d),
                "--format",
                "financebench",
                "--own-files",
                "--methods",
                "bm25",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    result = json.loads(out.read_text())
    assert result["dataset"] == "financebench-own" and result["config"]["own_files"] is True
    assert result["corpus"]["own_files"]["titles"] == "none" and result["n_queries"] == 3
    pids = [pid for hits in result["methods"]["bm25"]["per_query"].values() for pid in hits]
    assert pids and all(re.fullmatch(r"doc-[0-9a-f]{10}#p\d", pid) for pid in pids)
    # the capital-expenditure page of the right filing is found without its name: the gold mapping holds
    assert result["methods"]["bm25"]["per_query_metrics"]["q1"]["HR@5"] == 1.0
    named = tmp_path / "named.json"
    assert (
        main(
            [
                "eval",
                "--data",
                str(d),
                "--format",
                "financebench",
                "--methods",
                "bm25",
                "--out",
                str(named),
                "--quiet",
            ]
        )
        == 0
    )
    assert json.loads(named.read_text())["config"]["own_files"] is False


def test_cli_own_files_needs_financebench(tmp_path, capsys):
    assert main(["eval", "--format", "synthetic", "--own-files", "--out", str(tmp_path / "x.json")]) == 2
    assert "--own-files applies to --format financebench only" in capsys.readouterr().err
    with pytest.raises(ParameterError, match="--own-files"):
        load_for_eval("musique", str(tmp_path), own_files=True)


# ------------------------------------------------------------------------------ study reporting
def _entry(hybrid: list[float], bm25: list[float], dense: list[float]) -> dict:
    qids = [f"q{i}" for i in range(len(hybrid))]
    pq = {
        m: {q: {"MRR": v, "HR@5": float(v > 0.3)} for q, v in zip(qids, vals)}
        for m, vals in (("aethel-hybrid", hybrid), ("bm25", bm25), ("dense", dense))
    }
    tests = []
    for half, keep in (("all", qids), ("test", qids[len(qids) // 2 :])):
        for b in ("bm25", "dense"):
            for metric in ("MRR", "HR@5"):
                a = [pq["aethel-hybrid"][q][metric] for q in keep]
                c = [pq[b][q][metric] for q in keep]
                diff = sum(a) / len(a) - sum(c) / len(c)
                tests.append(
                    {
                        "half": half,
                        "a": "aethel-hybrid",
                        "b": b,
                        "metric": metric,
                        "n": len(keep),
                        "mean_a": sum(a) / len(a),
                        "mean_b": sum(c) / len(c),
                        "diff": diff,
                        "ci_low": diff - 0.05,
                        "ci_high": diff + 0.05,
                    }
                )
    cell = {"mean": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n": len(qids)}
    ci = {h: {m: {"MRR": cell, "HR@5": cell} for m in pq} for h in ("all", "test")}
    return {
        "per_query_metrics": pq,
        "halves": {"dev": qids[: len(qids) // 2], "test": qids[len(qids) // 2 :]},
        "tests": tests,
        "ci": ci,
    }


def test_lead_rows_and_sentence_say_what_is_kept():
    named = _entry([1.0] * 6, [0.5] * 6, [1.0] * 6)
    own = _entry([1.0, 1.0, 1.0, 0.5, 0.5, 0.5], [0.5] * 6, [1.0] * 6)
    saved = {
        "settings": {NAMED: named, OWN: own},
        "methods": ["bm25", "dense", "aethel-hybrid"],
        "metadata": {
            "corpus": {"n": 3, "accuracy": {"company": 1.0, "fiscal_year": 2 / 3, "filing_type": 1.0}}
        },
    }
    saved["lead"] = lead_rows(saved["settings"], n_resamples=200)
    row = next(r for r in saved["lead"] if (r["half"], r["baseline"], r["metric"]) == ("all", "bm25", "MRR"))
    assert row["named"]["diff"] == pytest.approx(0.5) and row["own"]["diff"] == pytest.approx(0.25)
    assert row["kept"] == pytest.approx(0.5) and row["change"]["diff"] == pytest.approx(-0.25)
    text = lead_sentence(saved, ("MRR",))
    assert "Over BM25 it keeps 50% of its lead: +0.500 → +0.250, a change of -0.250" in text
    assert "the lead's CI still excludes 0" in text and text.startswith("* On all 6 questions")
    assert (
        "Over dense retrieval it had no lead to keep" in text and "Over BM25 its lead is gone" in text
    )  # test half
    assert (
        "the fiscal year for 66.7%" in text
        and "On all 6 questions" in text
        and "the 3 test questions" in text
    )
    table = lead_table(saved, "all", "MRR")
    assert list(table.columns) == ["vs bm25", "vs dense"] and list(table.loc["kept"]) == ["50%", "n/a"]
    assert table.loc["lead, own files", "vs bm25"] == "+0.250 [+0.200, +0.300]"
    table = settings_table(saved, "MRR", "all")
    assert list(table.columns) == ["method", "filings named", "own files", "change"] and table.shape[0] == 3


def test_study_reuses_entries_that_hold_every_method_and_adds_cis_and_leads():
    named, own = (
        _entry([1.0] * 6, [0.5] * 6, [1.0] * 6),
        _entry([1.0, 1.0, 1.0, 0.5, 0.5, 0.5], [0.5] * 6, [1.0] * 6),
    )
    for entry in (named, own):
        entry.pop("ci")
        for m in OWN_METHODS:
            entry["per_query_metrics"].setdefault(m, entry["per_query_metrics"]["bm25"])
    qs = [Query(f"q{i}", "?", {"d#p0"}) for i in range(6)]
    corpus = [Passage("d#p0", "d", "", "text", {"page": 0})]
    loaded = {NAMED: Dataset(NAMED, corpus, qs), OWN: Dataset(OWN, corpus, qs)}
    saved = own_files_study(loaded, reference={NAMED: named, OWN: own}, metadata={}, n_resamples=200)
    assert saved["methods"] == list(OWN_METHODS) and len(saved["lead"]) == 8
    cell = saved["settings"][OWN]["ci"]["all"]["aethel-hybrid"]["MRR"]
    assert (
        cell["mean"] == pytest.approx(0.75) and cell["n"] == 6 and cell["ci_low"] <= 0.75 <= cell["ci_high"]
    )
    assert saved["settings"][OWN]["ci"]["test"]["aethel-hybrid"]["MRR"]["n"] == 3
    with pytest.raises(ParameterError, match="must hold"):
        own_files_study({NAMED: loaded[NAMED]})
    with pytest.raises(ParameterError, match="must include bm25, dense"):
        own_files_study(loaded, reference={NAMED: named, OWN: own}, metadata={}, baseline_names=("bm25",))
    quick = own_files_study(
        loaded,
        reference={NAMED: named, OWN: own},
        metadata={},
        baseline_names=("bm25", "dense"),
        n_resamples=200,
    )
    assert quick["methods"] == ["bm25", "dense", *OWN_METHODS[-4:]] and quick["lead"] == saved["lead"]


# ------------------------------------------------------------------------------ real data
@pytest.fixture(scope="module")
def fb_pair(real_data):
    folder = real_data / "financebench"
    for name in (
        "financebench_open_source.jsonl",
        "financebench_document_information.jsonl",
        "pages.jsonl.gz",
    ):
        require(folder / name)
    info = [
        json.loads(line)
        for line in open(folder / "financebench_document_information.jsonl", encoding="utf-8")
    ]
    named = load_financebench(folder)
    return named, own_files(named, name="financebench-own"), info


@pytest.mark.realdata
def test_real_own_files_name_no_filing_and_no_company(fb_pair):
    named, own, info = fb_pair
    docs = sorted({r["doc_name"] for r in info} | {p.doc_id for p in named.passages})
    assert len(docs) > 300 and _names_nothing(own, docs) == []
    companies = sorted({str(r["company"]) for r in info if r.get("company")})
    words = re.compile(r"(?<!\w)(" + "|".join(re.escape(c.lower()) for c in companies) + r")(?!\w)")
    for p in own.passages:
        assert not p.title and set(p.meta) == {"page"}
        where = " ".join([p.pid, p.doc_id, json.dumps(p.meta)]).lower()
        assert not words.search(where), (p.pid, words.search(where))
        assert re.fullmatch(r"doc-[0-9a-f]{10}#p\d+", p.pid)
    for q in own.queries:  # the question's own metadata: no company, filings by opaque id
        assert "company" not in q.meta and re.fullmatch(r"doc-[0-9a-f]{10}", q.meta["doc_name"])
        assert all(re.fullmatch(r"doc-[0-9a-f]{10}", ev["doc_name"]) for ev in q.meta["evidence"])


@pytest.mark.realdata
def test_real_own_files_gold_pages_are_the_same_pages(fb_pair):
    named, own, _ = fb_pair
    assert len(own.passages) == len(named.passages) and len(own.queries) == len(named.queries) == 129
    ids = opaque_ids(p.doc_id for p in named.passages)
    assert len(set(ids.values())) == len(ids) == 74
    by_own = own.by_pid
    for a, b in zip(named.queries, own.queries):
        assert a.qid == b.qid and len(a.gold) == len(b.gold)
        for g in a.gold:
            p = named.by_pid[g]
            mine = by_own[f"{ids[p.doc_id]}#p{p.meta['page']}"]
            assert mine.pid in b.gold and mine.meta["page"] == p.meta["page"]
            # the same page text minus the title the named setting prepends
            assert passage_text(p) == f"{p.doc_id}\n{passage_text(mine)}" and mine.text == p.text


@pytest.mark.realdata
def test_real_quick_samples_hold_the_same_pages_in_both_settings(fb_pair, monkeypatch, real_data):
    from aethel_lite.studies.open_corpus import load_open

    monkeypatch.setenv("AETHEL_DATA", str(real_data))
    named = load_open("financebench", limit=12, corpus_size=300)
    own = load_open("financebench-own", limit=12, corpus_size=300)
    assert own.name == "financebench-own" and len(own.passages) == len(named.passages) == 300
    assert sorted(p.text for p in own.passages) == sorted(p.text for p in named.passages)
    assert [q.qid for q in own.queries] == [q.qid for q in named.queries]
    ids = opaque_ids(p.doc_id for p in named.passages)
    for a, b in zip(named.queries, own.queries):
        assert {f"{ids[named.by_pid[g].doc_id]}#p{named.by_pid[g].meta['page']}" for g in a.gold} == set(
            b.gold
        )


def test_metadata_table_shows_non_calendar_filers_apart():
    from aethel_lite.studies.own_files import metadata_table

    cell = {"company": 1.0, "fiscal_year": 0.5, "filing_type": 1.0}
    report = {
        "n": 4,
        "accuracy": cell,
        "by_type": {"10q": {"n": 4, **cell}},
        "by_year_end": {
            "calendar": {"all": {"n": 2, **cell}, "10q": {"n": 2, **cell, "fiscal_year": 1.0}},
            "non-calendar": {"all": {"n": 2, **cell}, "10q": {"n": 2, **cell, "fiscal_year": 0.0}},
        },
    }
    frame = metadata_table(report)
    assert list(frame["filings"]) == [
        "all",
        "10-Q",
        "10-Q, fiscal year ends in December",
        "10-Q, fiscal year ends in another month",
    ]
    assert list(frame["fiscal year"]) == [0.5, 0.5, 1.0, 0.0]
