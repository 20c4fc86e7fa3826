"""The teaching chapters (graph construction, provenance) executed in ``quick`` mode, as ``make book`` runs them.

With ``AETHEL_DATA`` set (CI) they run on the real MuSiQue and 2Wiki pools, else on the synthetic
corpus (and must say so). Every count the provenance chapter prints must be the one in
``results/provenance.json``, and two runs must write identical result files.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from chapters import check_provenance_counts

from aethel_lite.io import read_json

REPO = Path(__file__).resolve().parents[2]


def _run(root: Path, env: dict, name: str, *params: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "aethel_lite.book.notebooks",
            "--root",
            str(root),
            "--no-progress",
            "--only",
            name,
            "-p",
            "quick",
            "true",
            *params,
        ],
        env=env,
        capture_output=True,
        text=True,
        cwd=root,
    )


@pytest.fixture
def root(tmp_path):
    shutil.copytree(
        REPO / "notebooks", tmp_path / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints")
    )
    return tmp_path


def _env(real: bool, cache: Path) -> dict:
    """A chapter run's environment, on the run's shared cache (the quick book runs the same synthetic
    chapters; the hybrid chapter's test and the MuSiQue acceptance tag the same paragraphs)."""
    env = {**os.environ, "AETHEL_CACHE": str(cache)}
    if not real:
        env.pop("AETHEL_DATA", None)
    return env


def _outputs(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return json.dumps([c.get("outputs", []) for c in nb.cells], ensure_ascii=False)


def _execute(root: Path, env: dict, name: str, result: str, *params: str) -> tuple[dict, str]:
    """Run one chapter in quick mode; its result file and its executed outputs (as JSON text)."""
    run = _run(root, env, name, *params)
    assert run.returncode == 0, run.stderr[-4000:]
    shown = _outputs(root / "book" / "executed" / f"{name}.ipynb")
    assert "Traceback" not in shown
    return read_json(root / "results" / f"{result}.json"), shown


def _check_provenance(root: Path, env: dict, *params: str) -> dict:
    saved, shown = _execute(root, env, "40_provenance", "provenance", *params)
    check_provenance_counts(saved, shown)
    assert _execute(root, env, "40_provenance", "provenance", *params)[0] == saved  # deterministic
    return saved


# Without data the chapter runs in the quick book's build (tests/book/test_notebooks.py), which checks the same
# counts there and that it says it ran on the synthetic corpus.


@pytest.mark.realdata
def test_provenance_chapter_on_real_data(root, real_data, run_cache):
    saved = _check_provenance(root, _env(True, run_cache))
    assert not any(saved["synthetic_fallback"].values())
    assert set(saved["reports"]) == {"musique", "2wiki"}
    assert all(r["n_queries"] == 20 for r in saved["reports"].values())


def _check_graph_chapter(root: Path, env: dict, *params: str) -> dict:
    saved, shown = _execute(root, env, "01_graph_construction", "graph_construction", *params)
    walk, drawing = saved["walk"], saved["walk"]["drawing"]
    assert len(drawing["nodes"]) <= max(60, walk["graph"]["passages"])  # the picture stays legible
    n_ent = sum(n["kind"] == "entity" for n in drawing["nodes"])
    assert f"{n_ent} of the {walk['graph']['entities']} entities" in shown  # the text says what was left out
    assert shown.count("image/png") >= 2
    assert abs(sum(s["mass"] for s in walk["seeds"]) - 1) < 1e-9
    assert saved["alias"]["mention"] and not any(
        saved["alias"]["mention"] in t for t in saved["alias"]["texts"].values()
    )
    return saved


def test_graph_chapter_without_data_and_with_student_parameters(root, run_cache):
    env = _env(False, run_cache)
    saved = _check_graph_chapter(root, env)
    assert saved["synthetic_fallback"] and "SYNTHETIC corpus" in _outputs(
        root / "book" / "executed" / "01_graph_construction.ipynb"
    )
    changed = _check_graph_chapter(
        root, env, "-p", "alpha", "0.15", "-p", "extractor", "regex", "-p", "bct", "none"
    )
    assert changed["parameters"] | {"alpha": 0.5, "extractor": "ner3", "bct": "both"} == saved["parameters"]
    assert all(s["via"] == "exact" for s in changed["walk"]["seeds"] if s["via"] != "bm25-teleport")
    bad = _run(root, env, "01_graph_construction", "-p", "extractor", "spacy")
    assert bad.returncode == 1 and "extractor: choose from" in bad.stderr


@pytest.mark.realdata
def test_graph_chapter_on_real_data(root, real_data, run_cache):
    saved = _check_graph_chapter(root, _env(True, run_cache))
    assert not saved["synthetic_fallback"] and saved["dataset"] == "musique"
    assert len(saved["question"]["pool"]) == 20


# -- the library behind the graph-construction chapter ---------------------------------------------
import networkx as nx  # noqa: E402
import numpy as np  # noqa: E402

from aethel_lite.core.ppr import personalized_pagerank  # noqa: E402
from aethel_lite.data.schema import Passage, Query  # noqa: E402
from aethel_lite.data.synthetic import alias_table, make_synthetic  # noqa: E402
from aethel_lite.errors import ParameterError  # noqa: E402
from aethel_lite.retrievers import GraphRetriever  # noqa: E402
from aethel_lite.studies import teaching  # noqa: E402

TEXTS = [
    "Northwind Trading bought Baxter Mills last year.",
    "Baxter Mills is based in Gamma City.",
    "Gamma City hosts Delta Works.",
    "Delta Works employs many.",
    "Northwind Trading Europe reported growth.",
    "Omega Labs sold Zeta Group.",
]


@pytest.fixture(scope="module")
def small():
    passages = [Passage(f"p{i}", f"d{i}", f"Title {i}", t) for i, t in enumerate(TEXTS)]
    return passages, GraphRetriever(extractor="regex", bct="both", cache=False).fit(passages)


@pytest.mark.parametrize("alpha", [0.15, 0.5])
def test_power_trace_converges_to_pagerank_and_networkx(small, alpha):
    _, r = small
    g = r.graph_
    _, seeds, _ = r.personalization("Who owns Northwind Trading?")
    trace = teaching.power_trace(g.adjacency(), seeds, alpha, n_iter=200)
    assert trace.shape == (201, g.n_nodes)
    np.testing.assert_allclose(trace.sum(axis=1), 1.0)
    np.testing.assert_allclose(trace[0], seeds / seeds.sum())
    exact = personalized_pagerank(g.adjacency(), seeds, alpha=alpha, tol=1e-13).scores
    np.testing.assert_allclose(trace[-1], exact, atol=1e-10)
    G = nx.from_scipy_sparse_array(g.adjacency())
    pr = nx.pagerank(
        G,
        alpha=1 - alpha,
        personalization={i: float(seeds[i]) for i in range(g.n_nodes)},
        tol=1e-14,
        max_iter=100_000,
    )
    np.testing.assert_allclose(trace[-1], [pr[i] for i in range(g.n_nodes)], atol=1e-9)
    err = np.abs(trace - exact).sum(axis=1)
    assert all(err[t] <= 2 * (1 - alpha) ** t + 1e-12 for t in range(len(err)))  # the contraction bound


def test_power_trace_rejects_bad_input(small):
    _, r = small
    with pytest.raises(ParameterError, match="seeds"):
        teaching.power_trace(r.graph_.adjacency(), np.zeros(r.graph_.n_nodes), 0.5)
    with pytest.raises(ParameterError, match="n_iter"):
        teaching.power_trace(r.graph_.adjacency(), np.ones(r.graph_.n_nodes), 0.5, n_iter=-1)


def test_drawing_data_keeps_passages_and_seeds_and_counts_what_is_left_out(small):
    _, r = small
    g = r.graph_
    exps, seeds, _ = r.personalization("Who owns Northwind Trading?")
    p = personalized_pagerank(g.adjacency(), seeds, alpha=0.5).scores
    data = teaching.drawing_data(g, p, seeds=[e.entity for e in exps], gold=["p1"], max_nodes=8)
    kinds = [n["kind"] for n in data["nodes"]]
    assert kinds.count("passage") == 6 and len(kinds) == 8
    drawn = {n["id"] for n in data["nodes"] if n["kind"] == "entity"}
    assert drawn == {"northwind trading", "northwind trading europe"}  # the seeds come first
    assert data["left_out"]["entities"] == g.n_entities - 2
    assert data["left_out"]["ppr_mass"] == pytest.approx(
        sum(p[g.n_passages + g.entity_index[e]] for e in g.entities if e not in drawn)
    )
    assert data["left_out"]["edges"] + len(data["edges"]) == g.incidence.nnz
    assert [n["id"] for n in data["nodes"] if n["gold"]] == ["p1"]
    everything = teaching.drawing_data(g, p, max_nodes=60)
    reached = {e for e in g.entities if p[g.n_passages + g.entity_index[e]] > 0}
    assert {n["id"] for n in everything["nodes"] if n["kind"] == "entity"} == reached
    assert everything["left_out"]["unreached_entities"] == g.n_entities - len(reached)
    fig = teaching.draw_graph(data, title="t")
    assert fig.axes
    with pytest.raises(ParameterError, match="smaller than the 6 passages"):
        teaching.drawing_data(g, p, max_nodes=5)


def test_entity_comparison_splits_found_into_kept_and_dropped(small):
    from aethel_lite.core.entities import RegexExtractor

    passages, r = small
    got = teaching.entity_comparison({"regex": r}, passages[:2])["regex"]
    assert got["found"]["p0"] == [
        "baxter mills",
        "northwind trading",
        "title 0",
    ]  # the title is part of the text
    assert got["dropped"] == {"p0": [], "p1": []}
    # an extractor with stop-entities: a key in more than max_df of the passages is found but not kept
    extractor = RegexExtractor()
    extractor.max_df, extractor.min_count = 0.3, 1
    stop = GraphRetriever(extractor=extractor, cache=False).fit(passages)
    got = teaching.entity_comparison({"regex": stop}, passages[:2])["regex"]
    assert got["dropped"] == {"p0": ["baxter mills"], "p1": ["baxter mills", "gamma city"]}
    for pid in ("p0", "p1"):
        assert sorted(got["kept"][pid] + got["dropped"][pid]) == got["found"][pid]
        assert all(k in stop.graph_.entity_index for k in got["kept"][pid])


def test_rankings_by_mode_and_alpha_sweep(small):
    passages, r = small
    pool = tuple(f"p{i}" for i in range(6))
    q = Query("q", "Who owns Northwind Trading?", frozenset({"p1"}), pool=pool)
    modes = teaching.rankings_by_mode(r, q, k=3)
    assert [pid for pid, _ in modes["none"]] == ["p0", "p1", "p2"]
    assert [pid for pid, _ in modes["substring"]][:2] == ["p0", "p4"]  # BCT's substring seed brings p4 in
    assert modes["both"] == modes["substring"]
    # r with bct="none", over the same graph and BM25 index (no variant(): from_graph reuses them)
    no_bct = GraphRetriever.from_graph(
        passages, r.graph_, r.bm25_, **{**r.get_params(deep=False), "bct": "none"}
    )
    sweep = teaching.alpha_sweep(no_bct, q, [0.15, 0.85], k=3)
    assert set(sweep) == {"0.15", "0.85"}
    assert sweep["0.15"]["gold_ranks"] == {"p1": 2}


def test_pick_alias_question_finds_a_fund_named_by_an_alias():
    ds = make_synthetic(300, seed=0).with_random_pools(20, seed=0)
    r = GraphRetriever(extractor="regex", bct="both", alias_table=alias_table(ds), cache=False).fit(
        ds.passages
    )
    q = teaching.pick_alias_question(r, ds)
    assert q is not None and q.meta["type"] == "single"
    texts = {p.pid: p.text for p in ds.passages}
    assert not any(q.meta["mention"] in texts[g] for g in q.gold)
    from aethel_lite.core.bct import provenance

    graph = r.graph_.subgraph(q.pool)
    aliases = [e for e in r.expansions(q.text, graph) if e.via == "alias"]
    assert any(provenance(g, aliases, graph) for g in q.gold)  # a gold passage names the fund by an alias


def test_the_steps_of_a_walk_compose_into_walkthrough(small):
    """The chapter calls the steps one by one; walkthrough is the same steps in one call."""
    from aethel_lite.explain.attribution import seed_pieces
    from aethel_lite.explain.reach import hit_chains

    passages, r = small
    q = Query(
        "q", "Who owns Northwind Trading?", frozenset({"p1"}), pool=tuple(f"p{i}" for i in (5, 0, 1, 4))
    )
    idx, graph = teaching.pool_of(r, q)
    assert [graph.pids[i] for i in range(graph.n_passages)] == ["p5", "p0", "p1", "p4"]  # pool order
    s, pieces = seed_pieces(r, q.text, graph, idx)
    ppr, trace = teaching.pool_pagerank(r, graph, s, n_iter=5)
    np.testing.assert_allclose(
        ppr, personalized_pagerank(graph.adjacency(), s, alpha=r.alpha, tol=r.tol).scores
    )
    np.testing.assert_allclose(trace, teaching.power_trace(graph.adjacency(), s, r.alpha, n_iter=5))
    traced = teaching.traced_passages(graph, trace, ppr, q.gold, n_distractors=2)
    others = sorted(("p5", "p0", "p4"), key=lambda pid: -ppr[graph.pids.index(pid)])
    assert list(traced) == ["p1", *others[:2]]  # the gold passage, then the two others with most PageRank
    assert teaching.seed_entities(pieces) == [row["entity"] for row in teaching.seed_rows(pieces)]
    steps = {
        "drawing": teaching.drawing_data(
            graph, ppr, seeds=teaching.seed_entities(pieces), gold=["p1"], max_nodes=60
        ),
        "trace": teaching.traced_passages(graph, trace, ppr, q.gold),
        "alpha_sweep": {},
        "modes": teaching.rankings_by_mode(r, q),
        "hits": hit_chains(r, q, k=10),
    }
    record = teaching.walk_record(r.query_key_sources(q.text), pieces, graph, **steps)
    assert record == teaching.walkthrough(r, q, n_iter=5)
    assert record["graph"]["passages"] == 4 and not record["fallback"]
    zeros, flat = teaching.pool_pagerank(r, graph, None, n_iter=3)  # no seeds: nothing reached
    assert not zeros.any() and flat.shape == (4, graph.n_nodes) and not flat.any()
    with pytest.raises(ParameterError, match="no closed pool"):
        teaching.pool_of(r, Query("open", "Who owns Northwind Trading?", frozenset({"p1"})))


def test_the_teaching_tables(small):
    from aethel_lite.studies import teaching_tables as tables

    passages, r = small
    q = Query("q", "Who owns Northwind Trading?", frozenset({"p1"}), pool=tuple(f"p{i}" for i in range(6)))
    titles = {p.pid: p.title for p in passages}
    pool = tables.pool_table(q, {p.pid: p.text for p in passages}, titles, width=10)
    assert list(pool["gold"]) == ["", "✓", "", "", "", ""] and pool.loc[1, "text"] == TEXTS[0][:10] + "…"
    entities = teaching.entity_comparison({"regex": r, "ner": r, "ner3": r}, passages)
    shown = tables.entity_table(entities, q, titles, n_other=2)
    assert list(shown.index) == ["✓ Title 1", "Title 0", "Title 2"]  # the gold paragraph first
    assert shown.loc["Title 0", "ner3"] == "baxter mills; northwind trading; title 0"
    # 3 keys (two names and the title) in four paragraphs, 2 in "Delta Works employs many." and p4
    assert list(tables.entity_summary(entities)["keys per paragraph"]) == [pytest.approx(16 / 6)] * 3
    modes = teaching.rankings_by_mode(r, q, k=3)
    ranking = tables.ranking_table(modes, q.gold, titles, k=3)
    assert list(ranking["none"]) == ["Title 0", "✓ Title 1", "Title 2"]
    hits = tables.provenance_table(teaching.walkthrough(r, q)["hits"], titles)
    assert hits.loc[1, "provenance"] == "northwind trading → northwind trading (exact)"
    sweep = tables.alpha_table(teaching.alpha_sweep(r, q, [r.alpha], k=3), q.gold, titles)
    both = [pid for pid, _ in modes["both"]]  # the retriever's own α and BCT mode: the same search
    assert sweep.loc["✓ Title 1", f"α = {r.alpha}"] == both.index("p1") + 1


def test_the_teaching_headlines():
    from aethel_lite.evaluation.stats import format_estimate as fmt_ci
    from aethel_lite.evaluation.stats import wilson
    from aethel_lite.studies import teaching_tables as tables
    from aethel_lite.studies.provenance import provenance_headline

    modes = {m: [["g1", 1.0], ["x", 0.5], ["g2", 0.2]] for m in ("none", "alias", "substring", "both")}
    alias_modes = {
        **{m: [["x", 1.0], ["y", 0.5], ["a", 0.2]] for m in ("none", "substring")},
        **{m: [["a", 1.0], ["x", 0.5]] for m in ("alias", "both")},
    }
    saved = {
        "question": {"qid": "q1", "gold": ["g1", "g2"]},
        "walk": {"modes": modes},
        "alias": {"qid": "q2", "gold": ["a"], "mention": "NRCP IV", "walk": {"modes": alias_modes}},
        "parameters": {"bct": "both", "alpha": 0.5},
    }
    shown, verdict = tables.graph_headline(saved)
    assert shown.to_dict("records")[0] == {
        "BCT mode": "none",
        "q1: first gold rank": 1,
        "q1: gold in top 5": "2 of 2",
        "q2: first gold rank": 3,
        "q2: gold in top 5": "1 of 1",
    }
    assert "“NRCP IV”" in verdict and "ranks 3 without BCT and 1 with it" in verdict
    report = {
        "gold_reach": {"direct": 8, "bct": 1, "unreached": 1, "two-hop": 0},
        "n_gold": 10,
        "bct_only": 1,
        "k": 5,
        "n_queries": 4,
        "intrusions": {"n_questions": 1},
    }
    shown, verdict = provenance_headline(
        {"reports": {"musique": report}, "datasets": {"musique": {"name": "musique"}}}
    )
    assert list(shown["gold passage"]) == [
        "names an exact seed",
        "names a BCT seed only",
        "not reached",
    ]
    assert shown.loc[0, "musique [95% CI]"] == fmt_ci(0.8, *wilson(8, 10))
    assert "8 of 10 gold passages name an exact seed, 1 are reached only through a BCT expansion" in verdict
    result = {
        "dataset": {
            "n_passages": 1200,
            "n_documents": 40,
            "n_queries": 9,
            "hops": {"1": 4, "2": 3, "3": 2},
            "mean_gold": 2.0,
        },
        "parameters": {"seed": 0, "n_passages": 1200},
    }
    shown, verdict = tables.quickstart_headline(result)
    assert shown.to_dict("records") == [
        {
            "passages": 1200,
            "documents": 40,
            "questions": 9,
            "multi-hop questions": 5,
            "gold passages per question": 2.0,
        }
    ]
    assert verdict.startswith(
        "The synthetic corpus holds 1,200 passages in 40 documents and 9 questions, 5 of"
    )
    fields = tables.result_fields(result)  # one row per field, keys sorted as in the result file
    assert list(fields.index)[:3] == ["dataset.hops.1", "dataset.hops.2", "dataset.hops.3"]
    assert list(fields.index)[-2:] == ["parameters.n_passages", "parameters.seed"]
    assert fields.loc["dataset.n_passages", "value"] == 1200


def test_the_provenance_study_reads_its_result():
    from aethel_lite.explain.reach import REACH
    from aethel_lite.studies.provenance import ProvenanceStudy

    def report(direct, intruders):
        reach = {**dict.fromkeys(REACH, 0), "direct": direct, "two-hop": 1, "unreached": 1}
        rows = [
            {
                "question": f"q{i}?",
                "title": f"T{i}",
                "rank": 3,
                "seed": s,
                "entity": s + " co",
                "via": v,
                "bct_fraction": f,
                "displaced_gold": d,
            }
            for i, (s, v, f, d) in enumerate(intruders)
        ]
        return {
            "gold_reach": reach,
            "n_gold": direct + 2,
            "bct_only": 0,
            "k": 5,
            "n_queries": 4,
            "questions_all_gold_direct": 1,
            "intrusion_rows": rows,
            "intrusions": {
                "n_passages": len(rows),
                "n_questions": len(rows),
                "n_questions_displacing_gold": 0,
            },
        }

    result = {
        "datasets": {"musique": {"name": "MuSiQue"}, "2wiki": {"name": "2Wiki"}},
        "reports": {
            "musique": report(2, [("acme", "token", 0.6, []), ("big fund", "alias", 0.9, ["g"])]),
            "2wiki": report(6, []),
        },
        "example": {
            "dataset": "musique",
            "qid": "q1",
            "question": "Who?",
            "gold": ["g"],
            "titles": {"g": "G"},
            "hits": [{"rank": 1, "pid": "g", "gold": True, "ppr": 0.5, "chains": []}],
        },
    }
    study = ProvenanceStudy(result, [])
    assert list(study.reach_counts().columns) == ["2Wiki", "MuSiQue"]  # the result file's order
    assert list(study.reach_table().columns) == [
        "gold passages: 2Wiki",
        "gold passages: MuSiQue",
        "share: 2Wiki",
        "share: MuSiQue",
    ]
    assert study.reach_table().loc["names an exact seed", "share: MuSiQue"] == 0.5
    assert (
        "* **MuSiQue** (4 questions, 4 gold passages in their pools): 2 gold passages" in study.reach_text()
    )
    examples = study.intrusions(n_examples=1)
    assert examples.to_dict("records")[0]["passage"] == "T1" and len(examples) == 1  # gold displaced first
    assert study.rules_text() == (
        "* **MuSiQue**: of the 2 intruders, 1 came through the alias rule, 0 through substring and 1 through "
        "token matches; for 1 the question key was a single word."
    )
    assert "2 wrong passages in 2 of 4 questions" in study.intrusion_text()
    assert "* **2Wiki**: 75% of the gold passages name an exact seed" in study.takeaways()
    assert study.example_question() == "**q1** (MuSiQue): Who?  \ngold: `g` (G)"
    assert study.example_table().loc[0, "rule"] == "(BM25 order)"  # a hit PageRank did not reach
    assert study.headline()[1].startswith("On 2Wiki, 6 of 8 gold passages name an exact seed")
