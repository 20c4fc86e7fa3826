"""Why each passage was retrieved (``notebooks/40_provenance``): how the gold passages of the closed
pools are reached from their questions' seeds, and where BCT brings a wrong passage into the top k.

:func:`provenance_study` fits the graph retriever on each data set's pools and counts with
:func:`aethel_lite.explain.reach.provenance_report`; its ``result`` is what the chapter writes to
``results/provenance.json``. The tables and sentences read that result in memory, one data set after
another in the result file's order (their names sorted). A share of gold passages carries its 95%
Wilson score interval (Wilson 1927).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..caching.versions import versions
from ..data.select import load_or_synthetic
from ..data.summary import dataset_summary
from ..data.synthetic import alias_table
from ..evaluation.stats import format_share
from ..explain.reach import REACH, hit_chains, provenance_report
from ..retrievers.registry import make_retriever

__all__ = ["REACH_LABELS", "provenance_headline", "ProvenanceStudy", "provenance_study"]

#: How a gold passage is reached (:data:`aethel_lite.explain.reach.REACH`), in words.
REACH_LABELS = {
    "direct": "names an exact seed",
    "bct": "names a BCT seed only",
    "linked": "via an entity link",
    "two-hop": "two-hop path",
    "longer": "longer path",
    "unreached": "not reached",
    "bm25-teleport": "BM25 teleport (no seed)",
}


def _by_name(saved: Mapping[str, Any]) -> dict:
    """The result's reports in the result file's order (data sets sorted by name)."""
    return {n: saved["reports"][n] for n in sorted(saved["reports"])}


def provenance_headline(saved: Mapping[str, Any]) -> tuple[pd.DataFrame, str]:
    """How the gold passages are reached per data set (95% Wilson intervals); the verdict on what BCT adds."""
    reports = _by_name(saved)
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
    return pd.DataFrame(rows), " ".join(said)


@dataclass
class ProvenanceStudy:
    """The provenance chapter's counts (:func:`provenance_study`): ``result`` is ``results/provenance.json``'s
    content, ``summaries`` the data sets' :func:`~aethel_lite.data.summary.dataset_summary`."""

    result: dict
    summaries: list[dict]

    @property
    def reports(self) -> dict:
        return _by_name(self.result)

    def _name(self, n: str) -> str:
        return self.result["datasets"][n]["name"]

    def headline(self) -> tuple[pd.DataFrame, str]:
        """:func:`provenance_headline`."""
        return provenance_headline(self.result)

    def example_question(self) -> str:
        """The worked example's question and its gold passages, in Markdown."""
        ex = self.result["example"]
        return (
            f"**{ex['qid']}** ({self._name(ex['dataset'])}): {ex['question']}  \n"
            + "gold: "
            + ", ".join(f"`{g}` ({ex['titles'][g]})" for g in ex["gold"])
        )

    def example_table(self, n_chains: int = 4) -> pd.DataFrame:
        """The worked example's top hits, up to ``n_chains`` seeds each (largest share first): seed → graph
        entity, the rule that linked them, the seed's share of the hit's PageRank, whether the passage names
        the entity."""
        ex = self.result["example"]
        rows = []
        for hit in ex["hits"]:
            for c in hit["chains"][:n_chains] or [{}]:
                rows.append(
                    {
                        "rank": hit["rank"],
                        "passage": ex["titles"][hit["pid"]],
                        "gold": "✓" if hit["gold"] else "",
                        "PageRank": hit["ppr"],
                        "seed → graph entity": f"{c.get('seed', '—')} → {c.get('entity', '—')}",
                        "rule": c.get("via", "(BM25 order)"),
                        "share": c.get("share"),
                        "of its score": c.get("fraction"),
                        "named": {True: "yes", False: "no"}.get(c.get("mentioned"), ""),
                    }
                )
        return pd.DataFrame(rows)

    def reach_counts(self) -> pd.DataFrame:
        """Gold passages per way they are reached (rows) and data set (columns)."""
        return pd.DataFrame(
            {
                self._name(n): {REACH_LABELS[c]: r["gold_reach"][c] for c in REACH}
                for n, r in self.reports.items()
            }
        )

    def reach_table(self) -> pd.DataFrame:
        """:meth:`reach_counts` beside each data set's shares."""
        counts = self.reach_counts()
        both = pd.concat({"gold passages": counts, "share": (counts / counts.sum()).round(3)}, axis=1)
        both.columns = [f"{what}: {name}" for what, name in both.columns]
        return both.rename_axis("reached")

    def figure(self):
        """Each data set's gold passages split by the way they are reached, as stacked horizontal bars."""
        import matplotlib.pyplot as plt

        counts = self.reach_counts()
        share = counts / counts.sum()
        fig, ax = plt.subplots(figsize=(7, 2.2 + 0.5 * len(share.columns)))
        left = [0.0] * len(share.columns)
        for cat in share.index:
            vals = share.loc[cat].tolist()
            ax.barh(list(share.columns), vals, left=left, label=cat)
            left = [a + b for a, b in zip(left, vals)]
        ax.set_xlabel("share of gold passages")
        ax.set_ylabel("data set")
        ax.set_xlim(0, 1)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.35), ncol=3, fontsize=8, frameon=False)
        fig.tight_layout()
        return fig

    def reach_text(self) -> str:
        """One Markdown bullet per data set: the gold passages by the way they are reached."""
        lines = []
        for n, r in self.reports.items():
            reach = r["gold_reach"]
            lines.append(
                f"* **{self._name(n)}** ({r['n_queries']} questions, {r['n_gold']} gold passages in their pools): "
                f"{reach['direct']} gold passages name an exact seed, {reach['bct']} only a BCT seed, "
                f"{reach['two-hop']} are reached through a two-hop path and {reach['unreached']} not at all; "
                f"{r['bct_only']} would get no PageRank without BCT (they are reached *only* through a BCT "
                f"expansion). In {r['questions_all_gold_direct']} questions every gold passage names an exact seed."
            )
        return "\n".join(lines)

    def intrusion_text(self) -> str:
        """One Markdown bullet per data set: the wrong passages BCT brought into the top k."""
        lines = []
        for n, r in self.reports.items():
            i = r["intrusions"]
            lines.append(
                f"* **{self._name(n)}**: {i['n_passages']} wrong passages in "
                f"{i['n_questions']} of {r['n_queries']} questions; in {i['n_questions_displacing_gold']} "
                f"of those questions a gold passage that was in the top {r['k']} without BCT dropped out."
            )
        return "\n".join(lines)

    def intrusions(self, n_examples: int = 10) -> pd.DataFrame:
        """The wrong passages BCT brought into the top k, up to ``n_examples`` per data set: those that pushed
        a gold passage out first, then by BCT's share of their PageRank (empty when there were none)."""
        rows = [
            {
                "data set": self._name(n),
                "question": row["question"],
                "passage": row["title"],
                "rank": row["rank"],
                "seed → graph entity": f"{row['seed']} → {row['entity']}",
                "rule": row["via"],
                "BCT share": row["bct_fraction"],
                "displaced gold": len(row["displaced_gold"]),
            }
            for n, r in self.reports.items()
            for row in r["intrusion_rows"]
        ]
        examples = pd.DataFrame(rows)
        if examples.empty:
            return examples
        examples = examples.sort_values(["displaced gold", "BCT share"], ascending=False, kind="stable")
        return examples.groupby("data set", sort=False).head(n_examples)

    def rules_text(self) -> str:
        """One Markdown bullet per data set with intruders: the BCT rule each came through, and how many
        came from a one-word question key."""
        lines = []
        for n, r in self.reports.items():
            rows = r["intrusion_rows"]
            if not rows:
                continue
            rules = {v: sum(x["via"] == v for x in rows) for v in ("alias", "substring", "token")}
            one_word = sum(len(x["seed"].split()) == 1 for x in rows)
            lines.append(
                f"* **{self._name(n)}**: of the {len(rows)} intruders, {rules['alias']} came through "
                f"the alias rule, {rules['substring']} through substring and {rules['token']} through token "
                f"matches; for {one_word} the question key was a single word."
            )
        return "\n".join(lines) or "*No intrusions in this run.*"

    def takeaways(self) -> str:
        """One Markdown bullet per data set: the shares of gold passages by reach, and of questions with an
        intruder."""
        lines = []
        for n, r in self.reports.items():
            reach, g = r["gold_reach"], r["n_gold"]
            i = r["intrusions"]
            lines.append(
                f"* **{self._name(n)}**: {reach['direct'] / g:.0%} of the gold passages name an exact "
                f"seed, {reach['two-hop'] / g:.0%} are reached through a two-hop path, {r['bct_only'] / g:.0%} only "
                f"through BCT and {reach['unreached'] / g:.0%} not at all; BCT brought a wrong passage into the top "
                f"{r['k']} of {i['n_questions'] / r['n_queries']:.0%} of the questions."
            )
        return "\n".join(lines)


