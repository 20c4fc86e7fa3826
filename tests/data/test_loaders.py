"""Loaders: small hand-made files for the logic and errors, the real files for the acceptance counts.

The real-data expectations come from ``$AETHEL_DATA/README.md`` (200 MuSiQue questions with 20
paragraphs and 2–4 hops, 164 of 200 2Wiki rows with a 10-paragraph context, 129 FinanceBench
questions over 74 filings / 10,206 pages, 49,942 pages in all) and from re-reading the raw files
with plain ``json``, never from a previous run of the loaders.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
from collections import Counter
from pathlib import Path

import pytest
from conftest import require
from hypothesis import given, settings
from hypothesis import strategies as st

from aethel_lite.data import loaders
from aethel_lite.data.loaders import (
    available_datasets,
    chunk_gold,
    chunk_spans,
    load_2wiki,
    load_dataset,
    load_financebench,
    load_musique,
)
from aethel_lite.data.paths import HOW_TO_GET_DATA
from aethel_lite.data.schema import Dataset
from aethel_lite.errors import DataError, DataNotFoundError, ParameterError
from aethel_lite.io import write_jsonl

MANIFESTS = Path(loaders.__file__).resolve().parent.parent / "manifests"


# ------------------------------------------------------------------------------ tiny fixtures
def _musique_row(qid, supporting, n=4, **extra):
    paragraphs = [
        {"idx": i, "title": f"T{i}", "paragraph_text": f"text {qid} {i}", "is_supporting": i in supporting}
        for i in range(n)
    ]
    row = {
        "id": qid,
        "question": f"q {qid}?",
        "paragraphs": paragraphs,
        "answer": "A",
        "answer_aliases": ["a"],
        "question_decomposition": [{"id": 1}, {"id": 2}, {"id": 3}],
    }
    row.update(extra)
    return row


def _twowiki_row(qid, titles, support, **extra):
    row = {
        "_id": qid,
        "type": "comparison",
        "question": f"q {qid}?",
        "context": [[t, [f"{t} first.", f"{t} second."]] for t in titles],
        "supporting_facts": [[t, 0] for t in support],
        "evidences": [],
        "answer": "yes",
    }
    row.update(extra)
    return row


@pytest.fixture
def fb_dir(tmp_path):
    """A three-filing FinanceBench folder: two asked about, one distractor, one question unanswerable."""
    d = tmp_path / "financebench"
    d.mkdir()
    evidence_sentence = "Net revenue for fiscal year 2022 was 1,234 million dollars driven by strong demand"
    long_filler = " ".join(f"filler{i}" for i in range(450))
    pages = [
        {"doc_name": "ACME_2022_10K", "page": 0, "text": "Cover page of ACME annual report"},
        {
            "doc_name": "ACME_2022_10K",
            "page": 1,
            "text": f"{long_filler} {evidence_sentence} tail words here",
        },
        {"doc_name": "ACME_2022_10K", "page": 2, "text": "Risk factors"},
        {"doc_name": "BETA_2021_10Q", "page": 0, "text": "Beta quarterly cover"},
        {"doc_name": "BETA_2021_10Q", "page": 1, "text": "Beta balance sheet total assets 99"},
        {"doc_name": "OTHER_2020_8K", "page": 0, "text": "An unrelated 8-K"},
    ]
    write_jsonl(d / "pages.jsonl.gz", pages)
    questions = [
        {
            "financebench_id": "fb1",
            "question": "ACME revenue 2022?",
            "company": "ACME",
            "doc_name": "ACME_2022_10K",
            "answer": "1,234",
            "evidence": [
                {"doc_name": "ACME_2022_10K", "evidence_page_num": 1, "evidence_text": evidence_sentence}
            ],
        },
        {
            "financebench_id": "fb2",
            "question": "Beta assets?",
            "company": "Beta",
            "doc_name": "BETA_2021_10Q",
            "answer": "99",
            "evidence": [
                {"doc_name": "BETA_2021_10Q", "evidence_page_num": 1, "evidence_text": "total assets 99"},
                {
                    "doc_name": "BETA_2021_10Q",
                    "evidence_page_num": 0,
                    "evidence_text": "Beta quarterly cover",
                },
                {"doc_name": "BETA_2021_10Q", "evidence_page_num": 1, "evidence_text": "balance sheet"},
            ],
        },
        {
            "financebench_id": "fb3",
            "question": "Gamma?",
            "company": "Gamma",
            "doc_name": "GAMMA_2023_10K",
            "answer": "?",
            "evidence": [{"doc_name": "GAMMA_2023_10K", "evidence_page_num": 3, "evidence_text": "x"}],
        },
        {
            "financebench_id": "fb4",
            "question": "ACME page 7?",
            "company": "ACME",
            "doc_name": "ACME_2022_10K",
            "answer": "?",
            "evidence": [{"doc_name": "ACME_2022_10K", "evidence_page_num": 7, "evidence_text": "x"}],
        },
    ]
    write_jsonl(d / "financebench_open_source.jsonl", questions)
    info = [
        {"doc_name": "ACME_2022_10K", "company": "ACME", "doc_type": "10k", "doc_period": 2022},
        {"doc_name": "OTHER_2020_8K", "company": "Other", "doc_type": "8k", "doc_period": 2020},
    ]
    write_jsonl(d / "financebench_document_information.jsonl", info)
    return d


# ------------------------------------------------------------------------------ MuSiQue logic
def test_musique_small_file(tmp_path, caplog):
    path = tmp_path / "m.jsonl"
    rows = [
        _musique_row("2hop__1_2", {1, 3}),
        _musique_row("custom-7", {0, 2, 3}),
        _musique_row("2hop__9_9", set()),
    ]
    write_jsonl(path, rows)
    with caplog.at_level(logging.WARNING):
        ds = load_musique(path)
    assert [q.qid for q in ds.queries] == ["2hop__1_2", "custom-7"]
    q1, q2 = ds.queries
    assert q1.gold == {"2hop__1_2#1", "2hop__1_2#3"}
    assert q1.pool == tuple(f"2hop__1_2#{i}" for i in range(4))
    assert q1.hops == 2  # from the id prefix, not from the 3-step decomposition
    assert q2.hops == 3  # no prefix: length of question_decomposition
    assert (
        q1.meta["answer"] == "A" and q1.meta["answer_aliases"] == ["a"] and len(q1.meta["decomposition"]) == 3
    )
    p = ds.by_pid["2hop__1_2#2"]
    assert (p.doc_id, p.title, p.text) == ("T2", "T2", "text 2hop__1_2 2")
    assert ds.meta["skipped"] == {"without a supporting paragraph": 1}
    assert "skipped 1" in caplog.text
    assert str(tmp_path) not in caplog.text  # the warning lands in the book: no local path
    assert len(ds.passages) == 8  # the skipped question's paragraphs are not added


def test_musique_duplicate_id(tmp_path):
    path = tmp_path / "m.jsonl"
    write_jsonl(path, [_musique_row("a", {0}), _musique_row("a", {1})])
    with pytest.raises(DataError, match=r"jsonl:2: duplicate question id 'a'"):
        load_musique(path)


def test_musique_missing_field(tmp_path):
    path = tmp_path / "m.jsonl"
    row = _musique_row("a", {0})
    del row["paragraphs"]
    write_jsonl(path, [row])
    with pytest.raises(DataError, match=r"m\.jsonl:1: missing field 'paragraphs'"):
        load_musique(path)


# ------------------------------------------------------------------------------ 2Wiki logic
def test_2wiki_small_file(tmp_path, caplog):
    path = tmp_path / "w.jsonl"
    titles = ["A", "B", "C", "D"]
    literal = _twowiki_row("s", titles, ["B", "D"])
    literal["context"] = repr(literal["context"])  # some dumps store Python literals as strings
    literal["supporting_facts"] = repr(literal["supporting_facts"])
    rows = [
        _twowiki_row("x", titles, ["A", "C", "D", "A"]),
        {k: v for k, v in _twowiki_row("y", titles, ["A"]).items() if k != "context"},
        literal,
        _twowiki_row("z", titles, ["A", "Nowhere"]),
    ]
    write_jsonl(path, rows)
    with caplog.at_level(logging.WARNING):
        ds = load_2wiki(path)
    assert [q.qid for q in ds.queries] == ["x", "s"]
    x, s = ds.queries
    assert x.gold == {"x#0", "x#2", "x#3"} and x.hops == 3
    assert s.gold == {"s#1", "s#3"} and s.hops == 2
    assert ds.by_pid["x#1"].text == "B first. B second." and ds.by_pid["x#1"].title == "B"
    assert ds.meta["skipped"] == {
        "without a context (no closed pool)": 1,
        "with a supporting title missing from the context": 1,
    }
    assert ds.meta["skipped_ids"] == {
        "y": "without a context (no closed pool)",
        "z": "with a supporting title missing from the context",
    }
    assert "skipped 2" in caplog.text


def test_2wiki_distractors(tmp_path):
    path = tmp_path / "w.jsonl"
    write_jsonl(path, [_twowiki_row("x", ["A", "B"], ["A", "B"])])
    dpath = tmp_path / "d.json"
    dpath.write_text(
        json.dumps(
            [
                {"title": "Z", "text": "zzz"},
                {"title": "A", "text": "A first. A second."},
                {"title": "Y", "text": "yy"},
            ]
        )
    )
    ds = load_2wiki(path, distractors=dpath)
    assert [p.pid for p in ds.passages] == ["x#0", "x#1", "wiki#0", "wiki#2"]
    assert ds.meta["distractors_duplicate"] == 1 and ds.meta["n_distractors"] == 2
    dpath.write_text(json.dumps([{"title": "Z"}]))
    with pytest.raises(DataError, match=r"d\.json: item 0"):
        load_2wiki(path, distractors=dpath)


# ------------------------------------------------------------------------------ FinanceBench logic
def test_financebench_small_question_docs(fb_dir, caplog):
    with caplog.at_level(logging.WARNING):
        ds = load_financebench(fb_dir)
    assert [p.pid for p in ds.passages] == [
        "ACME_2022_10K#p0",
        "ACME_2022_10K#p1",
        "ACME_2022_10K#p2",
        "BETA_2021_10Q#p0",
        "BETA_2021_10Q#p1",
    ]
    assert [q.qid for q in ds.queries] == ["fb1", "fb2"]
    fb1, fb2 = ds.queries
    assert fb1.gold == {"ACME_2022_10K#p1"} and fb1.hops == 1 and fb1.pool is None
    assert fb2.gold == {"BETA_2021_10Q#p0", "BETA_2021_10Q#p1"} and fb2.hops == 2  # 3 evidence items, 2 pages
    assert set(ds.meta["left_out"]) == {"fb3", "fb4"}
    assert "GAMMA_2023_10K" in ds.meta["left_out"]["fb3"] and "page 7" in ds.meta["left_out"]["fb4"]
    assert sum(ds.meta["skipped"].values()) == 2 and "skipped 2" in caplog.text
    acme = ds.by_pid["ACME_2022_10K#p1"]
    assert acme.meta == {"page": 1, "company": "ACME", "doc_type": "10k", "doc_period": 2022}
    beta = ds.by_pid["BETA_2021_10Q#p0"].meta  # not in the document information: parsed from the name
    assert (beta["doc_type"], beta["doc_period"], beta["company"]) == ("10q", 2021, "Beta")
    assert ds.meta["docs_without_info"] == ["BETA_2021_10Q"]


def test_financebench_small_all_docs(fb_dir):
    ds = load_financebench(fb_dir, docs="all")
    assert len(ds.passages) == 6 and ds.by_pid["OTHER_2020_8K#p0"].meta["doc_type"] == "8k"
    assert [q.qid for q in ds.queries] == ["fb1", "fb2"]


def test_financebench_reads_lines_in_any_key_order(fb_dir):
    """The fast doc-name prefix filter must not drop lines written with another key order."""
    rows = [json.loads(line) for line in gzip.open(fb_dir / "pages.jsonl.gz", "rt")]
    with gzip.open(fb_dir / "pages.jsonl.gz", "wt") as fh:
        for row in rows:
            fh.write(
                json.dumps(
                    {"text": row["text"], "page": row["page"], "doc_name": row["doc_name"]},
                    separators=(",", ":"),
                )
                + "\n"
            )
    assert len(load_financebench(fb_dir).passages) == 5


def test_financebench_small_chunks(fb_dir):
    ds = load_financebench(fb_dir, granularity="chunk", chunk_words=100, chunk_overlap=20)
    page = "ACME_2022_10K#p1"
    chunks = [p for p in ds.passages if p.pid.startswith(page + "c")]
    assert len(chunks) == 6  # 467 words, windows every 80 words, the last one ending at the last word
    fb1 = ds.queries[0]
    # the evidence sentence is words 450..463: only the last chunk (words 400..466) holds it;
    # chunk 4 (words 320..419) holds none of its 5-grams
    assert fb1.gold == {f"{page}c5"}
    text = next(p for p in load_financebench(fb_dir).passages if p.pid == page).text
    for c in chunks:
        assert text[c.meta["char_start"] : c.meta["char_end"]] == c.text
    fb2 = ds.queries[1]
    assert fb2.gold == {"BETA_2021_10Q#p0c0", "BETA_2021_10Q#p1c0"}


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"docs": "some"}, "docs"),
        ({"granularity": "line"}, "granularity"),
        ({"granularity": "chunk", "chunk_words": 0}, "chunk_words"),
        ({"granularity": "chunk", "chunk_words": 10, "chunk_overlap": 10}, "chunk_overlap"),
        ({"granularity": "chunk", "gold_overlap": 0}, "gold_overlap"),
    ],
)
def test_financebench_bad_parameters(fb_dir, kw, match):
    with pytest.raises(ParameterError, match=match):
        load_financebench(fb_dir, **kw)


def test_financebench_malformed_page_line(fb_dir):
    with gzip.open(fb_dir / "pages.jsonl.gz", "at") as fh:
        fh.write('{"doc_name": "ACME_2022_10K", "page": 3, "text": oops}\n')
    with pytest.raises(DataError, match=r"pages\.jsonl\.gz:7: malformed JSON"):
        load_financebench(fb_dir)


def test_financebench_duplicate_page(fb_dir):
    with gzip.open(fb_dir / "pages.jsonl.gz", "at") as fh:
        fh.write(json.dumps({"doc_name": "ACME_2022_10K", "page": 0, "text": "again"}) + "\n")
    with pytest.raises(DataError, match=r"pages\.jsonl\.gz:7: duplicate page 0 of 'ACME_2022_10K'"):
        load_financebench(fb_dir)


def test_financebench_truncated_gzip(fb_dir):
    path = fb_dir / "pages.jsonl.gz"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match=r"pages\.jsonl\.gz: cannot read"):
        load_financebench(fb_dir)


# ------------------------------------------------------------------------------ chunking rules
@settings(max_examples=60, deadline=None)
@given(
    words=st.lists(st.text(alphabet="abcxyz", min_size=1, max_size=6), min_size=0, max_size=60),
    seps=st.lists(st.sampled_from([" ", "\n", "  \n\t"]), min_size=60, max_size=60),
    size=st.integers(1, 12),
    overlap_frac=st.floats(0, 0.99),
)
def test_chunk_spans_cover_every_word_in_windows(words, seps, size, overlap_frac):
    overlap = int(size * overlap_frac)
    text = "".join(w + s for w, s in zip(words, seps))
    spans = chunk_spans(text, size, overlap)
    assert spans, "every text yields at least one span"
    if not words:
        assert spans == [(0, len(text))]
        return
    chunk_words = [text[a:b].split() for a, b in spans]
    assert all(1 <= len(c) <= size for c in chunk_words)
    step = size - overlap
    # window i starts at word i*step, so consecutive windows share exactly `overlap` words when full
    for i, c in enumerate(chunk_words):
        assert c == words[i * step : i * step + size]
    assert (len(spans) - 1) * step + len(chunk_words[-1]) == len(
        words
    )  # the last window ends at the last word
    covered = set()
    for i, c in enumerate(chunk_words):
        covered.update(range(i * step, i * step + len(c)))
    assert covered == set(range(len(words)))
    if len(spans) > 1:  # the last window is not contained in the previous one
        assert (len(spans) - 1) * step + len(chunk_words[-1]) > (len(spans) - 2) * step + len(chunk_words[-2])


def test_chunk_gold_rule():
    chunks = [
        "alpha beta gamma delta epsilon zeta eta",
        "the revenue was ten million in fiscal 2022 overall",
        "other words entirely here now",
    ]
    assert chunk_gold(chunks, "Revenue was ten million in fiscal 2022") == [1]
    assert chunk_gold(chunks, " ".join(chunks)) == [0, 1, 2]  # evidence = whole page: every chunk
    # no chunk reaches the threshold -> the best-overlapping chunk only
    weak = "was ten million in fiscal plus many other unrelated tokens appended here"
    assert chunk_gold(chunks, weak, min_overlap=0.9) == [1]  # 1 shared 5-gram of 5: below 0.9
    assert chunk_gold(chunks, weak, min_overlap=0.2) == [1]  # ... but at least 0.2
    assert chunk_gold(chunks, "", min_overlap=0.5) == [0]
    assert chunk_gold(chunks, "entirely", n=5) == [2]  # shorter evidence: n shrinks to its length


# ------------------------------------------------------------------------------ errors
@pytest.mark.parametrize("loader", [load_musique, load_2wiki, load_financebench])
def test_missing_file_says_how_to_get_data(tmp_path, loader):
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(DataNotFoundError) as info:
        loader(missing)
    assert str(missing) in str(info.value) and HOW_TO_GET_DATA in str(info.value)


def test_missing_default_file_says_how_to_get_data(tmp_path, monkeypatch):
    monkeypatch.setenv("AETHEL_DATA", str(tmp_path))
    with pytest.raises(DataNotFoundError, match=re.escape(HOW_TO_GET_DATA)):
        load_musique()
    (tmp_path / "financebench").mkdir()
    with pytest.raises(
        DataNotFoundError, match=r"financebench_open_source\.jsonl.*" + re.escape(HOW_TO_GET_DATA)
    ):
        load_financebench()


@pytest.mark.parametrize(
    "loader, row", [(load_musique, _musique_row("a", {0})), (load_2wiki, _twowiki_row("a", ["A"], ["A"]))]
)
def test_malformed_json_line_names_file_and_line(tmp_path, loader, row):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(row) + "\n\n" + '{"id": "b", "question": \n')
    with pytest.raises(DataError, match=r"bad\.jsonl:3: malformed JSON line"):
        loader(path)


@pytest.mark.parametrize("loader", [load_musique, load_2wiki])
def test_empty_file(tmp_path, loader):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n")
    with pytest.raises(DataError, match=r"empty\.jsonl: no usable questions"):
        loader(path)


def test_empty_financebench_questions(fb_dir):
    (fb_dir / "financebench_open_source.jsonl").write_text("")
    with pytest.raises(DataError, match="no questions"):
        load_financebench(fb_dir)


def test_empty_corpus_fails_validation():
    with pytest.raises(DataError, match="empty corpus"):
        Dataset("x", [], []).validate()


def test_unknown_dataset_name_lists_valid_names():
    with pytest.raises(DataError) as info:
        load_dataset("hotpotqa")
    for name in available_datasets():
        assert name in str(info.value)
    assert set(available_datasets()) == {"musique", "2wiki", "financebench", "synthetic"}


def test_load_dataset_dispatch(tmp_path, monkeypatch):
    path = tmp_path / "m.jsonl"
    write_jsonl(path, [_musique_row("2hop__1", {0, 1})])
    assert [q.qid for q in load_dataset("MuSiQue", path=path).queries] == ["2hop__1"]
    seen = {}

    def make_synthetic(**kw):
        seen.update(kw)
        return "synthetic-dataset"

    monkeypatch.setattr("aethel_lite.data.loaders.make_synthetic", make_synthetic)
    assert load_dataset("synthetic", n_passages=7, seed=3) == "synthetic-dataset"
    assert seen == {"n_passages": 7, "seed": 3}


# ------------------------------------------------------------------------------ real data
@pytest.fixture(scope="module")
def musique(real_data):
    require(real_data / "musique" / "musique_ans_dev_sample200.jsonl")
    return load_musique()


@pytest.fixture(scope="module")
def twowiki(real_data):
    require(real_data / "2wikimultihopqa" / "2wiki_dev_sample200.jsonl")
    require(real_data / "2wikimultihopqa" / "distractor_corpus_6119.json")
    return load_2wiki(distractors=True)


@pytest.fixture(scope="module")
def fb_raw(real_data):
    folder = real_data / "financebench"
    for name in (
        "financebench_open_source.jsonl",
        "financebench_document_information.jsonl",
        "pages.jsonl.gz",
    ):
        require(folder / name)
    questions = [
        json.loads(line) for line in open(folder / "financebench_open_source.jsonl", encoding="utf-8")
    ]
    return folder, questions


@pytest.fixture(scope="module")
def financebench(fb_raw):
    return load_financebench()


@pytest.fixture(scope="module")
def financebench_all(fb_raw):
    return load_financebench(docs="all")


@pytest.fixture(scope="module")
def financebench_chunks(fb_raw):
    return load_financebench(granularity="chunk", chunk_words=200, chunk_overlap=40)


def _manifest(name):
    kept, left = [], {}
    for line in (MANIFESTS / name).read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith("-"):
            parts = line[1:].split()
            left[parts[0]] = parts[1:]
        else:
            kept.append(line)
    return kept, left


def test_real_musique(musique, real_data):
    assert len(musique.queries) == 200 and len(musique.passages) == 4000
    musique.validate()
    raw = [
        json.loads(line)
        for line in open(real_data / "musique" / "musique_ans_dev_sample200.jsonl", encoding="utf-8")
    ]
    assert Counter(q.hops for q in musique.queries) == Counter({2: 145, 3: 32, 4: 23})  # README
    for q, row in zip(musique.queries, raw):
        assert q.qid == row["id"] and len(q.pool) == 20
        assert 2 <= len(q.gold) <= 4 and q.gold <= set(q.pool)
        # independent check: the decomposition names one supporting paragraph per hop
        assert q.hops == len(row["question_decomposition"])
        assert q.gold == {
            f"{q.qid}#{step['paragraph_support_idx']}" for step in row["question_decomposition"]
        }
        assert all(
            musique.by_pid[pid].title == row["paragraphs"][int(pid.split("#")[1])]["title"] for pid in q.pool
        )


def test_real_2wiki(twowiki, real_data):
    twowiki.validate()
    assert len(twowiki.queries) == 164
    assert twowiki.meta["skipped"] == {"without a context (no closed pool)": 36}
    assert all(len(q.pool) == 10 for q in twowiki.queries)
    pool_pids = [pid for q in twowiki.queries for pid in q.pool]
    raw = {
        r["_id"]: r
        for r in map(
            json.loads, open(real_data / "2wikimultihopqa" / "2wiki_dev_sample200.jsonl", encoding="utf-8")
        )
    }
    for q in twowiki.queries:
        titles = {t for t, _ in raw[q.qid]["supporting_facts"]}
        assert {twowiki.by_pid[g].title for g in q.gold} == titles and q.hops == len(titles)
        assert q.hops == (4 if raw[q.qid]["type"] == "bridge_comparison" else 2)
    corpus = json.load(open(real_data / "2wikimultihopqa" / "distractor_corpus_6119.json", encoding="utf-8"))
    wiki = [p for p in twowiki.passages if p.pid.startswith("wiki#")]
    assert len(pool_pids) == 1640 and len(twowiki.passages) == 1640 + len(wiki)
    assert len(wiki) + twowiki.meta["distractors_duplicate"] == len(corpus) == 6119
    assert all(corpus[int(p.pid[5:])]["text"] == p.text for p in wiki)
    kept, left = _manifest("2wiki_queries.txt")
    assert [q.qid for q in twowiki.queries] == kept and set(left) == set(twowiki.meta["skipped_ids"])


def test_real_2wiki_closed_only(real_data):
    require(real_data / "2wikimultihopqa" / "2wiki_dev_sample200.jsonl")
    ds = load_2wiki()
    assert len(ds.passages) == 1640 and not any(p.pid.startswith("wiki#") for p in ds.passages)


def test_real_financebench(financebench, fb_raw):
    folder, raw = fb_raw
    financebench.validate()
    assert len(financebench.queries) == 129 and len(financebench.passages) == 10206
    assert financebench.meta["n_filings"] == 74 == len({p.doc_id for p in financebench.passages})
    assert len(financebench.meta["left_out"]) == 21 and len(raw) == 150
    assert all(q.pool is None for q in financebench.queries)
    by_id = {r["financebench_id"]: r for r in raw}
    for q in financebench.queries:
        pages = {(e["doc_name"], e["evidence_page_num"]) for e in by_id[q.qid]["evidence"]}
        assert q.gold == {f"{d}#p{p}" for d, p in pages} and q.hops == len(pages)
        assert q.text == by_id[q.qid]["question"]
    kept, left = _manifest("financebench_queries.txt")
    assert [q.qid for q in financebench.queries] == kept
    assert set(left) == set(financebench.meta["left_out"])
    docs = {p.doc_id for p in financebench.passages}
    assert all(doc not in docs for (doc,) in left.values())
    # every kept question's filing is loaded; every loaded filing is asked about
    assert docs == {e["doc_name"] for q in financebench.queries for e in by_id[q.qid]["evidence"]} | {
        by_id[q.qid]["doc_name"] for q in financebench.queries
    }
    page = financebench.passages[0]
    assert set(page.meta) == {"page", "company", "doc_type", "doc_period"}


def test_real_financebench_evidence_pages_hold_the_evidence(financebench, fb_raw):
    """The page numbering matches FinanceBench's: the gold page's text overlaps its full-page evidence."""
    _, raw = fb_raw
    tok = re.compile(r"\w+")
    by_id = {r["financebench_id"]: r for r in raw}
    ratios = []
    for q in financebench.queries:
        for e in by_id[q.qid]["evidence"]:
            words = set(
                tok.findall(financebench.by_pid[f"{e['doc_name']}#p{e['evidence_page_num']}"].text.lower())
            )
            ev = set(tok.findall(e["evidence_text_full_page"].lower()))
            ratios.append(len(words & ev) / max(len(ev), 1))
    ratios.sort()
    assert ratios[len(ratios) // 2] > 0.8  # median page agrees with FinanceBench's own page text


def test_real_financebench_all(financebench_all, financebench):
    financebench_all.validate()
    assert len(financebench_all.passages) == 49942 and financebench_all.meta["n_filings"] == 344
    assert [q.qid for q in financebench_all.queries] == [q.qid for q in financebench.queries]
    small = {p.pid for p in financebench.passages}
    assert small <= {p.pid for p in financebench_all.passages}


def test_real_financebench_chunks(financebench_chunks, financebench):
    financebench_chunks.validate()
    pages = financebench.by_pid
    assert [q.qid for q in financebench_chunks.queries] == [q.qid for q in financebench.queries]
    assert {p.pid.rsplit("c", 1)[0] for p in financebench_chunks.passages} == set(pages)
    for p in financebench_chunks.passages[:3000]:
        assert pages[p.pid.rsplit("c", 1)[0]].text[p.meta["char_start"] : p.meta["char_end"]] == p.text
        assert len(p.text.split()) <= 200
    for qc, qp in zip(financebench_chunks.queries, financebench.queries):
        on_pages = {g.rsplit("c", 1)[0] for g in qc.gold}
        assert on_pages == set(qp.gold)  # gold chunks lie on evidence pages, every evidence page has one
        assert qc.hops == qp.hops


def test_real_load_dataset_matches_loader(musique):
    again = load_dataset("musique")
    assert [q.to_dict() for q in again.queries] == [q.to_dict() for q in musique.queries]


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("question", None, r"m\.jsonl:2: field 'question' must be a string, got null"),
        ("question", 42, r"m\.jsonl:2: field 'question' must be a string, got a number"),
        ("question", ["a"], r"m\.jsonl:2: field 'question' must be a string, got a list"),
        ("question", "  ", r"m\.jsonl:2: field 'question' is empty"),
        (
            "paragraph_text",
            None,
            r"m\.jsonl:2: \(b\) paragraph 0: 'paragraph_text' must be a string, got null",
        ),
        (
            "paragraph_text",
            7,
            r"m\.jsonl:2: \(b\) paragraph 0: 'paragraph_text' must be a string, got a number",
        ),
        ("title", ["x"], r"m\.jsonl:2: \(b\) paragraph 0: 'title' must be a string, got a list"),
        ("idx", "3", r"m\.jsonl:2: \(b\) paragraph 0: 'idx' must be an integer"),
        ("id", True, r"m\.jsonl:2: field 'id' has type bool"),
    ],
)
def test_musique_bad_values_are_named_never_stringified(tmp_path, field, value, message):
    """null, numbers and lists are not turned into the text "None", "42" or "['a']" (file:line named)."""
    rows = [_musique_row("a", {0}), _musique_row("b", {0})]
    if field in ("question", "id"):
        rows[1][field] = value
    else:
        rows[1]["paragraphs"][0][field] = value
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with pytest.raises(DataError, match=message):
        load_musique(path)


def test_musique_integer_ids_are_kept_as_strings(tmp_path):
    row = _musique_row("a", {0})
    row["id"] = 17
    path = tmp_path / "m.jsonl"
    write_jsonl(path, [row])
    assert [q.qid for q in load_musique(path).queries] == ["17"]


def test_the_line_named_is_the_file_line_with_blank_lines_in_between(tmp_path):
    bad = _musique_row("b", {0})
    bad["question"] = None
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps(_musique_row("a", {0})) + "\n\n\n" + json.dumps(bad) + "\n")
    with pytest.raises(DataError, match=r"m\.jsonl:4: field 'question'"):
        load_musique(path)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda r: r.update(question=None), r"w\.jsonl:1: field 'question' must be a string, got null"),
        (
            lambda r: r["context"][0].__setitem__(1, [1, 2]),
            r"w\.jsonl:1: \(.*\) context item 0: the sentences must be a list of strings",
        ),
        (
            lambda r: r["context"][0].__setitem__(0, None),
            r"w\.jsonl:1: \(.*\) context item 0: the title must be a string, got null",
        ),
        (
            lambda r: r["context"][0].__setitem__(1, [" "]),
            r"w\.jsonl:1: \(.*\) context item 0: the text is empty",
        ),
    ],
)
def test_2wiki_bad_values_are_named_never_stringified(tmp_path, change, message):
    row = _twowiki_row("w1", ["A", "B"], ["A"])
    change(row)
    path = tmp_path / "w.jsonl"
    write_jsonl(path, [row])
    with pytest.raises(DataError, match=message):
        load_2wiki(path)


def test_a_bad_byte_in_the_pages_file_names_its_own_line(tmp_path):
    """The pages file is decoded line by line: a non-UTF-8 byte on line 61 is reported at line 61
    (a decoder reading in chunks reported an earlier line)."""
    root = tmp_path / "financebench"
    root.mkdir()
    q = {
        "financebench_id": "q1",
        "question": "What?",
        "answer": "A",
        "company": "X",
        "doc_name": "X_2020_10K",
        "evidence": [{"doc_name": "X_2020_10K", "evidence_page_num": 0, "evidence_text": "alpha"}],
    }
    write_jsonl(root / "financebench_open_source.jsonl", [q])
    write_jsonl(
        root / "financebench_document_information.jsonl",
        [{"doc_name": "X_2020_10K", "company": "X", "doc_type": "10k", "doc_period": 2020}],
    )
    lines = [
        json.dumps({"doc_name": "X_2020_10K", "page": i, "text": "alpha " * 200}).encode() for i in range(80)
    ]
    lines[60] = lines[60].replace(b"alpha", b"alph\xff", 1)
    (root / "pages.jsonl.gz").write_bytes(gzip.compress(b"\n".join(lines) + b"\n", mtime=0))
    with pytest.raises(DataError, match=r"pages\.jsonl\.gz:61: not UTF-8"):
        load_financebench(root)
