"""The teaching chapter's tables (``notebooks/01_graph_construction``): each step of one question's walk
(:mod:`aethel_lite.studies.teaching`) as a pandas DataFrame; ✓ marks a gold passage."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

__all__ = [
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
