"""The filing-or-page analysis: within-document reciprocal ranks against a brute-force oracle, and
the study's numbers against the retrievers' own rankings (``search`` + the library's MRR)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import toy_filings

from aethel_lite.data.schema import Dataset, Passage, Query
from aethel_lite.errors import ParameterError
from aethel_lite.evaluation.metrics import evaluate
from aethel_lite.retrievers.registry import make_retriever
from aethel_lite.studies.anchoring import (
    anchoring_sentences,
    anchoring_study,
    document_rank,
    reciprocal_rank,
    within_document_rr,
)


def _oracle_rr(scores, gold, doc_index):
    """Sort the gold documents' passages (best first, ties in corpus order) and find the first gold."""
    docs = {doc_index[g] for g in gold}
    inside = [i for i in range(len(scores)) if doc_index[i] in docs]
    order = sorted(inside, key=lambda i: (-scores[i], i))
    return 1.0 / (1 + order.index(next(i for i in order if i in gold)))


def test_within_document_rr_matches_a_brute_force_ranking():
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(2, 40))
        scores = rng.integers(0, 6, n).astype(float)  # many ties
        doc_index = rng.integers(0, 5, n)
        gold = sorted(set(rng.choice(n, int(rng.integers(1, 3)), replace=False).tolist()))
        rr_in = within_document_rr(scores, gold, doc_index)
        assert rr_in == pytest.approx(_oracle_rr(scores, gold, doc_index))
        rr = reciprocal_rank(scores, gold)
        assert rr == pytest.approx(_oracle_rr(scores, gold, np.zeros(n, dtype=int)))
        assert rr_in >= rr  # removing other documents removes competitors only


def test_within_document_rr_edge_cases():
    doc_index = np.array([0, 0, 1])
    assert within_document_rr(np.array([-np.inf, 1.0, 5.0]), [0], doc_index) == 0.0  # gold not ranked
    assert (
        within_document_rr(np.array([1.0, 2.0, 9.0]), [0], doc_index) == 0.5
    )  # the other document does not count
    with pytest.raises(ParameterError, match="no gold passage"):
        within_document_rr(np.zeros(3), [], doc_index)
    assert document_rank(np.array([0.1, 0.5, 0.5, 0.2]), [2]) == 1  # ties share the lower rank
    assert document_rank(np.array([0.1, 0.5, 0.3, 0.2]), [3, 0]) == 3


@pytest.fixture(scope="module")
def filings(tmp_path_factory):
    import os

    os.environ["AETHEL_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    return toy_filings()


def test_anchoring_study_agrees_with_the_retrievers_own_rankings(filings):
    halves = {"dev": ["q-ACME_2018", "q-BOLT_2019"], "test": ["q-CRANE_2018"]}
    res = anchoring_study(filings, halves=halves)
    assert res["n_documents"] == 6 and res["passages_per_document"] == 3
    assert set(res["per_query"]) == {q.qid for q in filings.queries}
    assert set(res["means"]) == {"all", "dev", "test"} and res["means"]["test"]["n"] == 1
    for name in res["methods"]:
        r = make_retriever(name).fit(filings.passages)
        mrr = evaluate(r.search(filings.queries, k=len(filings.passages)), filings.queries, ["MRR"])["MRR"]
        assert res["means"]["all"][name]["MRR"] == pytest.approx(mrr, abs=1e-6), name
        for entry in res["per_query"].values():
            assert entry[name]["rr_within"] >= entry[name]["rr"] - 1e-12
    for half, m in res["means"].items():
        ids = halves.get(half, list(res["per_query"]))
        ranks = [res["per_query"][q]["document_rank"] for q in ids]
        assert all(1 <= r <= 6 for r in ranks)
        assert m["document_at_1"] == pytest.approx(np.mean([r == 1 for r in ranks]))
        assert m["document_at_3"] >= m["document_at_1"]
    text = anchoring_sentences({"filings": res}, "all")
    assert len(text) == 1 and f"{res['means']['all']['aethel-hybrid']['MRR_within']:.3f}" in text[0]


def _means(hybrid_mrr, hybrid_within, best_mrr, best_within):
    return {
        "n_documents": 2,
        "passages_per_document": 3.0,
        "methods": ["aethel-hybrid", "bm25"],
        "means": {
            "all": {
                "n": 4,
                "document_at_1": 0.5,
                "document_at_3": 1.0,
                "median_document_rank": 1.5,
                "aethel-hybrid": {"MRR": hybrid_mrr, "MRR_within": hybrid_within},
                "bm25": {"MRR": best_mrr, "MRR_within": best_within},
            }
        },
    }


@pytest.mark.parametrize(
    "numbers, says, never",
    [
        ((0.40, 0.50, 0.30, 0.50), "about as well as that ranker, so what it gains", "worse"),
        (
            (0.20, 0.50, 0.35, 0.50),
            "about as well as that ranker (MRR over the whole corpus 0.200 against 0.350)",
            "what it gains",
        ),
        ((0.40, 0.70, 0.30, 0.50), "better than that ranker", "what it gains"),
        ((0.20, 0.30, 0.30, 0.50), "worse than that ranker", "what it gains"),
    ],
)
def test_anchoring_sentences_claim_a_gain_only_when_there_is_one(numbers, says, never):
    (text,) = anchoring_sentences({"c": _means(*numbers)})
    assert says in text and never not in text


def test_anchoring_study_skips_corpora_of_one_passage_documents_and_checks_fitted_retrievers(filings):
    single = Dataset(
        "single",
        [Passage(f"p{i}", f"d{i}", f"d{i}", f"Page {i} of Acme.", {}) for i in range(4)],
        [Query("q", "Acme?", frozenset({"p1"}))],
        {},
    )
    res = anchoring_study(single)
    assert "skipped" in res and res["n_documents"] == 4
    assert (
        anchoring_sentences({"single": res})[0]
        == "* `single`: not measured (1.00 passages per document, fewer than 2)."
    )
    assert anchoring_sentences({"single": res}, skipped=False) == []
    one_doc = Dataset(
        "one",
        [Passage(f"p{i}", "", "", f"Page {i} of Acme.", {}) for i in range(6)],
        [Query("q", "Acme?", frozenset({"p1"}))],
        {},
    )
    assert "nothing to choose between" in anchoring_study(one_doc)["skipped"]
    no_gold = Dataset("nogold", filings.passages, [Query("q", "Acme?", frozenset({"missing"}))], {})
    assert "no question" in anchoring_study(no_gold)["skipped"]
    other = make_retriever("bm25").fit(single.passages)
    with pytest.raises(ParameterError, match="not fitted on 'toy'"):
        anchoring_study(filings, fitted={"bm25": other})
