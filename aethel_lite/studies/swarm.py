"""The swarm chapter as one call: the specialists' memos scored on the synthetic corpus, and a
FinanceBench company's memo, every memo checked by code.

:func:`swarm_study` builds the synthetic private-equity corpus (with planted contradictions), runs
the :class:`~aethel_lite.swarm.Orchestrator` for every fund once per evidence source and scores the
findings against the generator's gold facts (:func:`~aethel_lite.swarm.study.synthetic_scores`),
writes each memo under every name of its fund (:func:`~aethel_lite.swarm.study.alias_invariance`),
runs FinanceBench for one company with the extractor's accuracy on FinanceBench's single-amount
questions, audits every memo it wrote (:func:`~aethel_lite.swarm.check_memo`) and writes
``results/swarm.json``. The :class:`SwarmStudy` it returns holds that record and turns it into the
chapter's tables, figure and sentences.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..caching.versions import versions
from ..data.select import load_for_eval
from ..data.synthetic import make_synthetic
from ..errors import DataNotFoundError, ParameterError
from ..evaluation.stats import format_share, wilson
from ..io import atomic_write, write_json
from ..swarm import EVIDENCE, Memo, Orchestrator, check_memo
from ..swarm.lexicon import METRICS
from ..swarm.study import (
    QUICK_CORPUS,
    alias_invariance,
    end_to_end_accuracy,
    end_to_end_rows,
    end_to_end_summary,
    end_to_end_table,
    extraction_accuracy,
    fund_targets,
    numeric_questions,
    synthetic_scores,
    takeaways,
)
from .record import as_record

__all__ = ["QUICK_SIZE", "MISSING_TARGET", "SwarmStudy", "swarm_study", "swarm_headline"]

#: Passages of the synthetic corpus at most in quick mode.
QUICK_SIZE = 300
#: A target that is in no corpus: its memo says there is no evidence.
MISSING_TARGET = "Nonexistent Harbor Partners XIV"
_FUND_FACTS = ("nav", "tvpi", "dpi", "net_irr", "unfunded_commitment", "credit_facility_balance")
_CONTEXT_COLUMNS = {
    "alias": ("pid", "doc_id", "rank", "score", "items", "provenance"),
    "financebench": ("pid", "rank", "items"),
}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _write_memo(path: Path, markdown: str) -> None:
    with atomic_write(path) as fh:
        fh.write(markdown)


def _check(evidence: Sequence[str], real_dataset: str) -> None:
    known = set(EVIDENCE) | {"graph-ner"}
    if set(evidence) - known or "graph" not in evidence:
        raise ParameterError(
            f"evidence: unknown {sorted(set(evidence) - known)} (choose from {sorted(known)}; 'graph' is required)"
        )
    if real_dataset not in ("financebench", "none"):
        raise ParameterError(f"real_dataset must be 'financebench' or 'none', got {real_dataset!r}")


def _scores(orch, dataset, evidence, k, progress):
    """Each evidence source's scores, and the graph's memos and the names it used for the funds."""
    runs = {}
    for source in evidence:
        if source == "graph-ner":  # the graph from spaCy NER alone, without the entity master's names
            plain = Orchestrator.from_dataset(dataset, k=k, link_names=False, progress=progress)
            plain.fit(dataset.passages)
            runs[source] = synthetic_scores(plain, dataset, evidence=("graph",), memos=False)["graph"]
        else:
            got = synthetic_scores(orch, dataset, evidence=(source,), memos=(source == "graph"))
            runs[source] = got[source]
            if source == "graph":
                memos, named = got["memos"], got["targets"]
    scores = {
        s: {
            "facts": {key: v for key, v in r["facts"].items() if key != "false_positives"},
            "conflicts": r["conflicts"],
            "per_fund": r["per_fund"],
            "seconds": r["seconds"],
        }
        for s, r in runs.items()
    }
    return scores, memos, named


def _financebench(real_target, k, quick, progress):
    """FinanceBench's record for ``real_target`` (memo, accuracy, end to end), or why it was not run."""
    try:
        fb = load_for_eval("financebench")
    except DataNotFoundError:  # only when no data folder is configured; a wrong AETHEL_DATA is an error
        return None, "no real data configured", None, None, None
    corpus = fb.passages
    if quick:  # the target's statement pages: what the memo reads, at a fraction of the cost
        mine = [p for p in fb.passages if p.meta.get("company") == real_target]
        corpus = [
            p for p in mine if any(m.table_re is not None and m.on_topic(p.text) for m in METRICS.values())
        ]
    t0 = time.perf_counter()
    fb_orch = Orchestrator.from_dataset(fb, k=k, progress=progress).fit(corpus)
    fit_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    run = fb_orch.run(real_target)
    memo_seconds = time.perf_counter() - t0
    questions = numeric_questions(fb)
    accuracy = extraction_accuracy(fb, questions)  # the evidence pages: retrieval taken as perfect
    end_to_end = end_to_end_accuracy(
        fb, questions, corpus_size=QUICK_CORPUS if quick else None, progress=progress
    )
    record = {
        "target": real_target,
        "n_passages": len(corpus),
        "n_filings": len({p.doc_id for p in corpus}),
        "quick": quick,
        "memo": run.memo.markdown,
        "resolved": run.target.to_dict(),
        "contexts": run.contexts,
        "n_facts": len(run.facts),
        "n_conflicts": len(run.conflicts),
        "conflicts": [c.to_dict() for c in run.conflicts],
        "accuracy": accuracy,
        "end_to_end": end_to_end,
        "timing": {"fit": round(fit_seconds, 3), "memo": round(memo_seconds, 3), "steps": run.timing},
    }
    return record, None, fb, fb_orch, run


