"""``aethel-multihop``: its scores against an independent recomputation (scipy z-scores, networkx PageRank),
the second hop on a worked example, its ablations, its settings (checked in ``fit``; scikit-learn's protocol), its
files and a search that changes nothing."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.stats
from builders import titled_passages

from aethel_lite.data.schema import Query
from aethel_lite.errors import DataError, ParameterError
from aethel_lite.retrievers import BM25Retriever, DenseRetriever, clone, params_json
from aethel_lite.retrievers.multihop import TIE_BREAK, MultiHopRetriever
from aethel_lite.retrievers.registry import MULTIHOP_ABLATIONS, make_retriever
from aethel_lite.retrievers.titles import load_titles, save_titles
from aethel_lite.search.format import method_parts

FILMS = [
    (
        "Forbidden Ground",
        "Forbidden Ground is a Hungarian film directed by Pál Gábor. It was released in 1968.",
    ),
    ("Pál Gábor", "He wrote twenty screenplays and taught at the academy in Budapest from 1962."),
    ("Free Guy", "Free Guy is a 2021 American action comedy film directed by Shawn Levy."),
    ("Shawn Levy", "Shawn Adam Levy is a Canadian film director and producer, born in Montreal."),
    ("The Zone (2017 film)", "The Zone is a Quebecois film written and directed by Denys Desjardins."),
    ("Denys Desjardins", "A documentary maker born in 1966 in Montreal, Quebec."),
    ("Budapest", "Budapest is the capital and most populous city of Hungary."),
    ("Montreal", "Montreal is the largest city in the Canadian province of Quebec."),
    ("Hungarian cinema", "Hungarian cinema produced many films in the 1960s, directed by many directors."),
    ("Quebec cinema", "Films made in Quebec, often documentaries, by directors born in Montreal."),
]


@pytest.fixture(scope="module")
def corpus():
    return titled_passages(FILMS)


@pytest.fixture(scope="module")
def fitted(corpus):
    return MultiHopRetriever().fit(corpus)


def _reference(corpus, texts, *, w_bm25=0.3, m=5, tau=1.0, w_title=1.0, alpha=0.7):
    """The module docstring's four steps, recomputed independently: scipy's z-scores, a brute-force title
    search, the mention graph and Personalized PageRank by networkx."""
    dense = DenseRetriever().fit(corpus).score_texts(texts)
    bm25 = np.stack([BM25Retriever().fit(corpus).get_scores(t) for t in texts])
    fused = np.nan_to_num(scipy.stats.zscore(dense, axis=1)) + w_bm25 * np.nan_to_num(
        scipy.stats.zscore(bm25, axis=1)
    )
    g = nx.Graph()
    g.add_nodes_from(range(len(corpus)))
    for i, p in enumerate(corpus):  # whole-title mentions (no nested titles in this corpus)
        for j, o in enumerate(corpus):
            if i != j and o.title.lower() in p.text.lower():
                g.add_edge(i, j)
    out = []
    for row, text in zip(fused, texts):
        order = sorted(range(len(row)), key=lambda i: (-row[i], i))[:m]
        seeds = np.zeros(len(row))
        w = np.exp((row[order] - row[order].max()) / tau)
        seeds[order] = w / w.sum()
        named = [i for i, p in enumerate(corpus) if p.title.split(" (")[0].lower() in text.lower()]
        for i in named:
            seeds[i] += w_title / len(named)
        pers = dict(enumerate(seeds / seeds.sum()))
        pr = nx.pagerank(g, alpha=1 - alpha, personalization=pers, dangling=pers, tol=1e-14, max_iter=10_000)
        unit = (row - row.min()) / (row.max() - row.min())
        out.append(np.array([pr[i] for i in range(len(row))]) + TIE_BREAK * unit)
    return np.stack(out)


QUESTIONS = [
    "Where was the director of Forbidden Ground born?",
    "Which film has the director born later, Free Guy or The Zone?",
    "Who directed films in Montreal?",
]


def test_scores_match_an_independent_recomputation(corpus, fitted):
    """Every passage's score equals z-scores (scipy) → softmax seeds + title seeds → networkx PageRank."""
    got = fitted.score_texts(QUESTIONS)
    want = _reference(corpus, QUESTIONS)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    assert got.shape == (len(QUESTIONS), len(corpus))


def test_the_walk_brings_the_paragraph_the_first_names(corpus, fitted):
    """The bridge: the director's paragraph, named only by the film's, enters the top 2; without the walk
    (``mentions=False``) it ranks lower."""
    q = [Query("q", QUESTIONS[0], frozenset({"p0", "p1"}))]
    top = [pid for pid, _ in fitted.search(q, k=2)["q"]]
    assert set(top) == {"p0", "p1"}
    flat = MultiHopRetriever(mentions=False).fit(corpus)
    rank = [pid for pid, _ in flat.search(q, k=len(corpus))["q"]].index("p1")
    assert rank > 1
    assert fitted.graph_[0, 1] == fitted.graph_[1, 0] == 1 and flat.graph_.nnz == 0


def test_a_question_names_a_title_without_its_disambiguator(fitted):
    """ "The Zone" in a question names "The Zone (2017 film)"; both films of a comparison are named."""
    assert fitted.named(QUESTIONS[1]) == [2, 4]
    assert MultiHopRetriever(title_weight=0.0).fit(fitted_passages()).named(QUESTIONS[1]) == []


def fitted_passages():
    return titled_passages(FILMS)


