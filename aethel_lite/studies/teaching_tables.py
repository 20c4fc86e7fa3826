"""The teaching chapters' tables: the quickstart's corpus (``notebooks/00_quickstart``) and each step of
one question's walk in the graph chapter (``notebooks/01_graph_construction``,
:mod:`aethel_lite.studies.teaching`), as pandas DataFrames; ✓ marks a gold passage. Each chapter's
headline is a table and a paragraph, both from the chapter's result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

__all__ = [
    "passage_table",
    "result_fields",
    "quickstart_headline",
    "graph_headline",
    "label",
    "pool_table",
    "entity_table",
    "entity_summary",
    "seed_table",
    "alpha_table",
    "ranking_table",
    "provenance_table",
]

EXTRACTORS = ("regex", "ner", "ner3")
MODES = ("none", "alias", "substring", "both")


def passage_table(passages: Sequence, width: int | None = None) -> pd.DataFrame:
    """Passages' ids and texts, each text cut to its first ``width`` characters (None: whole)."""
    return pd.DataFrame(
        {"pid": p.pid, "text": p.text if width is None else p.text[:width] + " ..."} for p in passages
    )


def _sorted(obj: Any) -> Any:
    return {k: _sorted(obj[k]) for k in sorted(obj)} if isinstance(obj, Mapping) else obj


def result_fields(result: Mapping[str, Any]) -> pd.DataFrame:
    """A result, one row per field (``dataset.hops.2``, ...), in the result file's order (keys sorted)."""
    return pd.json_normalize(_sorted(result)).T.rename(columns={0: "value"})


def quickstart_headline(result: Mapping[str, Any]) -> tuple[pd.DataFrame, str]:
    """The quickstart's corpus (its result's ``dataset`` summary) in one row, and a paragraph saying what it holds."""
    d = result["dataset"]
    multi = sum(n for hops, n in d["hops"].items() if int(hops) > 1)
    frame = pd.DataFrame(
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
    return frame, verdict


def graph_headline(saved: Mapping[str, Any]) -> tuple[pd.DataFrame, str]:
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
    return pd.DataFrame(rows), verdict


def label(pid: str, gold, titles: Mapping[str, str]) -> str:
    """A passage's title (or pid), ✓-marked when gold."""
    return ("✓ " if pid in gold else "") + titles.get(pid, pid)


def pool_table(
    question, texts: Mapping[str, str], titles: Mapping[str, str], width: int = 110
) -> pd.DataFrame:
    """The question's pool in the data set's order: title, gold mark, the text's first ``width`` characters."""
    rows = [
        {
            "paragraph": titles[pid],
            "gold": "✓" if pid in question.gold else "",
            "text": texts[pid][:width] + "…",
        }
        for pid in question.pool
    ]
    return pd.DataFrame(rows, index=range(1, len(rows) + 1))


def entity_table(entities: Mapping, question, titles: Mapping[str, str], n_other: int = 3) -> pd.DataFrame:
    """Entity keys per extractor (:func:`~aethel_lite.studies.teaching.entity_comparison`) of the gold
    paragraphs and the first ``n_other`` others of the pool; ``✗`` marks a key the graph dropped."""
    gold = [pid for pid in question.pool if pid in question.gold]
    shown = gold + [pid for pid in question.pool if pid not in question.gold][:n_other]
    rows = {}
    for pid in shown:
        cell = {}
        for name in EXTRACTORS:
            e = entities[name]
            cell[name] = "; ".join(sorted(e["kept"][pid] + [k + " ✗" for k in e["dropped"][pid]])) or "—"
        rows[label(pid, question.gold, titles)] = cell
    return pd.DataFrame(rows).T.rename_axis("paragraph (✓ gold)")


def entity_summary(entities: Mapping) -> pd.DataFrame:
    """Per extractor over the pool: keys per paragraph, those the graph keeps, stop-entity mentions
    dropped, entity–entity links."""
    rows = []
    for name in EXTRACTORS:
        e = entities[name]
        n = len(e["found"])
        rows.append(
            {
                "extractor": name,
                "keys per paragraph": sum(len(v) for v in e["found"].values()) / n,
                "kept in the graph": sum(len(v) for v in e["kept"].values()) / n,
                "stop-entities dropped": sum(len(v) for v in e["dropped"].values()),
                "substring links in the pool": len(e["links"]),
            }
        )
    return pd.DataFrame(rows)


def seed_table(seeds: Sequence[Mapping]) -> pd.DataFrame:
    """The teleport vector's seed nodes (``walk_record``'s ``seeds``): question key, graph node, rule, mass."""
    return pd.DataFrame(list(seeds)).rename(
        columns={"seed": "question key", "entity": "graph node", "via": "rule", "mass": "teleport mass"}
    )


def alpha_table(sweep: Mapping, gold, titles: Mapping[str, str]) -> pd.DataFrame:
    """Each gold paragraph's rank in the top 10 per teleport probability (:func:`~aethel_lite.studies.teaching.alpha_sweep`)."""
    return pd.DataFrame(
        {
            f"α = {a}": {label(g, gold, titles): r for g, r in v["gold_ranks"].items()}
            for a, v in sweep.items()
        }
    ).astype("Int64")


def ranking_table(modes: Mapping, gold, titles: Mapping[str, str], k: int = 5) -> pd.DataFrame:
    """The top ``k`` under each BCT mode (:func:`~aethel_lite.studies.teaching.rankings_by_mode`)."""
    return pd.DataFrame(
        {m: [label(pid, gold, titles) for pid, _ in modes[m][:k]] for m in MODES}, index=range(1, k + 1)
    )


def provenance_table(hits: Sequence[Mapping], titles: Mapping[str, str]) -> pd.DataFrame:
    """Each hit (:func:`~aethel_lite.explain.reach.hit_chains`) with the seed that sent it the largest
    share of its PageRank, that share, whether the passage names the seed's entity, and how many seeds
    reached it."""
    rows = []
    for h in hits:
        c = h["chains"][0] if h["chains"] else None
        rows.append(
            {
                "rank": h["rank"],
                "passage": ("✓ " if h["gold"] else "") + titles.get(h["pid"], h["pid"]),
                "score": h["score"],
                "provenance": f"{c['seed']} → {c['entity']} ({c['via']})" if c else "not reached: BM25 order",
                "share of score": c["fraction"] if c else None,
                "named": ("yes" if c["mentioned"] else "no") if c else "",
                "seeds": len(h["chains"]),
            }
        )
    return pd.DataFrame(rows).set_index("rank")