def swarm_study(
    synthetic_size: int = 1000,
    contradictions: int = 20,
    *,
    target: str = "auto",
    k: int = 10,
    evidence: Sequence[str] = ("graph", "graph-ner", "bm25", "dense"),
    real_dataset: str = "financebench",
    real_target: str = "3M",
    quick: bool = False,
    results_dir: str | Path = "results",
    progress: bool = False,
) -> SwarmStudy:
    """Run the swarm chapter: write its memos under ``results_dir/swarm_memos`` and its record to
    ``results_dir/swarm.json``.

    Parameters
    ----------
    synthetic_size : int
        Passages of the synthetic corpus (at most :data:`QUICK_SIZE` with ``quick``).
    contradictions : int
        Stale or misprinted figures planted in it.
    target : str
        A synthetic fund by any of its names; ``"auto"``: the first fund, by its shortest name.
    k : int
        Passages per metric or topic query.
    evidence : sequence of str
        Evidence sources compared: ``graph`` (required), ``graph-ner``, ``bm25``, ``dense``.
    real_dataset : {"financebench", "none"}
    real_target : str
        A FinanceBench company.
    quick : bool
        The small run (CI): at most :data:`QUICK_SIZE` synthetic passages; FinanceBench: the
        target's statement pages only, and a sample of the corpus for the end-to-end number.

    Raises
    ------
    ParameterError
        An unknown evidence source, no ``graph``, or an unknown ``real_dataset``.
    """
    evidence = list(evidence)
    _check(evidence, real_dataset)
    size = min(synthetic_size, QUICK_SIZE) if quick else synthetic_size
    dataset = make_synthetic(size, seed=0, contradictions=contradictions)
    orch = Orchestrator.from_dataset(dataset, k=k, progress=progress).fit(dataset.passages)
    funds = fund_targets(dataset)
    if target == "auto":  # the first fund, by its acronym
        target = min(dataset.meta["aliases"][funds[0]], key=lambda s: (len(s), s))
    alias_run = orch.run(target)
    resolved = alias_run.target
    alias_record = {
        "query": target,
        "target": resolved.to_dict(),
        "memo": alias_run.memo.markdown,
        "contexts": alias_run.contexts,
        "n_facts": len(alias_run.facts),
        "n_conflicts": len(alias_run.conflicts),
    }
    scores, graph_memos, named = _scores(orch, dataset, evidence, k, progress)
    invariance = [alias_invariance(orch, dataset, e) for e in funds]

    memo_dir = Path(results_dir) / "swarm_memos"
    memo_dir.mkdir(parents=True, exist_ok=True)
    written = {}  # path -> the corpus and entity its memo is about
    for entity, markdown in graph_memos.items():
        path = memo_dir / f"synthetic-{_slug(entity)}.md"
        _write_memo(path, markdown)
        written[str(path)] = {"dataset": "synthetic", "entity": entity}
    path = memo_dir / f"synthetic-alias-{_slug(target)}.md"
    _write_memo(path, alias_run.memo.markdown)
    written[str(path)] = {"dataset": "synthetic", "entity": resolved.entity}
    missing_run = orch.run(MISSING_TARGET)

    fb_result, fb_missing, fb, fb_orch = None, "not requested (real_dataset='none')", None, None
    if real_dataset == "financebench":
        fb_result, fb_missing, fb, fb_orch, fb_run = _financebench(real_target, k, quick, progress)
        if fb_run is not None:
            path = memo_dir / f"financebench-{_slug(real_target)}.md"
            _write_memo(path, fb_run.memo.markdown)
            written[str(path)] = {"dataset": "financebench", "entity": fb_run.target.entity}

    # the audit: every memo as written to disk, against its corpus
    corpora = {"synthetic": ({p.pid: p for p in dataset.passages}, orch.resolver)}
    if fb_result is not None:
        corpora["financebench"] = ({p.pid: p for p in fb.passages}, fb_orch.resolver)
    n_figures = 0
    for path, info in written.items():
        passages, resolver = corpora[info["dataset"]]
        names = [resolver.display(e) for e in resolver.scope(info["entity"])] if info["entity"] else []
        n_figures += check_memo(Path(path).read_text(encoding="utf-8"), passages, names=names)

    result = {
        "parameters": {
            "target": target,
            "real_dataset": real_dataset,
            "real_target": real_target,
            "synthetic_size": size,
            "contradictions": contradictions,
            "k": k,
            "evidence": evidence,
            "quick": quick,
        },
        "synthetic": {
            "n_passages": len(dataset.passages),
            "n_funds": len(funds),
            "named": named,
            "scores": scores,
            "alias": alias_record,
            "alias_invariance": {
                "n_funds": len(invariance),
                "n_identical": sum(r["identical"] for r in invariance),
                "n_names": sum(len(r["aliases"]) for r in invariance),
                "per_fund": invariance,
            },
            "missing_target": {
                "query": missing_run.target.query,
                "found": missing_run.memo.found,
                "memo": missing_run.memo.markdown,
            },
        },
        "financebench": fb_result,
        "financebench_missing": fb_missing,
        "audit": {"n_memos": len(written), "n_figures": n_figures, "memos": sorted(written)},
        "versions": versions(),
    }
    # the record as the result file holds it (keys sorted, tuples as lists): what every table reads
    result = as_record(result)
    path = Path(results_dir) / "swarm.json"
    write_json(path, result)
    return SwarmStudy(result, path, dataset, fb)


