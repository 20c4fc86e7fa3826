"""Experiment helpers the CLI and the notebooks share: loading, fallback, ablation, paired tests, tables."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import require

from aethel_lite.data.select import load_for_eval, load_or_synthetic
from aethel_lite.data.synthetic import make_synthetic
from aethel_lite.errors import DataConfigError, DataNotFoundError, ParameterError
from aethel_lite.evaluation.runner import (
    bct_ablation,
    fuse,
    paired_comparisons,
    run_methods,
    score_runs,
    without_timing,
)
from aethel_lite.evaluation.stats import paired_bootstrap
from aethel_lite.retrievers import registry
from aethel_lite.retrievers.registry import parse_methods
from aethel_lite.studies.closed_pool import (
    ablation_figure,
    comparisons_table,
    metrics_table,
    paper_comparison,
)
from aethel_lite.studies.paper import PAPER_ROWS, paper_rows


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def small():
    return make_synthetic(200, seed=3).subset(limit=12).with_random_pools(10, seed=1)


def test_random_pools_hold_gold_and_are_deterministic(small):
    again = make_synthetic(200, seed=3).subset(limit=12).with_random_pools(10, seed=1)
    for q, q2 in zip(small.queries, again.queries):
        assert (
            q.gold <= set(q.pool) and len(q.pool) == max(10, len(q.gold)) and len(set(q.pool)) == len(q.pool)
        )
        assert q.pool == q2.pool
    other = make_synthetic(200, seed=3).subset(limit=12).with_random_pools(10, seed=2)
    assert any(a.pool != b.pool for a, b in zip(small.queries, other.queries))
    small.validate()
    with pytest.raises(ParameterError, match="size"):
        small.with_random_pools(0)


def test_load_or_synthetic_falls_back_loudly(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("AETHEL_DATA", raising=False)
    monkeypatch.chdir(tmp_path)  # no ./data folder either: nothing is configured
    ds = load_or_synthetic("musique", size=150, setting="closed")
    out = capsys.readouterr().out
    assert "SYNTHETIC" in out and "NOT comparable" in out
    assert str(tmp_path) not in out  # no local path in what a chapter prints
    assert ds.meta["fallback_from"] == "musique" and ds.name.startswith("synthetic")
    assert all(q.pool is not None for q in ds.queries)


def test_explicit_missing_data_is_an_error_not_a_fallback(tmp_path, monkeypatch):
    monkeypatch.delenv("AETHEL_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataNotFoundError, match=re.escape(str(tmp_path / "missing.jsonl"))):
        load_or_synthetic("musique", data=str(tmp_path / "missing.jsonl"), size=150)


@pytest.mark.parametrize("layout", ["no folder", "empty folder", "other data set only"])
def test_wrong_aethel_data_names_the_folder(tmp_path, monkeypatch, capsys, layout):
    from aethel_lite.studies.open_corpus import load_open

    folder = tmp_path / "my-data"
    if layout != "no folder":
        folder.mkdir()
    if layout == "other data set only":
        (folder / "financebench").mkdir()
    monkeypatch.setenv("AETHEL_DATA", str(folder))
    monkeypatch.chdir(tmp_path)
    for call in (
        lambda: load_or_synthetic("musique", size=150),
        lambda: load_for_eval("2wiki", setting="open"),
        lambda: load_open("musique-open", limit=3),
    ):
        with pytest.raises(DataConfigError) as info:
            call()
        assert str(folder) in str(info.value) and "AETHEL_DATA" in str(info.value)
        assert not isinstance(info.value, DataNotFoundError)  # callers that fall back never catch it
    assert "SYNTHETIC" not in capsys.readouterr().out
    with pytest.raises(DataConfigError, match="musique"):
        load_or_synthetic("musique", size=150)


def test_default_data_folder_counts_as_configured(tmp_path, monkeypatch):
    monkeypatch.delenv("AETHEL_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()  # `make data` was run, but the data set is not there
    with pytest.raises(DataConfigError, match="data folder data.*musique"):
        load_or_synthetic("musique", size=150)


def test_paper_comparison_leaves_ours_empty_for_synthetic_stand_ins():
    results = {
        "musique": {
            "aethel-ner3": {"HR@5": 0.9, "HR@1": 0.5},
            "aethel-bct": {"HR@1": 0.45},
            "dense": {"HR@5": 0.97},
        },
        "2wiki": {"aethel-ner3": {"HR@5": 0.99}},
    }
    table = paper_comparison(results, paper_rows("closed_pool"), synthetic={"musique": True, "2wiki": False})
    mus = table[table["data set"] == "musique"]
    assert len(mus) == 4 and mus["ours"].isna().all() and mus["ours − paper"].isna().all()
    assert mus["note"].str.startswith("not comparable: synthetic").all()
    wiki = table[table["data set"] == "2wiki"].iloc[0]
    assert wiki["ours"] == 0.99 and wiki["ours − paper"] == pytest.approx(-0.01)
    same = paper_comparison(results, paper_rows("closed_pool"), synthetic=["musique"])
    assert same.equals(table)


def test_load_or_synthetic_uses_real_data_when_present(real_data):
    ds = load_or_synthetic("musique", data=str(real_data))
    assert ds.name != "synthetic" and "fallback_from" not in ds.meta and len(ds.queries) == 200


def test_parse_methods():
    assert parse_methods("bm25, rrf") == ["bm25", "rrf"]
    with pytest.raises(ParameterError, match="unknown method 'x'"):
        parse_methods("bm25,x")


def test_closed_pool_run_and_scores_consistent_with_runs(small):
    outcomes = run_methods(small, ["bm25", "aethel-reg", "rrf"], setting="closed", progress=False, log=None)
    block = score_runs(outcomes, small.queries, k=5)
    for name, entry in block.items():  # noqa: B007
        for q in small.queries:
            assert set(entry["per_query"][q.qid]) <= set(q.pool)
            top5 = entry["per_query"][q.qid][:5]
            assert entry["per_query_metrics"][q.qid]["HR@5"] == float(bool(q.gold & set(top5)))
        assert entry["HR@5"] == pytest.approx(
            np.mean([v["HR@5"] for v in entry["per_query_metrics"].values()])
        )


def test_bct_ablation_none_equals_plain_graph(small):
    ab = bct_ablation(small, modes=("none", "both"), extractor="regex")
    plain = score_runs(
        run_methods(small, ["aethel-reg"], setting="closed", progress=False, log=None), small.queries, k=5
    )
    for m in ("HR@1", "HR@5", "MRR"):
        assert ab["none"][m] == pytest.approx(plain["aethel-reg"][m])
    assert set(ab) == {"none", "both"}


def test_paired_comparisons_match_stats_module():
    rng = np.random.default_rng(0)
    qids = [f"q{i}" for i in range(30)]
    a = {q: {"HR@5": float(v)} for q, v in zip(qids, rng.integers(0, 2, 30))}
    b = {q: {"HR@5": float(v)} for q, v in zip(qids, rng.integers(0, 2, 30))}
    rows = paired_comparisons(
        {"A": {"per_query_metrics": a}, "B": {"per_query_metrics": b}},
        [("A", "B")],
        ["HR@5"],
        n_resamples=2000,
        seed=1,
    )
    order = sorted(qids)  # paired_comparisons orders queries by qid
    ref = paired_bootstrap(
        [a[q]["HR@5"] for q in order], [b[q]["HR@5"] for q in order], n_resamples=2000, seed=1
    )
    assert rows[0]["ci_low"] == pytest.approx(ref.ci_low, abs=1e-6) and rows[0]["ci_high"] == pytest.approx(
        ref.ci_high, abs=1e-6
    )
    table = comparisons_table(rows)
    assert bool(table["CI excludes 0"].iloc[0]) == (ref.ci_low > 0 or ref.ci_high < 0)


def test_without_timing_strips_nested_keys():
    r = {
        "seconds": 1.0,
        "timing": {"a": 1},
        "methods": {"x": {"HR@5": 0.5, "seconds": 3}},
        "rows": [{"seconds": 1, "v": 2}],
    }
    assert without_timing(r) == {"methods": {"x": {"HR@5": 0.5}}, "rows": [{"v": 2}]}


def test_paper_comparison_places_our_numbers_beside_the_papers():
    results = {"musique": {"aethel-ner3": {"HR@5": 0.9, "HR@1": 0.5}, "aethel-bct": {"HR@1": 0.45}}}
    table = paper_comparison(results, paper_rows("closed_pool"))
    row = table[
        (table["data set"] == "musique")
        & (table["metric"] == "HR@5")
        & (table["our method"] == "aethel-ner3")
    ].iloc[0]
    assert row["paper"] == 0.885 and row["ours"] == 0.9 and row["ours − paper"] == pytest.approx(0.015)
    missing = table[table["data set"] == "2wiki"].iloc[0]
    assert missing["ours"] is None or np.isnan(missing["ours"])
    assert {r["section"] for r in PAPER_ROWS} >= {"closed_pool", "open_corpus"}


def test_tables_and_figure_are_built_from_results(small):
    block = {
        "bm25": {"HR@5": 0.5, "MRR": 0.3, "per_query": {}},
        "dense": {"HR@5": 0.6, "MRR": 0.4, "per_query": {}},
    }
    df = metrics_table(block)
    assert list(df.index) == ["bm25", "dense"] and list(df.columns) == ["HR@5", "MRR"]
    fig = ablation_figure(
        {
            "both": {"HR@1": 0.4, "HR@5": 0.9, "AllSupport@5": 0.4},
            "none": {"HR@1": 0.5, "HR@5": 0.8, "AllSupport@5": 0.3},
        }
    )
    ax = fig.axes[0]
    assert ax.get_xlabel() and ax.get_ylabel() and len(ax.patches) == 6
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "BCT: none",
        "BCT: both",
    ]  # canonical, not file, order


# ------------------------------------------------------------------------------- registry
def test_registry_has_the_pure_graph_dense_max_and_rrf_dense_methods():
    from aethel_lite.retrievers import DenseRetriever, GraphRetriever, clone, params_json
    from aethel_lite.retrievers.registry import FUSIONS, METHODS

    # each name maps to an unfitted estimator; equal settings: equal params_json (estimators have no __eq__)
    assert params_json(METHODS["dense-max"]) == params_json(DenseRetriever(pooling="max"))
    for pure, base in (
        ("aethel-reg-pure", "aethel-reg"),
        ("aethel-ner3-pure", "aethel-ner3"),
        ("aethel-bct-pure", "aethel-bct"),
    ):
        assert type(METHODS[pure]) is type(METHODS[base]) is GraphRetriever
        assert not METHODS[pure].is_fitted
        assert params_json(METHODS[pure]) == params_json(clone(METHODS[base]).set_params(fallback="none"))
    assert FUSIONS["rrf-dense"] == ("bm25", "dense")
    names = ["dense-max", "aethel-reg-pure", "aethel-ner3-pure", "aethel-bct-pure", "rrf-dense"]
    assert parse_methods(",".join(names)) == names


def test_make_retriever_passes_the_methods_settings():
    from aethel_lite.retrievers.registry import make_retriever

    graph = make_retriever("aethel-bct-pure", graph={"alpha": 0.3})
    assert (graph.extractor, graph.bct, graph.fallback, graph.alpha) == ("ner3", "both", "none", 0.3)
    assert make_retriever("aethel-reg").fallback == "bm25"
    assert make_retriever("dense-max").pooling == "max" and make_retriever("dense").pooling == "first"


def test_make_retriever_names_a_setting_the_class_does_not_accept():
    # the registry holds estimators (no Method(cls, params) to hold a bad setting): a setting a class does not
    # accept is refused by set_params, naming it and the class's settings
    with pytest.raises(ParameterError, match=r"unknown setting 'shiny'; BM25Retriever has k1, b"):
        registry.make_retriever("bm25").set_params(shiny=True)
    with pytest.raises(ParameterError, match=r"unknown setting 'shiny'; GraphRetriever has"):
        registry.make_retriever("aethel-anchors").set_params(hybrid__graph__shiny=True)
    with pytest.raises(ParameterError, match="'aethel-bct': the graph retriever has no setting 'shiny'"):
        registry.make_retriever("aethel-bct", graph={"shiny": True})
    with pytest.raises(ParameterError, match="not a base retriever"):
        registry.make_retriever("rrf")


def _tiny():
    """Passages about one subject; the question's entity is named by 3 of them."""
    from aethel_lite.data.schema import Dataset, Passage, Query

    texts = [
        "Helios Fleet Solutions was acquired by NorthRiver Capital Partners IV in 2023.",
        "NorthRiver Capital Partners IV reported a net IRR of 14.2% for the year.",
        "Orion Labs hired a new chief executive officer in March.",
        "The Fund's unfunded commitment was $41.5 million at year end.",
        "Helios Fleet Solutions operates a fleet of electric delivery vans.",
        "Quarterly letters are sent to every limited partner of the Fund.",
    ]
    passages = [Passage(f"p{i}", f"d{i}", "", t) for i, t in enumerate(texts)]
    queries = [
        Query("q1", "Who acquired Helios Fleet Solutions?", {"p0"}),
        Query("q2", "what was reported for the year?", {"p1"}),
    ]
    return Dataset("tiny", passages, queries).validate()