def test_a_search_changes_nothing_on_the_fitted_retriever(fitted):
    """The whole fitted state (arrays by value, the scorers and the PageRank operator) is the same after
    searches, scores and a batch larger than one PageRank block."""
    from test_search_state import deep_state  # imported here: that file's other tests are not this one's

    before = deep_state(fitted)
    qs = [Query(f"q{i}", QUESTIONS[i % 3], frozenset()) for i in range(70)]
    fitted.search(qs, k=5)
    fitted.score_texts(QUESTIONS)
    list(fitted.corpus_scores(qs[:2]))
    assert deep_state(fitted) == before


def test_batches_rank_as_single_questions(fitted):
    """A question scores the same alone and inside a batch of seventy (PageRank in blocks)."""
    qs = [Query(f"q{i}", QUESTIONS[i % 3], frozenset()) for i in range(70)]
    batch = fitted.search(qs, k=10)
    for i in (0, 1, 2, 69):
        alone = fitted.search([qs[i]], k=10)
        assert [p for p, _ in alone[qs[i].qid]] == [p for p, _ in batch[qs[i].qid]]


@pytest.mark.parametrize(
    "setting",
    [
        {"alpha": 1.0},
        {"alpha": 0},
        {"n_seeds": 0},
        {"temperature": 0},
        {"title_weight": -1},
        {"bm25_weight": -0.1},
    ],
)
def test_a_bad_setting_is_named_at_fit(corpus, setting):
    """Taken as given by the constructor and by ``set_params``; ``fit`` (and ``load``) refuse it, naming it."""
    for r in (MultiHopRetriever(**setting), MultiHopRetriever().set_params(**setting)):
        with pytest.raises(ParameterError, match=next(iter(setting))):
            r.fit(corpus)
        assert not hasattr(r, "dense_")


def test_settings_as_scikit_learn(corpus, fitted):
    """``get_params`` gives an unfitted copy that ranks alike, as ``clone`` (the package's and scikit-learn's) does;
    ``set_params`` changes the setting (a nested one with ``a__b``) and unfits."""
    from sklearn.base import clone as sk_clone

    copy = MultiHopRetriever(**fitted.get_params(deep=False)).fit(corpus)
    np.testing.assert_array_equal(copy.score_texts(QUESTIONS), fitted.score_texts(QUESTIONS))
    for other in (clone(fitted), sk_clone(fitted)):
        assert not other.is_fitted and params_json(other) == params_json(fitted)
        np.testing.assert_array_equal(other.fit(corpus).score_texts(QUESTIONS), fitted.score_texts(QUESTIONS))
    other = MultiHopRetriever().fit(corpus).set_params(alpha=0.5)
    assert other.alpha == 0.5 and not hasattr(other, "operator_") and not other.is_fitted
    nested = make_retriever("aethel-multihop").set_params(dense__pooling="max", bm25_weight=0.5)
    assert nested.dense.pooling == "max" and nested.get_params(deep=True)["dense__pooling"] == "max"
    assert nested.parts() == ["bm25", "dense-max", "titles"]


def test_registry_names_and_ablations():
    """The registry builds the method and each ablation as the full settings with one field replaced."""
    full = make_retriever("aethel-multihop")
    assert isinstance(full, MultiHopRetriever)
    settings = params_json(full)
    for name, change in MULTIHOP_ABLATIONS.items():
        r = make_retriever(name)
        diff = {k: v for k, v in params_json(r).items() if v != settings[k]}
        assert diff == change, name


def test_an_index_holds_it_and_its_parts_rank_as_a_fresh_fit(corpus, fitted, tmp_path):
    """The index part (titles and mention edges) reads back to the same graph, and the retriever loaded from what
    ``save`` wrote (as ``aethel search`` loads it) scores every passage as the fitted one."""
    assert method_parts("aethel-multihop") == ["bm25", "dense-first", "titles"] == fitted.parts()
    save_titles(tmp_path / "titles.json", [p.title for p in corpus], fitted.graph_)
    titles, graph = load_titles(tmp_path / "titles.json", len(corpus))
    assert titles == [p.title for p in corpus] and (graph != fitted.graph_).nnz == 0
    folder = tmp_path / "index"
    files = fitted.save(folder)
    assert {"ids.json", "dense-first.npy", "dense-first.json", "titles.json"} <= set(files)
    assert {f.split("/")[0].split(".")[0] for f in files} == {"ids", "bm25", "dense-first", "titles"}
    assert all((folder / f).is_file() for f in files) and files == sorted(files)
    again = MultiHopRetriever.load(folder)
    assert again.pids_ == fitted.pids_ and again.doc_ids_ == fitted.doc_ids_ and again.titles_ == titles
    assert (again.graph_ != fitted.graph_).nnz == 0
    np.testing.assert_array_equal(again.score_texts(QUESTIONS), fitted.score_texts(QUESTIONS))
    qs = [Query(f"q{i}", t, frozenset()) for i, t in enumerate(QUESTIONS)]
    assert again.search(qs, k=5) == fitted.search(qs, k=5)
    flat = MultiHopRetriever.load(folder, mentions=False)
    assert flat.graph_.nnz == 0
    np.testing.assert_array_equal(
        flat.score_texts(QUESTIONS), MultiHopRetriever(mentions=False).fit(corpus).score_texts(QUESTIONS)
    )
    with pytest.raises(ParameterError, match="alpha"):
        MultiHopRetriever.load(folder, alpha=1.0)
    (tmp_path / "bad.json").write_text('{"format": 1, "titles": ["a"], "edges": [[0, 5]]}')
    with pytest.raises(DataError, match="bad.json: unreadable titles"):
        load_titles(tmp_path / "bad.json", 1)
