"""Each chapter's answer, first: one small table with 95% intervals and a one-paragraph verdict.

Every function here reads a chapter's saved result file only: means over questions with a percentile
bootstrap interval (:func:`aethel_lite.evaluation.stats.bootstrap_ci`), or a Wilson score interval for
a count out of a total (Wilson 1927), and the verdict's every number and direction from the same file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.bct import MODES
from ..evaluation.stats import format_share
from .report import Table, dataframe, table

__all__ = [
    "quickstart_headline",
    "graph_headline",
    "provenance_headline",
    "repro_headline",
]


def quickstart_headline(saved: Mapping[str, Any]) -> tuple[Table, str]:
    """The quickstart's corpus in one table, and a paragraph saying what it holds."""
    d = saved["dataset"]
    multi = sum(n for hops, n in d["hops"].items() if int(hops) > 1)
    frame = dataframe(
        [
            {
                "passages": d["n_passages"],
                "documents": d["n_documents"],
                "questions": d["n_queries"],
                "multi-hop questions": multi,
                "gold passages per question": d["mean_gold"],
            }
        ]
    )
    verdict = (
        f"The synthetic corpus holds {d['n_passages']:,} passages in {d['n_documents']:,} documents and "
        f"{d['n_queries']} questions, {multi} of which need more than one passage "
        f"({d['mean_gold']:.2f} gold passages per question on average). No retrieval runs here: "
        "this is the data every later chapter retrieves from, with its truth known by construction."
    )
    return table(frame, decimals=2), verdict


def repro_headline(rows: Sequence[Mapping[str, Any]]) -> tuple[Table, str]:
    """The paper table's verdicts counted per chapter, and one paragraph naming what differs."""
    kinds = ("reproduced", "differs", "not comparable")
    chapters: dict[str, dict[str, int]] = {}
    for r in rows:
        chapters.setdefault(r["chapter"], dict.fromkeys(kinds, 0))[r["verdict"]] += 1
    frame = dataframe([{"chapter": ch, **counts} for ch, counts in chapters.items()])
    totals = {k: sum(c[k] for c in chapters.values()) for k in kinds}
    differ = [r["paper's number"] for r in rows if r["verdict"] == "differs"]
    apart = list(
        dict.fromkeys(r["why"] for r in rows if r["verdict"] == "not comparable")
    )  # the reasons, in table order

    def first(items, n):
        return "; ".join(items[:n]) + ("; …" if len(items) > n else "")

    verdict = (
        f"Of the paper's {len(rows)} numbers, {totals['reproduced']} are reproduced (the paper's value inside our "
        f"95% interval, or the same crossing), {totals['differs']} differ and {totals['not comparable']} cannot "
        "be compared in this build" + (f": {first(apart, 2)}" if apart else "") + "."
    )
    if differ:
        verdict += f" Those that differ: {first(differ, 4)}."
    return table(frame), verdict


def graph_headline(saved: Mapping[str, Any]) -> tuple[Table, str]:
    """The step-by-step chapter's two questions: where their gold passages rank under each BCT mode."""
    cases = [
        (saved["question"]["qid"], set(saved["question"]["gold"]), saved["walk"]["modes"]),
        (saved["alias"]["qid"], set(saved["alias"]["gold"]), saved["alias"]["walk"]["modes"]),
    ]

    def first_and_top5(ranking, gold):
        ranks = [i + 1 for i, (pid, _) in enumerate(ranking) if pid in gold]
        return (ranks[0] if ranks else None), sum(r <= 5 for r in ranks)

    rows = []
    for mode in [m for m in MODES if m in cases[0][2]]:
        row = {"BCT mode": mode}
        for qid, gold, modes in cases:
            first, top5 = first_and_top5(modes[mode], gold)
            row[f"{qid}: first gold rank"] = "not ranked" if first is None else first
            row[f"{qid}: gold in top 5"] = f"{top5} of {len(gold)}"
        rows.append(row)
    P = saved["parameters"]
    (q1, g1, m1), (q2, g2, m2) = cases
    f1, t1 = first_and_top5(m1[P["bct"]], g1)
    f0, t0 = first_and_top5(m1["none"], g1)
    a1, _ = first_and_top5(m2[P["bct"]], g2)
    a0, _ = first_and_top5(m2["none"], g2)
    verdict = (
        f"With BCT `{P['bct']}` and α = {P['alpha']}, the first question ({q1}) has its first gold paragraph at "
        f"rank {f1} and {t1} of its {len(g1)} gold paragraphs in the top 5 (without BCT: rank {f0}, {t0}). The "
        f"alias question ({q2}) names its fund as “{saved['alias'].get('mention')}”, a name none of its gold "
        f"passages uses: its first gold passage ranks {a0} without BCT and {a1} with it."
    )
    return table(dataframe(rows)), verdict


REACH_LABELS = {
    "direct": "names an exact seed",
    "bct": "names a BCT seed only",
    "linked": "via an entity link",
    "two-hop": "two-hop path",
    "longer": "longer path",
    "unreached": "not reached",
    "bm25-teleport": "BM25 teleport (no seed)",
}


def provenance_headline(saved: Mapping[str, Any]) -> tuple[Table, str]:
    """How the gold passages are reached per data set (95% Wilson intervals); the verdict on what BCT adds."""
    reports = saved["reports"]
    names = {n: saved["datasets"][n]["name"] for n in reports}
    # a way no gold passage took is left out of the headline (the details list them all)
    rows = [
        {
            "gold passage": label,
            **{
                f"{names[n]} [95% CI]": format_share(r["gold_reach"].get(cat, 0), r["n_gold"])
                for n, r in reports.items()
            },
        }
        for cat, label in REACH_LABELS.items()
        if any(r["gold_reach"].get(cat) for r in reports.values())
    ]
    said = [
        f"On {names[n]}, {r['gold_reach'].get('direct', 0)} of {r['n_gold']} gold passages name an exact seed, "
        f"{r['bct_only']} are reached only through a BCT expansion and {r['gold_reach'].get('unreached', 0)} "
        f"not at all; BCT brought a wrong passage into the top {r['k']} of {r['intrusions']['n_questions']} of "
        f"{r['n_queries']} questions ({format_share(r['intrusions']['n_questions'], r['n_queries'])})."
        for n, r in reports.items()
    ]
    return table(dataframe(rows)), " ".join(said)