def test_pure_graph_ranks_only_what_the_graph_reaches():
    ds = _tiny()
    out = run_methods(ds, ["aethel-reg", "aethel-reg-pure"], setting="open", progress=False, log=None)
    full, pure = out["aethel-reg"].run, out["aethel-reg-pure"].run
    assert len(full["q1"]) == len(ds.passages)  # the BM25 order fills the run
    assert pure.pids("q1")[0] in ("p0", "p4") and set(pure.pids("q1")) < set(full.pids("q1"))
    assert pure.pids("q2") == []  # no entity in the question: the pure graph ranks nothing
    block = score_runs(out, ds.queries)
    assert block["aethel-reg-pure"]["per_query_metrics"]["q2"]["MRR"] == 0.0


def test_dense_max_fits_and_scores_a_page_by_its_best_chunk():
    from aethel_lite.data.schema import Dataset, Passage, Query

    filler = " ".join(["The committee met and reviewed routine administrative matters."] * 40)  # ~320 words
    passages = [
        Passage("long", "d0", "", filler + " Helios Fleet Solutions was acquired by NorthRiver Capital."),
        Passage("short", "d1", "", "Orion Labs hired a new chief executive officer."),
    ]
    ds = Dataset("pages", passages, [Query("q", "Who acquired Helios Fleet Solutions?", {"long"})]).validate()
    out = run_methods(ds, ["dense", "dense-max", "rrf-dense"], setting="open", progress=False, log=None)
    first, best = (dict(out[m].run["q"]) for m in ("dense", "dense-max"))
    assert best["long"] > first["long"]  # the answer sits beyond the first 256 word pieces
    assert out["dense-max"].run.pids("q")[0] == "long"
    assert set(out["rrf-dense"].run.pids("q")) == {"long", "short"}


