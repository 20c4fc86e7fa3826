"""Metrics against ir_measures (trec_eval) on random runs, plus hand-computed cases."""

from __future__ import annotations

import math
import random

import pytest

from aethel_lite.data.schema import Query
from aethel_lite.errors import DataError, ParameterError
from aethel_lite.evaluation.metrics import DEFAULT_METRICS, evaluate, parse_metric, per_query
from aethel_lite.retrievers import Run


@pytest.fixture(scope="module")
def ir_measures():
    """The trec_eval oracle; only the tests that compare against it skip without it."""
    return pytest.importorskip("ir_measures")


def random_setup(seed, n_queries=300, n_docs=40):
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(n_docs)]
    queries, run = [], Run()
    for i in range(n_queries):
        qid = f"q{i}"
        gold = frozenset(rng.sample(docs, rng.randint(1, 4)))
        queries.append(Query(qid, "text", gold))
        if rng.random() < 0.9:  # ~10% of queries are missing from the run
            ranked = rng.sample(docs, rng.randint(0, 30))
            # strictly decreasing scores, so trec_eval's re-sort keeps this order
            run[qid] = [(d, 100.0 - j - rng.random() * 0.5) for j, d in enumerate(ranked)]
    return queries, run


# ours -> ir_measures measure (AllSupport@k is "R@k == 1")
ORACLE = {
    "HR@1": "Success@1",
    "HR@5": "Success@5",
    "HR@10": "Success@10",
    "Recall@5": "R@5",
    "Recall@20": "R@20",
    "MRR": "RR",
    "nDCG@10": "nDCG@10",
    "nDCG@3": "nDCG@3",
}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_metrics_match_ir_measures(seed, ir_measures):
    queries, run = random_setup(seed)
    qrels = [ir_measures.Qrel(q.qid, d, 1) for q in queries for d in sorted(q.gold)]
    scored = [ir_measures.ScoredDoc(qid, d, s) for qid, ranking in run.items() for d, s in ranking]
    measures = {name: ir_measures.parse_measure(m) for name, m in ORACLE.items()}
    measures.update({f"AllSupport@{k}": ir_measures.parse_measure(f"R@{k}") for k in (2, 5, 10)})
    oracle: dict[tuple[str, str], float] = {}
    by_measure = {v: [] for v in measures.values()}
    for name, m in measures.items():
        by_measure[m].append(name)
    for metric in ir_measures.iter_calc(list(by_measure), qrels, scored):
        for name in by_measure[metric.measure]:
            value = metric.value
            if name.startswith("AllSupport"):
                value = 1.0 if abs(value - 1.0) < 1e-12 else 0.0
            oracle[(metric.query_id, name)] = value
    ours = per_query(run, queries, list(measures))
    compared = 0
    for q in queries:
        for name in measures:
            key = (q.qid, name)
            if q.qid in run and run[q.qid]:
                assert ours[q.qid][name] == pytest.approx(oracle[key], abs=1e-9), key
                compared += 1
            else:  # not in the run (trec_eval skips it): every metric is 0
                assert ours[q.qid][name] == 0.0
    assert compared > 200 * len(measures)
    # evaluate = mean over *all* queries, missing ones counted as 0
    means = evaluate(run, queries, list(measures))
    for name in measures:
        assert means[name] == pytest.approx(sum(ours[q.qid][name] for q in queries) / len(queries))


def test_hand_computed_values():
    q = Query("q", "x", frozenset({"a", "b", "c"}))
    run = {"q": [("z", 5.0), ("a", 4.0), ("y", 3.0), ("b", 2.0), ("x", 1.0), ("c", 0.5)]}
    got = per_query(
        run, [q], ["HR@1", "HR@2", "AllSupport@5", "AllSupport@6", "Recall@4", "MRR", "nDCG@10", "nDCG@2"]
    )["q"]
    assert got["HR@1"] == 0.0 and got["HR@2"] == 1.0
    assert got["AllSupport@5"] == 0.0 and got["AllSupport@6"] == 1.0
    assert got["Recall@4"] == pytest.approx(2 / 3)
    assert got["MRR"] == 0.5
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert got["nDCG@10"] == pytest.approx((1 / math.log2(3) + 1 / math.log2(5) + 1 / math.log2(7)) / idcg)
    assert got["nDCG@2"] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))


def test_run_order_is_used_and_repeats_ignored():
    q = Query("q", "x", frozenset({"g"}))
    assert per_query({"q": ["n", "n", "g"]}, [q], ["MRR", "HR@2"])["q"] == {"MRR": 0.5, "HR@2": 1.0}