def provenance_study(
    datasets: Sequence[str] = ("musique", "2wiki"),
    *,
    method: str = "aethel-bct",
    k: int = 5,
    quick: bool = False,
    limit: int | None = None,
    synthetic_size: int = 2000,
    n_process: int = 2,
    progress: bool = False,
) -> ProvenanceStudy:
    """How the gold passages of each data set's closed pools are reached, and BCT's intrusions.

    Parameters
    ----------
    datasets : sequence of str
        Closed-pool data sets (:func:`~aethel_lite.data.select.load_or_synthetic`: the synthetic corpus of
        ``synthetic_size`` passages stands in, loudly, when no real data is configured).
    method : str
        A graph method of :data:`aethel_lite.retrievers.registry.METHODS`.
    k : int
        Cut-off of the intrusion analysis (top ``k`` with against without BCT).
    quick, limit :
        The first ``limit`` questions only (None: all; ``quick`` makes it 20).
    n_process : int
        spaCy worker processes for entity extraction (the results do not depend on it).
    progress : bool
        A progress bar over the questions.

    Returns
    -------
    ProvenanceStudy
        Its ``result`` holds per data set the :func:`~aethel_lite.explain.reach.provenance_report` (each
        intruder with its passage's title), and a worked example: the first question of the first data set
        with a gold passage reached only through BCT or a two-hop path, with its top ``k`` hits' chains.
    """
    datasets = list(datasets)
    limit = 20 if quick and limit is None else limit
    loaded, retrievers = {}, {}
    for name in datasets:
        ds = load_or_synthetic(name, setting="closed", size=synthetic_size)
        loaded[name] = ds.subset(limit=limit, keep_all_passages=False) if limit else ds
        extra: dict[str, Any] = {"n_process": n_process}
        if isinstance(ds.meta.get("aliases"), dict):  # the synthetic corpus has an alias table
            extra["alias_table"] = alias_table(ds)
        retrievers[name] = make_retriever(method, graph=extra).fit(loaded[name].passages)
    reports = {
        name: provenance_report(retrievers[name], ds.queries, k=k, progress=progress)
        for name, ds in loaded.items()
    }
    first = datasets[0]
    per_query = reports[first]["per_query"]
    example = next(
        (
            q
            for q in loaded[first].queries
            if any(g["category"] in ("bct", "two-hop") for g in per_query[q.qid].values())
        ),
        loaded[first].queries[0],
    )
    titles = {name: {p.pid: p.title for p in ds.passages} for name, ds in loaded.items()}
    for name, rep in reports.items():
        for row in rep["intrusion_rows"]:
            row["title"] = titles[name][row["pid"]]
    result = {
        "datasets": {name: dataset_summary(ds) for name, ds in loaded.items()},
        "synthetic_fallback": {name: ds.meta.get("fallback_from") is not None for name, ds in loaded.items()},
        "reports": reports,
        "example": {
            "dataset": first,
            "qid": example.qid,
            "question": example.text,
            "gold": sorted(example.gold),
            "hits": hit_chains(retrievers[first], example, k=k),
            "titles": {pid: titles[first][pid] for pid in example.pool},
        },
        "parameters": {"datasets": datasets, "method": method, "k": k, "quick": quick, "limit": limit},
        "versions": versions(),
    }
    return ProvenanceStudy(result, [dataset_summary(ds) for ds in loaded.values()])