# --------------------------------------------------------------------------- run depth, MRR
def _gold_at_rank_13():
    """BM25 ranks the 12 passages naming 'zephyr' first, then the rest by corpus order; the gold
    passage is the first of the rest, so its rank is 13."""
    from aethel_lite.data.schema import Dataset, Passage, Query

    passages = [Passage(f"m{i}", f"m{i}", "", f"zephyr report number {i} about winds") for i in range(12)]
    passages += [Passage("gold", "gold", "", "the answer is here")]
    passages += [Passage(f"o{i}", f"o{i}", "", f"other text {i}") for i in range(10)]
    return Dataset("rank13", passages, [Query("q", "zephyr", {"gold"})]).validate()


def test_mrr_is_over_the_whole_run_not_the_top_10():
    ds = _gold_at_rank_13()
    deep = score_runs(run_methods(ds, ["bm25"], setting="open", progress=False, log=None), ds.queries)
    assert deep["bm25"]["MRR"] == pytest.approx(1 / 13, abs=1e-6)
    assert len(deep["bm25"]["per_query"]["q"]) == 10  # the JSON keeps the top 10 pids only
    shallow = score_runs(
        run_methods(ds, ["bm25"], setting="open", depth=10, progress=False, log=None), ds.queries
    )
    assert shallow["bm25"]["MRR"] == 0.0  # MRR@10, what k=10 runs used to report


