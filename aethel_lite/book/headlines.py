"""Each chapter's answer, first: one small table with 95% intervals and a one-paragraph verdict.

Every function here reads a chapter's saved result file only: means over questions with a percentile
bootstrap interval (:func:`aethel_lite.evaluation.stats.bootstrap_ci`), or a Wilson score interval for
a count out of a total (Wilson 1927), and the verdict's every number and direction from the same file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..evaluation.stats import bootstrap_ci, format_difference, format_estimate, format_share, wilson
from ..studies.beyond_report import TARGET_BASELINES, targets
from .report import Table, dataframe, table

__all__ = [
    "closed_pool_headline",
    "open_corpus_verdict",
    "scaling_verdict",
    "swarm_headline",
    "hybrid_headline",
    "hybrid_takeaways",
    "comparisons_headline",
]


def closed_pool_headline(
    saved: Mapping[str, Any],
    metrics: Sequence[str] = ("HR@5", "AllSupport@5"),
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> tuple[Table, str]:
    """Methods × data sets of ``results/closed_pool.json`` (each metric's mean with its 95% bootstrap CI), and
    a verdict on the graph with BCT against BM25."""
    rows, said = [], []
    order = saved.get("parameters", {}).get("methods") or []
    for name, block in saved["methods"].items():
        label = f"{name} (synthetic)" if saved.get("synthetic_fallback", {}).get(name) else name
        ranked = [m for m in order if m in block] + sorted(m for m in block if m not in order)
        for i, method in enumerate(ranked):
            entry = block[method]
            row = {"data set": label if i == 0 else "", "method": method}  # the data set named once per group
            for m in metrics:
                values = [v[m] for v in entry.get("per_query_metrics", {}).values() if m in v]
                if len(values) >= 2:
                    ci = bootstrap_ci(values, n_resamples=n_resamples, seed=seed)
                    row[f"{m} [95% CI]"] = format_estimate(ci)
                elif m in entry:
                    row[f"{m} [95% CI]"] = f"{entry[m]:.3f}"
            rows.append(row)
        hr = metrics[0]
        top = max(block[m].get(hr, float("-inf")) for m in block)
        best = [f"`{m}`" for m in ranked if block[m].get(hr) == top]
        n = saved.get("datasets", {}).get(name, {}).get("n_queries")
        text = f"On {label}{f' ({n} questions)' if n else ''}, "
        text += (
            f"{best[0]} ranks a supporting paragraph in the top 5 most often ({hr} {top:.3f})"
            if len(best) == 1
            else f"{', '.join(best[:-1])} and {best[-1]} share the highest {hr} ({top:.3f})"
        )
        tests = {
            (t["b"], t["metric"]): t
            for t in saved.get("paired_tests", {}).get(name, [])
            if t["a"] == "aethel-bct"
        }
        against = [f"on {m} {format_difference(tests[('bm25', m)])}" for m in metrics if ("bm25", m) in tests]
        if against:
            text += "; the graph with BCT minus BM25, paired over the same questions: " + "; ".join(against)
        said.append(text + ".")
    verdict = " ".join(said)
    if any(saved.get("synthetic_fallback", {}).values()):
        verdict += (
            " A data set marked synthetic ran on the synthetic corpus standing in for the real one (no data"
            " configured): its numbers describe that invented corpus, not the paper's data."
        )
    return table(dataframe(rows)), verdict


def scaling_verdict(
    saved: Mapping[str, Any], crossings: Sequence[Mapping[str, Any]], metric: str = "HR@5"
) -> str:
    """One paragraph from a scaling result: per corpus, the graph's and the best baseline's ``metric`` at the
    largest size and where the graph passed the others (``crossings``: its
    :func:`~aethel_lite.studies.scaling.crossover_rows`)."""
    said = []
    for name, run in saved["runs"].items():
        curves = run["curves"]
        graph = next((m for m in ("aethel-ner3", "aethel-reg") if m in curves), None)
        if graph is None:
            continue
        last = {m: c[metric][-1] for m, c in curves.items() if metric in c}
        rival = max(
            (m for m in last if m != graph and not m.startswith("aethel")),
            key=lambda m: last[m]["mean"],
            default=None,
        )
        text = (
            f"On {name} ({run['sizes'][0]:,} to {run['sizes'][-1]:,} passages), at the largest size `{graph}` "
            f"has {metric} {format_estimate(last[graph])}"
        )
        if rival:
            text += f" against `{rival}`'s {format_estimate(last[rival])}"
        parts = []
        for c in (c for c in crossings if c["corpus"] == name):
            other = c["claim"].split()[2] if " passes " in c["claim"] else c["claim"].split()[-1]
            sizes = c["sizes where graph > it"]
            part = (
                f"above `{other}` at {', '.join(f'{x:,}' for x in sizes)} passages"
                if sizes
                else f"never above `{other}`"
            )
            if " passes " in c["claim"] and c.get("ours") not in (
                "",
                None,
            ):  # never set for a synthetic corpus
                part += (
                    " (at no size for good)" if c["ours"] == "never" else f" (for good from {c['ours']:,})"
                )
            parts.append(part)
        said.append(text + ("; the graph is " + "; ".join(parts) if parts else "") + ".")
    verdict = " ".join(said)
    if saved.get("synthetic_only"):
        verdict = (
            "These curves come from the synthetic corpus (no real data was found), not the paper's experiment. "
            + verdict
        )
    return verdict


def swarm_headline(saved: Mapping[str, Any]) -> tuple[Table, str]:
    """The swarm's findings scored per evidence source (95% Wilson intervals); the verdict on the topological filter."""
    scores = saved["synthetic"]["scores"]
    rows = [
        {
            "evidence": source,
            "fact recall [95% CI]": format_share(s["facts"]["tp"], s["facts"]["n_gold"]),
            "fact precision [95% CI]": format_share(s["facts"]["tp"], s["facts"]["n_found"]),
            "contradictions found [95% CI]": format_share(
                s["conflicts"]["found"], s["conflicts"]["n_planted"]
            ),
        }
        for source, s in scores.items()
    ]
    g = scores["graph"]["facts"]
    others = {k: v["facts"] for k, v in scores.items() if k not in ("graph", "graph-ner")}
    verdict = (
        f"Fed the graph's passages, the specialists recover {g['tp']} of {g['n_gold']} gold fund facts "
        f"(recall {format_share(g['tp'], g['n_gold'])})"
    )
    if others:
        best = max(others, key=lambda k: others[k]["tp"] / others[k]["n_gold"] if others[k]["n_gold"] else 0)
        b = others[best]
        lo_g = wilson(g["tp"], g["n_gold"])
        hi_b = wilson(b["tp"], b["n_gold"])
        apart = lo_g is not None and hi_b is not None and lo_g[0] > hi_b[1]
        verdict += (
            f"; the best other evidence, `{best}`, recovers {b['tp']} ({format_share(b['tp'], b['n_gold'])}). "
            + (
                "The intervals do not overlap: on this corpus the paper's claim that graph-filtered context "
                "serves the specialists better holds."
                if apart
                else "The intervals overlap: this run does not separate the two."
            )
        )
    else:
        verdict += "."
    a = saved["audit"]
    verdict += f" Every one of the {a['n_figures']} figures in the {a['n_memos']} memos is traced to a quote in its passage."
    return table(dataframe(rows)), verdict


def open_corpus_verdict(saved: Mapping[str, Any], metric: str = "MRR") -> str:
    """One paragraph from ``results/open_corpus.json``: per corpus the best method's ``metric`` and the NER3
    graph's, and the count of the paper's numbers by verdict."""
    said = []
    for name, r in saved["datasets"].items():
        ci = {m: e["all"][metric] for m, e in r["ci"].items() if metric in e["all"]}
        if not ci:
            continue
        best = max(ci, key=lambda m: (ci[m]["mean"], m))
        text = f"On {name}, the best {metric} is `{best}`'s, {format_estimate(ci[best])}"
        for other in ("aethel-ner3", "bm25"):
            if other in ci and other != best:
                text += f"; `{other}` {format_estimate(ci[other])}"
        said.append(text + ".")
    counts = Counter(v["verdict"] for v in saved.get("verdicts", []))
    if counts:
        said.append(
            f"Of the paper's {sum(counts.values())} open-corpus numbers: "
            + ", ".join(f"{n} {v}" for v, n in counts.items())
            + "."
        )
    verdict = " ".join(said)
    if saved.get("synthetic_only"):
        verdict = (
            "Only the synthetic corpus ran (no real data was found): these are not the paper's experiment. "
            + verdict
        )
    return verdict


def _hybrid_rows(saved: Mapping[str, Any], metric: str, half: str):
    """Per corpus of a ``beyond`` result: its block, the questions of ``half``, the better baseline on that half,
    and the paired test of ``aethel-hybrid`` against it (None if not run)."""
    for name, r in saved.get("datasets", {}).items():
        m = r["metrics"]
        if (
            "aethel-hybrid" not in m
            or not all(b in m for b in TARGET_BASELINES)
            or m["aethel-hybrid"][half][metric] is None
        ):
            continue
        qids = list(r["per_query_metrics"]["aethel-hybrid"]) if half == "all" else r["halves"][half]
        better = max(TARGET_BASELINES, key=lambda b: (m[b][half][metric], b))
        test = next(
            (
                t
                for t in r["tests"]
                if (t["half"], t["a"], t["b"], t["metric"]) == (half, "aethel-hybrid", better, metric)
            ),
            None,
        )
        yield name, r, qids, better, test


def hybrid_headline(
    saved: Mapping[str, Any],
    metric: str = "MRR",
    half: str = "test",
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> tuple[Table, str]:
    """``aethel-hybrid`` against BM25 and dense retrieval on the ``half`` of each corpus no weight was chosen on
    (``results/beyond.json``), with 95% CIs; the verdict adds the closed pools and our targets."""
    rows, said = [], []
    for name, r, qids, better, t in _hybrid_rows(saved, metric, half):
        row = {"data set": name, f"{half} questions": len(qids)}
        for method in ("aethel-hybrid", *TARGET_BASELINES):
            pq = r["per_query_metrics"][method]
            values = [pq[q][metric] for q in qids if q in pq]
            ci = bootstrap_ci(values, n_resamples=n_resamples, seed=seed) if len(values) >= 2 else None
            row[f"{method} [95% CI]"] = (
                format_estimate(ci) if ci else f"{r['metrics'][method][half][metric]:.3f}"
            )
        row["hybrid − better [95% CI]"] = f"{format_estimate(t, signed=True)} ({better})" if t else ""
        rows.append(row)
        if t:
            said.append(f"on {name} ({t['n']} questions) {format_difference(t)}")
    verdict = (
        f"On the {half} halves — questions no weight was chosen on — `aethel-hybrid` minus the better of BM25 and "
        f"dense retrieval on {metric}: " + "; ".join(said) + "."
        if said
        else f"No corpus has a {half} half large enough for a paired test of `aethel-hybrid` in this build."
    )
    closed = saved.get("closed") or {}
    if closed:
        ok = [n for n, c in closed.items() if c["passes"]]
        worse = [n for n in closed if n not in ok]
        verdict += (
            " In the closed pools it is not worse than `aethel-bct` beyond the interval"
            + (f" on {', '.join(ok)}" if ok else " on none")
            + (f", and worse on {', '.join(worse)}" if worse else "")
            + "."
        )
    run = [x for x in targets(saved) if x["met"] is not None]
    if run:
        verdict += f" {sum(x['met'] for x in run)} of our {len(run)} targets measured here are met."
    if saved.get("synthetic_only"):
        verdict = (
            "Only the synthetic corpus ran (no real data was found): these numbers are not about filings. "
            + verdict
        )
    return table(dataframe(rows)), verdict


def hybrid_takeaways(saved: Mapping[str, Any], metric: str = "MRR") -> str:
    """The hybrid chapter's closing bullets: per corpus the test-half gain over the better baseline and the
    graph's part of it, each with its paired-bootstrap 95% CI, then our targets."""
    out = []
    if saved.get("synthetic_only"):
        out.append("*No real data was found: every number here comes from the synthetic corpus.*")
    for name, r, qids, better, t in _hybrid_rows(saved, metric, "test"):
        m = r["metrics"]
        text = (
            f"* **{name}**, {metric} on the {len(qids)} test questions: `aethel-hybrid` {m['aethel-hybrid']['test'][metric]:.3f}, "
            f"`{better}` {m[better]['test'][metric]:.3f}"
        )
        text += f", difference {format_difference(t)}" if t else " (too few questions for a paired test)"
        g = next(
            (
                c
                for c in r.get("components", [])
                if (c["half"], c["b"], c["metric"]) == ("test", "aethel-hybrid-no-graph", metric)
            ),
            None,
        )
        if g:
            text += (
                ". The graph's part, against the same text terms without it (`aethel-hybrid-no-graph`): "
                + format_difference(g)
            )
        out.append(text + ".")
    run = [x for x in targets(saved) if x["met"] is not None]
    failed = [x for x in run if not x["met"]]
    if run:
        out.append(
            f"* Our targets: {len(run) - len(failed)} of {len(run)} met"
            + (
                " — not met: " + "; ".join(f"{x['target']} (`{x['data set']}`)" for x in failed)
                if failed
                else ""
            )
            + "."
        )
    return "\n".join(out)


def comparisons_headline(saved: Mapping[str, Any], half: str = "test") -> tuple[Table, str]:
    """Questions that need two filings (``results/comparisons.json``): each method's metrics with 95% CIs on
    ``half``, and a verdict from the paired tests of ``aethel-anchors`` and ``aethel-statements`` and the
    single-filing check."""
    block = saved["comparisons"][half]
    rows = []
    for method in saved["methods"]:
        cells = block["ci"][method]["all"]
        rows.append(
            {
                "method": method,
                **{f"{m} [95% CI]": format_estimate(cells[m]) for m in saved["metrics"]},
            }
        )
    tests = [t for t in block["tests"] if t["metric"] == "AllSupport@10" and t["a"] == "aethel-anchors"]
    said = [f"against {t['b']} {format_difference(t)}" for t in tests]
    beats = [t["b"] for t in tests if t["ci_low"] > 0]
    share = {
        m: 100 * block["ci"][m]["all"]["AllSupport@10"]["mean"]
        for m in ("aethel-anchors", "aethel-hybrid", "aethel-statements")
        if m in block["ci"]
    }
    verdict = (
        f"On the {block['n']} {half} questions (fixed before any method was run), `aethel-anchors` finds a page of "
        f"each filing in its top 10 for {share['aethel-anchors']:.0f}% of them, "
        f"`aethel-hybrid` for {share['aethel-hybrid']:.0f}%. "
        f"AllSupport@10 difference {'; '.join(said)}. "
    )
    verdict += (
        f"The interval excludes zero against {', '.join(beats)}" if beats else "No interval excludes zero"
    )
    verdict += f"{' and not against ' + ', '.join(t['b'] for t in tests if t['b'] not in beats) if beats and len(beats) < len(tests) else ''}."
    stmt = next(
        (
            t
            for t in block["tests"]
            if t["metric"] == "AllSupport@10" and (t["a"], t["b"]) == ("aethel-statements", "aethel-anchors")
        ),
        None,
    )
    if stmt is not None:
        verdict += (
            f" With each anchor's first places given to its filing's statement pages, `aethel-statements` finds "
            f"both gold pages for {share['aethel-statements']:.0f}%: against `aethel-anchors` {format_difference(stmt)}."
        )
    single = saved["single"]
    mrr = {t["a"]: t for t in single["tests"]["all"] if t["metric"] == "MRR"}
    if "aethel-anchors" in mrr:
        verdict += (
            f" On FinanceBench's own {single['n']} questions, where a question with fewer than two anchors is "
            f"ranked exactly as by `aethel-hybrid`, {single['anchored']} of {single['n']} name two or more; "
            f"MRR against `aethel-hybrid`: `aethel-anchors` {format_difference(mrr['aethel-anchors'])}"
        )
        verdict += (
            f"; `aethel-statements` {format_difference(mrr['aethel-statements'])}."
            if "aethel-statements" in mrr
            else "."
        )
    if saved.get("quick"):
        verdict = (
            "Quick build: a handful of questions over a sample of the pages; the intervals are wide. "
            + verdict
        )
    return table(dataframe(rows)), verdict


def statements_ablation(saved: Mapping[str, Any], half: str = "test") -> tuple[Table, str]:
    """What each part of ``aethel-statements`` adds on ``half`` (``results/comparisons.json``'s ``ablation``):
    AllSupport@10 of each step with 95% CIs, and the paired tests between consecutive steps, per kind of
    question too."""
    block = saved["ablation"][half]
    labels = {
        "aethel-anchors": "one PageRank per anchor (`aethel-anchors`)",
        "aethel-statements": "+ ordered by their rows' match to the question (`aethel-statements`)",
    }
    rows = []
    for step in block["steps"]:
        c = block["ci"][step]["all"]["AllSupport@10"]
        rows.append(
            {
                "step": labels.get(step, f"+ the filing's {step}"),
                "AllSupport@10 [95% CI]": format_estimate(c),
            }
        )
    said = [f"{t['a']} against {t['b']} {format_difference(t)}" for t in block["tests"]]
    kinds = saved["by_kind_tests"][half]
    said += [
        f"{kind.replace('comparison-', '').replace('-', ' ')}: `aethel-statements` against `aethel-anchors` "
        f"{format_difference(tests[0])}"
        for kind, tests in kinds.items()
        if tests
    ]
    return table(dataframe(rows)), f"On the {half} half: " + "; ".join(said) + "."
