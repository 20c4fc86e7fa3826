"""The multi-hop study: its halves and tests on a small corpus (against ir_measures and a direct paired
bootstrap), and the sentences and tables the chapter reads from its result."""

from __future__ import annotations

import ir_measures
import numpy as np
import pytest

from aethel_lite.data.schema import Dataset, Passage, Query
from aethel_lite.evaluation.splits import rule_split
from aethel_lite.evaluation.stats import paired_bootstrap
from aethel_lite.studies import multihop

TOPICS = ["river", "mountain", "castle", "harbour", "forest", "desert", "glacier", "island"]


@pytest.fixture(scope="module")
def study():
    """Eight two-hop questions over a corpus of titled paragraphs: the question names the first paragraph,
    which names the second."""
    passages, queries = [], []
    for i, t in enumerate(TOPICS):
        a, b = f"{t.title()} Hall", f"Ann {t.title()}son"
        passages.append(Passage(f"a{i}", f"a{i}", a, f"{a} is a {t} museum founded by {b}."))
        passages.append(
            Passage(f"b{i}", f"b{i}", b, f"A sculptor who was born in a village near the {TOPICS[i - 1]}.")
        )
        queries.append(
            Query(f"q{i}", f"Where was the founder of {a} born?", frozenset({f"a{i}", f"b{i}"}), 2)
        )
    ds = Dataset("toy-open", passages, queries)
    methods = ("bm25", "dense", multihop.NEW, "aethel-multihop-no-mentions")
    return ds, multihop.multihop_study({"toy-open": ds}, methods=methods, n_resamples=500, seed=0)


def test_metrics_agree_with_ir_measures(study):
    """Recall@2, Recall@5 and AllSupport@5 per question as ir_measures computes them from the same runs."""
    ds, result = study
    block = result["datasets"]["toy-open"]
    qrels = [ir_measures.Qrel(q.qid, g, 1) for q in ds.queries for g in q.gold]
    for method, entry in block["per_query_metrics"].items():
        rows = entry["per_query_metrics"]
        runs = [
            ir_measures.ScoredDoc(q, pid, -r)
            for q, pids in block["runs"][method].items()
            for r, pid in enumerate(pids)
        ]
        got = {
            (m.query_id, str(m.measure)): m.value
            for m in ir_measures.iter_calc([ir_measures.R @ 2, ir_measures.R @ 5], qrels, runs)
        }
        for qid, values in rows.items():
            assert values["Recall@2"] == pytest.approx(got[(qid, "R@2")], abs=1e-6), (method, qid)
            assert values["Recall@5"] == pytest.approx(got[(qid, "R@5")], abs=1e-6), (method, qid)
            assert values["AllSupport@5"] == float(got[(qid, "R@5")] == 1.0)


def test_halves_and_paired_tests(study):
    """The halves are the split rule's; each test row is the paired bootstrap of the per-question differences."""
    ds, result = study
    block = result["datasets"]["toy-open"]
    assert block["halves"] == rule_split([q.qid for q in ds.queries])
    pq = {m: e["per_query_metrics"] for m, e in block["per_query_metrics"].items()}
    for row in block["tests"]:
        ids = [q.qid for q in ds.queries] if row["half"] == "all" else block["halves"][row["half"]]
        a = [pq[row["a"]][q][row["metric"]] for q in sorted(ids)]
        b = [pq[row["b"]][q][row["metric"]] for q in sorted(ids)]
        boot = paired_bootstrap(a, b, n_resamples=500, seed=0)
        assert (row["diff"], row["ci_low"], row["ci_high"]) == pytest.approx(
            (boot.mean_diff, boot.ci_low, boot.ci_high), abs=1e-6
        )
        assert row["mean_a"] == pytest.approx(np.mean(a), abs=1e-6)


def test_the_walk_finds_the_second_paragraph(study):
    """On this corpus the founder's paragraph is named only by the museum's: the walk must bring it."""
    _, result = study
    means = result["datasets"]["toy-open"]["means"]
    assert means[multihop.NEW]["all"]["AllSupport@5"]["mean"] == 1.0
    assert (
        means["aethel-multihop-no-mentions"]["all"]["Recall@2"]["mean"]
        < means[multihop.NEW]["all"]["Recall@2"]["mean"]
    )


def test_verdict_judges_targets_only_on_a_full_run():
    cell = {"mean": 0.9, "ci_low": 0.8, "ci_high": 0.95, "n": 80}
    tests = [
        {
            "half": "test",
            "metric": "Recall@5",
            "a": multihop.NEW,
            "b": b,
            "diff": d,
            "ci_low": lo,
            "ci_high": hi,
        }
        for b, d, lo, hi in (("bm25", 0.2, 0.1, 0.3), ("dense", 0.1, -0.01, 0.2))
    ]
    result = {
        "targets": {"2wiki-open": 0.85},
        "datasets": {"2wiki-open": {"means": {multihop.NEW: {"test": {"Recall@5": cell}}}, "tests": tests}},
    }
    text = multihop.verdict(result, "test")
    assert "Recall@5 0.900" in text and "`dense` +0.100 [-0.010, +0.200]" in text
    assert "not above every baseline beyond its CI" in text and "the target 0.85 is met" in text
    quick = multihop.verdict({**result, "parameters": {"quick": True}}, "test")
    assert "target" not in quick.split("\n")[0] and "Quick mode" in quick


def test_the_chapter_s_study_shows_what_its_file_holds(study, tmp_path):
    """MultihopStudy keeps the result as its file holds it (keys sorted), writes it once, and builds the
    chapter's lines, tables and verdict from it."""
    import json

    ds, result = study
    shown = multihop.MultihopStudy({**result, "parameters": {"quick": True}, "synthetic_only": False})
    shown.save(tmp_path)
    assert json.loads((tmp_path / "multihop.json").read_text()) == shown.result
    assert list(shown.result["published"]) == sorted(multihop.PUBLISHED)  # the file's order
    (line,) = shown.corpora()
    assert line.startswith("**toy-open**: 8 questions (") and "16 passages" in line
    assert set(shown.table()["method"]) == {"bm25", "dense", multihop.NEW}
    heads = shown.tests_tables()
    assert heads[0] == "**Recall@5**" and set(heads[1]["vs"]) == {"bm25", "dense"}
    assert list(shown.ablation_tables()[1]["vs"]) == ["aethel-multihop-no-mentions"]
    assert list(shown.cost_table()["passages"]) == [16]
    assert shown.verdict() == multihop.verdict(shown.result, "test")
    with pytest.raises(ValueError, match=r"datasets: unknown \['nope'\]"):
        multihop.load_corpora(["nope"])