def test_run_depth_bounds_every_run_including_fusions(small, monkeypatch):
    outcomes = run_methods(small, ["bm25", "aethel-reg"], setting="open", depth=15, progress=False, log=None)
    assert all(len(r) == 15 for o in outcomes.values() for r in o.run.values())
    monkeypatch.setitem(registry.FUSIONS, "bm25+reg", ("bm25", "aethel-reg"))
    fused = fuse("bm25+reg", outcomes, depth=15)
    assert all(len(r) == 15 for r in fused.run.values())  # RRF of two 15-deep runs, cut to 15
    assert fused.seconds >= outcomes["bm25"].seconds + outcomes["aethel-reg"].seconds
    full = run_methods(small, ["bm25"], setting="open", progress=False, log=None)["bm25"].run
    assert all(len(r) == len(small.passages) for r in full.values())  # 200 passages < 1,000
    with pytest.raises(ParameterError, match="--depth"):
        run_methods(small, ["bm25"], setting="open", depth=0, progress=False, log=None)
    with pytest.raises(ParameterError, match="not a fusion"):
        fuse("bm25", outcomes)
    with pytest.raises(ParameterError, match="needs the run of 'aethel-ner3'"):
        fuse("rrf", outcomes)


def test_write_trec_runs_round_trips(small, tmp_path):
    from aethel_lite.data.runs import trec_scores
    from aethel_lite.evaluation.runner import write_trec_runs
    from aethel_lite.retrievers import Run

    outcomes = run_methods(small, ["bm25"], setting="open", depth=30, progress=False, log=None)
    paths = write_trec_runs(outcomes, small.queries, tmp_path / "trec")
    assert [p.name for p in paths] == ["bm25.trec", "qrels.txt"]
    back = Run.from_trec(tmp_path / "trec" / "bm25.trec")
    run = outcomes["bm25"].run
    assert back.name == "bm25" and {q: back.pids(q) for q in back} == {q: run.pids(q) for q in run}
    for qid, ranking in run.items():  # scores kept where they strictly decrease (in single precision)
        written = [s for _, s in back[qid]]
        assert written == trec_scores([s for _, s in ranking])
        assert all(np.float32(a) > np.float32(b) for a, b in zip(written, written[1:]))
    qrels = (tmp_path / "trec" / "qrels.txt").read_text().splitlines()
    assert len(qrels) == sum(len(q.gold) for q in small.queries)