# --------------------------------------------------------------------------------------- headline
def swarm_headline(saved: Mapping[str, Any]) -> tuple[pd.DataFrame, str]:
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
    return pd.DataFrame(rows), verdict


# ------------------------------------------------------------------------------------ the result
def _context(record: Mapping[str, Any], show: Sequence[str]) -> pd.DataFrame:
    """The passages each specialist was given, one row each, ``show``'s fields as columns."""
    rows = []
    for specialist, recs in record["contexts"].items():
        for r in recs:
            row = {"specialist": specialist.split()[0]}
            for key in show:
                value = r.get(key)
                row[key] = ", ".join(value) if isinstance(value, list) else value
            rows.append(row)
    return pd.DataFrame(rows)


@dataclass
class SwarmStudy:
    """What :func:`swarm_study` computed: ``result`` is the record written to ``path``
    (``results/swarm.json``); ``dataset`` the synthetic corpus; ``financebench`` the FinanceBench
    data set it loaded, or None."""

    result: dict
    path: Path
    dataset: Any
    financebench: Any = None

    @property
    def financebench_missing(self) -> str | None:
        """Why FinanceBench was not run (None when it was)."""
        return self.result["financebench_missing"]

    # -- the synthetic corpus
    def corpus_table(self) -> pd.DataFrame:
        """The synthetic corpus in one row: passages, documents, funds, gold facts, contradictions."""
        ds = self.dataset
        facts = ds.meta["facts"]
        return pd.DataFrame(
            [
                {
                    "passages": len(ds.passages),
                    "documents": len({p.doc_id for p in ds.passages}),
                    "funds": self.result["synthetic"]["n_funds"],
                    "gold fund facts": sum(f["metric"] in _FUND_FACTS for f in facts),
                    "planted contradictions": len(ds.meta.get("contradictions", [])),
                }
            ]
        )

    def alias_table(self) -> pd.DataFrame:
        """How the alias target was resolved: entity, display name, alias class, BCT's seeds."""
        alias = self.result["synthetic"]["alias"]
        t = alias["target"]
        row = {
            "named as": alias["query"],
            "resolved to": t["entity"],
            "display name": t["name"],
            "alias class (graph keys)": "; ".join(t["keys"]),
            "seeds (BCT)": "; ".join(f"{s['entity']} ({s['via']})" for s in t["seeds"][:6]),
        }
        return pd.DataFrame([row]).T.rename(columns={0: "value"})

    def alias_note(self) -> str:
        alias = self.result["synthetic"]["alias"]
        return (
            f"Named **{alias['query']}** → `{alias['target']['entity']}`, "
            f"{alias['n_facts']} facts and {alias['n_conflicts']} conflicts."
        )

    def memo_view(self, which: str = "alias") -> tuple[str, pd.DataFrame]:
        """``which`` memo ("alias" or "financebench") as narrow HTML, and the passages its specialists read."""
        if which == "alias":
            record = self.result["synthetic"]["alias"]
            name = record["target"]["name"]
        elif which == "financebench" and self.result["financebench"] is not None:
            record = self.result["financebench"]
            name = record["resolved"]["name"]
        else:
            raise ParameterError(
                f"memo_view: no {which!r} memo in this run (choose 'alias' or 'financebench')"
            )
        return Memo(name, record["memo"]).to_html(narrow=True), _context(record, _CONTEXT_COLUMNS[which])

    # -- scored against the truth
    def headline(self) -> tuple[pd.DataFrame, str]:
        """:func:`swarm_headline` of this run."""
        return swarm_headline(self.result)

    def table(self) -> pd.DataFrame:
        """The findings against the truth, one row per evidence source."""
        return pd.DataFrame(
            [
                {
                    "evidence": s,
                    "precision": r["facts"]["precision"],
                    "recall": r["facts"]["recall"],
                    "gold facts": r["facts"]["n_gold"],
                    "facts found": r["facts"]["n_found"],
                    "conflict recall": r["conflicts"]["recall"],
                    "conflict precision": r["conflicts"]["precision"],
                    "planted": r["conflicts"]["n_planted"],
                    "passages read per fund": round(
                        sum(x["n_passages"] for x in r["per_fund"]) / len(r["per_fund"]), 1
                    ),
                }
                for s, r in self.result["synthetic"]["scores"].items()
            ]
        )

    def figure(self):
        """Fact recall and the share of planted contradictions found, per evidence source (bars)."""
        import matplotlib.pyplot as plt

        scores = self.result["synthetic"]["scores"]
        fig, ax = plt.subplots(figsize=(6.4, 3.2))
        names = list(scores)
        xs = range(len(names))
        ax.bar(
            [x - 0.2 for x in xs],
            [scores[s]["facts"]["recall"] for s in names],
            width=0.4,
            label="fact recall",
        )
        ax.bar(
            [x + 0.2 for x in xs],
            [scores[s]["conflicts"]["recall"] or 0 for s in names],
            width=0.4,
            label="planted contradictions found",
        )
        ax.axhline(0.9, color="grey", linestyle=":", linewidth=1)
        ax.set_xticks(list(xs), names)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("share")
        ax.set_title(f"Same specialists, different evidence (k = {self.result['parameters']['k']})")
        ax.legend(loc="lower left", fontsize=8)
        fig.tight_layout()
        return fig

    def per_fund_table(self) -> pd.DataFrame:
        """The graph evidence's scores per fund."""
        per_fund = pd.DataFrame(self.result["synthetic"]["scores"]["graph"]["per_fund"]).rename(
            columns={
                "n_gold": "gold facts",
                "n_found": "facts found",
                "n_conflicts": "conflicts",
                "n_passages": "passages read",
            }
        )
        return per_fund[
            ["name", "gold facts", "facts found", "precision", "recall", "conflicts", "passages read"]
        ]

    def misses(self) -> str:
        """What the graph's memos missed: gold facts, planted contradictions, and conflicts not planted."""
        g = self.result["synthetic"]["scores"]["graph"]
        missed = g["facts"]["missed"]
        first = "" if not missed else " — first: " + "; ".join(f"`{m[0]}` {m[1]} {m[2]}" for m in missed[:5])
        return (
            f"Missed gold facts: {len(missed)}{first}\n\n"
            f"Planted contradictions not reported: {len(g['conflicts']['missed'])}; conflicts that were not "
            f"planted: {len(g['conflicts']['unplanted'])}."
        )

    # -- one memo whatever the name
    def invariance_note(self) -> str:
        inv = self.result["synthetic"]["alias_invariance"]
        return (
            f"**{inv['n_identical']} of {inv['n_funds']} funds** get the identical memo under all "
            f"{inv['n_names']} names tried."
        )

    def invariance_table(self) -> pd.DataFrame:
        """Each fund, the names its memo was written under, and whether the memos are identical."""
        return pd.DataFrame(
            [
                {"fund": r["entity"], "names": " · ".join(r["aliases"]), "identical": r["identical"]}
                for r in self.result["synthetic"]["alias_invariance"]["per_fund"]
            ]
        )

    def missing_memo(self) -> str:
        """The memo for a target in no corpus, as a Markdown quote."""
        return "> " + self.result["synthetic"]["missing_target"]["memo"].replace("\n", "\n> ")

    # -- FinanceBench
    def financebench_note(self) -> str:
        """The FinanceBench run in one sentence: what was read, what was found, how long it took."""
        fbr = self.result["financebench"]
        if fbr is None:
            return f"Not run: {self.result['financebench_missing']}."
        return (
            f"**{fbr['target']}** over {fbr['n_passages']:,} pages of {fbr['n_filings']} filings"
            + (" (quick mode: the company's statement pages only)" if fbr["quick"] else "")
            + f": {fbr['n_facts']} facts, {fbr['n_conflicts']} cross-document conflicts; memo in "
            f"{fbr['timing']['memo']:.1f} s from the fitted index (fit: {fbr['timing']['fit']:.1f} s)."
        )

    def end_to_end_summary(self) -> str:
        """:func:`~aethel_lite.swarm.study.end_to_end_summary` of this run."""
        return end_to_end_summary(self.result["financebench"])

    def end_to_end_table(self) -> pd.DataFrame:
        """The extractor on the evidence pages against the retriever's top pages."""
        return pd.DataFrame(end_to_end_table(self.result["financebench"]))

    def questions_note(self) -> str:
        """What the per-question table shows, and the questions without an item or a value."""
        fbr = self.result["financebench"]
        e2e = fbr["end_to_end"]
        return (
            f"Per question (FinanceBench's id without its prefix): the value the extractor read from the "
            f"evidence pages and from the top {e2e['k']}, and whether each is right (evidence / top "
            f"{e2e['k']}). The lexicon has no item for {e2e['n_no_metric']} of the {e2e['n']} questions; no "
            f"value was found for {fbr['accuracy']['n_no_answer']} from the evidence pages and for "
            f"{e2e['n_no_answer']} from the top {e2e['k']}."
        )

    def questions_table(self) -> pd.DataFrame:
        """Per question, the value read from the evidence pages beside the value read from the top pages."""
        return pd.DataFrame(end_to_end_rows(self.result["financebench"]))

    # -- the audit and the conclusions
    def audit_note(self) -> str:
        a = self.result["audit"]
        return (
            f"{a['n_figures']} figures in {a['n_memos']} memos checked: every one has an audit-trail row whose "
            "quote contains it, in the cited passage."
        )

    def takeaways(self) -> str:
        """The chapter's conclusions as Markdown bullets (:func:`~aethel_lite.swarm.study.takeaways`)."""
        return takeaways(self.result)