def test_metric_names_and_errors():
    assert parse_metric("hr@5").kind == "HR" and parse_metric("HR@5").k == 5
    assert parse_metric("nDCG@10").kind == "nDCG" and parse_metric("MRR").k is None
    for bad in ("P@5", "HR", "HR@0", "Recall@x", "", "MAP"):
        with pytest.raises(ParameterError):
            parse_metric(bad)
    with pytest.raises(ParameterError, match="Bogus@3"):
        evaluate({}, [Query("q", "x", frozenset({"a"}))], ["HR@1", "Bogus@3"])
    with pytest.raises(DataError, match="'q7'"):
        per_query({}, [Query("q7", "x", frozenset())])
    assert set(evaluate({}, [Query("q", "x", frozenset({"a"}))])) == set(DEFAULT_METRICS)
    assert all(v == 0.0 for v in evaluate({}, [Query("q", "x", frozenset({"a"}))]).values())


@pytest.mark.parametrize("gold_rank", [1, 11, 437, 1000])
def test_mrr_counts_a_gold_passage_anywhere_in_a_deep_run(gold_rank, ir_measures):
    """``aethel eval`` runs are 1,000 deep: MRR is trec_eval's recip_rank over all of it, not RR@10."""
    docs = [f"d{i}" for i in range(1000)]
    q = Query("q", "text", {docs[gold_rank - 1]})
    run = {"q": [(d, 1000.0 - i) for i, d in enumerate(docs)]}
    got = per_query(run, [q], ["MRR"])["q"]["MRR"]
    assert got == pytest.approx(1 / gold_rank)
    oracle = ir_measures.calc_aggregate(
        [ir_measures.RR, ir_measures.RR @ 10],
        [ir_measures.Qrel("q", docs[gold_rank - 1], 1)],
        [ir_measures.ScoredDoc("q", d, s) for d, s in run["q"]],
    )
    assert got == pytest.approx(oracle[ir_measures.RR])
    assert oracle[ir_measures.RR @ 10] == (got if gold_rank <= 10 else 0.0)  # what a 10-deep run would report


# ------------------------------------------------------------------------ rank of gold, means
def test_gold_rank_is_the_rank_in_the_run_topk_gives():
    """The rank from a score vector (the studies') equals the gold's position in the retrievers' ranking."""
    import numpy as np

    from aethel_lite.evaluation.metrics import first_gold_rank, gold_rank
    from aethel_lite.retrievers import topk

    rng = np.random.default_rng(1)
    for _ in range(400):
        n = int(rng.integers(1, 30))
        scores = rng.integers(0, 4, n).astype(float)  # many ties
        scores[rng.random(n) < 0.1] = -np.inf
        gold = sorted(set(rng.choice(n, int(rng.integers(1, 4))).tolist()))
        idx, vals = topk(scores, n)
        ranked = [int(i) for i, v in zip(idx, vals) if v != -np.inf]  # a run ranks what was scored
        assert gold_rank(scores, gold) == first_gold_rank(ranked, set(gold))
        among = rng.random(n) < 0.6
        among[gold] = True  # the gold passages always compete (e.g. the pages of the gold documents)
        assert gold_rank(scores, gold, among) == first_gold_rank([i for i in ranked if among[i]], set(gold))
    assert gold_rank(np.array([1.0, 2.0]), []) == 0
    assert gold_rank(np.array([np.nan, 2.0]), [0]) == 0 and gold_rank(np.array([-np.inf, 2.0]), [0]) == 0
    assert first_gold_rank(["a", "b"], {"c"}) == 0 and first_gold_rank(["a", "b"], {"b"}) == 2


def test_mean_and_mean_metrics():
    from aethel_lite.evaluation.metrics import mean, mean_metrics

    values = [0.1, 0.7, 0.2, 1 / 3]
    assert mean(values) == sum(values) / 4  # the plain sum, in the order given
    assert mean(iter(values)) == mean(values)
    with pytest.raises(DataError, match="no values"):
        mean([])
    table = {"q1": {"MRR": 1.0, "HR@1": 1.0}, "q2": {"MRR": 0.25, "HR@1": 0.0}}
    assert mean_metrics(table, ["MRR", "HR@1"]) == {"MRR": 0.625, "HR@1": 0.5}
    queries = [Query("q1", "x", frozenset({"a"})), Query("q2", "y", frozenset({"b"}))]
    run = {"q1": ["a", "b"], "q2": ["c", "d", "e", "b"]}
    assert evaluate(run, queries, ["MRR", "HR@1"]) == mean_metrics(
        per_query(run, queries, ["MRR", "HR@1"]), ["MRR", "HR@1"]
    )
    assert evaluate(run, queries, ["MRR"]) == {"MRR": (1.0 + 0.25) / 2}