# ------------------------------------------------------------------------------- paired + Holm
def test_paired_comparisons_add_holm_over_all_rows():
    from aethel_lite.evaluation.stats import holm

    rng = np.random.default_rng(3)
    qids = [f"q{i}" for i in range(40)]
    block = {
        name: {
            "per_query_metrics": {
                q: {"HR@5": float(v), "MRR": float(w)}
                for q, v, w in zip(qids, rng.integers(0, 2, 40), rng.random(40) * shift)
            }
        }
        for name, shift in (("A", 1.0), ("B", 0.6), ("C", 0.9))
    }
    rows = paired_comparisons(block, [("A", "B"), ("A", "C")], ["HR@5", "MRR"], n_resamples=2000, seed=0)
    assert len(rows) == 4
    raw = [r["p_bootstrap"] for r in rows]  # Holm adjusts the bootstrap p-values, as chapter_tests does
    assert [r["p_holm"] for r in rows] == pytest.approx(holm(raw).tolist(), abs=2e-6)
    assert all(r["p_bootstrap"] <= r["p_holm"] <= 1 for r in rows)
    # the family's smallest p-value is scaled by the number of rows (Holm's first step), by hand
    i = min(range(4), key=lambda j: raw[j])
    assert rows[i]["p_holm"] == pytest.approx(min(1.0, 4 * raw[i]), abs=2e-6)


# ------------------------------------------------------------------------------- load_for_eval
@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"fmt": "musique", "granularity": "chunk"}, "apply to --format financebench only, not musique"),
        ({"fmt": "synthetic", "chunk_words": 100}, "apply to --format financebench only"),
        ({"fmt": "musique", "distractors": True, "setting": "open"}, "apply to --format 2wiki only"),
        ({"fmt": "2wiki", "distractors": True}, "--distractors needs --setting open"),
        ({"fmt": "musique", "setting": "pooled"}, "--setting must be"),
        ({"fmt": "tweets"}, "unknown format 'tweets'"),
    ],
)
def test_load_for_eval_rejects_bad_combinations_before_loading(kwargs, message, tmp_path):
    from aethel_lite.data.select import load_for_eval

    with pytest.raises(ParameterError, match=message):
        load_for_eval(data=str(tmp_path / "nothing"), **kwargs)


def test_load_for_eval_keeps_the_old_call_signature():
    from aethel_lite.data.select import load_for_eval

    ds = load_for_eval("synthetic", None, seed=2, size=120, docs="question")
    assert len(ds.passages) == 120 and all(q.pool is None for q in ds.queries)


@pytest.mark.realdata
def test_load_for_eval_open_musique_merges_repeated_paragraphs(real_data):
    from aethel_lite.data.select import load_for_eval

    closed = load_for_eval("musique", str(real_data))
    opened = load_for_eval("musique", str(real_data), setting="open")
    assert all(q.pool is not None for q in closed.queries) and len(closed.passages) == 4000
    assert all(q.pool is None for q in opened.queries) and opened.meta["setting"] == "open-corpus"
    assert len(opened.passages) == 4000 - opened.meta["duplicates_merged"] < 4000


@pytest.mark.realdata
def test_load_for_eval_open_2wiki_adds_the_distractor_corpus(real_data):
    from aethel_lite.data.select import load_for_eval

    require(real_data / "2wikimultihopqa" / "distractor_corpus_6119.json")
    with_d = load_for_eval("2wiki", str(real_data), setting="open")
    without = load_for_eval("2wiki", str(real_data), setting="open", distractors=False)
    from_file = load_for_eval(
        "2wiki", str(real_data / "2wikimultihopqa" / "2wiki_dev_sample200.jsonl"), setting="open"
    )
    assert (
        with_d.meta["distractors"].endswith("distractor_corpus_6119.json") and "distractors" in without.meta
    )
    assert without.meta["distractors"] is None
    assert len(with_d.passages) == len(without.passages) + with_d.meta["n_distractors"]
    assert [p.pid for p in from_file.passages] == [p.pid for p in with_d.passages]
    assert with_d.meta["n_distractors"] + with_d.meta["distractors_duplicate"] == 6119
    closed = load_for_eval("2wiki", str(real_data))
    assert len(closed.passages) == 1640 and all(q.pool for q in closed.queries)


@pytest.mark.realdata
def test_load_for_eval_financebench_chunks(real_data):
    from aethel_lite.data.select import load_for_eval

    require(real_data / "financebench" / "pages.jsonl.gz")
    ds = load_for_eval("financebench", str(real_data), granularity="chunk", chunk_words=300)
    assert ds.meta["granularity"] == "chunk" and ds.meta["chunk_words"] == 300
    assert all("#p" in p.pid and "c" in p.pid.rsplit("#p", 1)[1] for p in ds.passages[:50])
