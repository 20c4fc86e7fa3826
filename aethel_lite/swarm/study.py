"""The swarm chapter's measurements: scores on the synthetic corpus, the topological filter, FinanceBench.

* :func:`synthetic_scores` — a memo for every fund of the synthetic corpus; its facts scored
  against the generator's gold facts (precision and recall of (entity, metric, period, value)
  over the six quarterly fund metrics) and its conflicts against the planted contradictions;
  once per evidence source (the graph, BM25, dense), so the topological filter is measured.
* :func:`alias_invariance` — the memo for a target named by each of its aliases.
* :func:`numeric_questions` and :func:`extraction_accuracy` — FinanceBench questions whose gold
  answer is one number printed on the evidence page, and the extractor's exact-match accuracy on
  them after unit normalisation.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.entities import extract_entities
from ..errors import ParameterError
from ..retrievers.base import passage_text
from .extract import RuleExtractor, build_view
from .findings import Finding, score_conflicts, score_facts
from .lexicon import FUND_METRICS
from .resolvers import DocumentResolver
from .values import bare_numbers, page_scale, parse_period

__all__ = ["fund_targets", "synthetic_scores", "alias_invariance", "numeric_questions", "extraction_accuracy",
           "question_metric"]


def fund_targets(dataset: Any) -> list[str]:
    """Entity ids of the synthetic corpus's funds that state at least one scored fact, sorted."""
    return sorted({f["entity"] for f in dataset.meta["facts"] if f["metric"] in FUND_METRICS})


def synthetic_scores(orchestrator: Any, dataset: Any, *, evidence: Sequence[str] = ("graph", "bm25", "dense"),
                     k: int | None = None, naming: str = "display", memos: bool = True) -> dict:
    """Score the swarm on every fund of a synthetic corpus, once per evidence source.

    Parameters
    ----------
    orchestrator : Orchestrator
        Fitted on ``dataset.passages`` (built with :meth:`Orchestrator.from_dataset`).
    dataset : Dataset
        A synthetic corpus (``meta["facts"]``, ``meta["aliases"]``, optionally
        ``meta["contradictions"]``).
    evidence : sequence of {"graph", "bm25", "dense"}
    k : int, optional
        Passages per query (default: the orchestrator's).
    naming : {"display", "acronym"}
        How each fund is named in the request: its longest name, or its acronym-like shortest
        form (the hardest for a lexical retriever).
    memos : bool
        Keep each run's memo Markdown (``graph`` evidence only).

    Returns
    -------
    dict
        ``{source: {"facts": score, "conflicts": score, "per_fund": [...], "seconds": float}}``
        and ``"memos": {entity: markdown}``, ``"targets": {entity: name used}``.
    """
    if naming not in ("display", "acronym"):
        raise ParameterError(f"naming must be 'display' or 'acronym', got {naming!r}")
    funds = fund_targets(dataset)
    aliases = dataset.meta["aliases"]
    planted = dataset.meta.get("contradictions", [])
    names = {e: (max(aliases[e], key=lambda s: (len(s), s)) if naming == "display"
                 else min(aliases[e], key=lambda s: (len(s), s))) for e in funds}
    out: dict = {"targets": names, "memos": {}, "n_funds": len(funds), "n_planted": len(planted)}
    for source in evidence:
        t0 = time.perf_counter()
        facts: list[Finding] = []
        conflicts: list[Finding] = []
        per_fund = []
        for e in funds:
            result = orchestrator.run(names[e], evidence=source, k=k, memo=memos and source == "graph")
            own = [f for f in result.findings if f.entity == e]
            facts.extend(own)
            mine = [c for c in result.conflicts if c.entity == e]
            conflicts.extend(mine)
            s = score_facts(own, dataset.meta["facts"], metrics=FUND_METRICS, entities=[e])
            per_fund.append({"entity": e, "name": names[e], "precision": s["precision"], "recall": s["recall"],
                             "n_found": s["n_found"], "n_gold": s["n_gold"], "n_conflicts": len(mine),
                             "n_passages": len({r["pid"] for recs in result.contexts.values() for r in recs})})
            if result.memo is not None:
                out["memos"][e] = result.memo.markdown
        fs = score_facts(facts, dataset.meta["facts"], metrics=FUND_METRICS, entities=funds)
        cs = score_conflicts(conflicts, planted, entities=funds)
        out[source] = {"facts": fs, "conflicts": cs, "per_fund": per_fund,
                       "seconds": round(time.perf_counter() - t0, 3)}
    return out


def alias_invariance(orchestrator: Any, dataset: Any, entity: str) -> dict:
    """Run the memo for ``entity`` under each of its aliases; say whether all memos are identical.

    Returns
    -------
    dict
        ``aliases`` (the names tried), ``identical`` (bool), ``n_distinct`` (distinct memos).
    """
    names = sorted(dataset.meta["aliases"][entity])
    memos = [orchestrator.run(n).memo.markdown for n in names]
    return {"entity": entity, "aliases": names, "identical": len(set(memos)) == 1, "n_distinct": len(set(memos))}


# ---------------------------------------------------------------------------------- FinanceBench
_ANSWER_RE = re.compile(r"\s*(?P<cur>\$)?\s*(?P<neg>-)?\s*(?P<num>\d[\d,]*(?:\.\d+)?|\.\d+)\s*(?P<pct>%)?"
                        r"\s*(?P<scale>million|billion)?\s*\.?\s*")
_ASK = {
    "capex": r"capital expenditures?|\bcapex\b|capital spending",
    "accounts_receivable": r"accounts receivable|\bnet AR\b|\bAR\b",
    "accounts_payable": r"accounts payable|\bAP\b",
    "cogs": r"\bCOGS\b|cost of goods sold|cost of sales",
    "dividends": r"dividends",
    "inventories": r"inventor(?:y|ies)",
    "current_liabilities": r"total current liabilities",
    "current_assets": r"total current assets",
    "total_assets": r"total assets",
    "net_income": r"net income",
    "revenue": r"\brevenues?\b|net sales",
    "cash": r"cash and cash equivalents",
    "operating_cash_flow": r"cash (?:flows? )?from (?:operations|operating activities)|operating cash flow"
                           r"|net cash (?:provided by|from) operating activities",
    "ppe_net": r"net property,? plant,? and equipment|net PP(?:&|N)?E\b|property and equipment,? net",
    "long_term_debt": r"long-term debt",
    "total_debt": r"total debt",
}


def question_metric(question: str) -> str | None:
    """The lexicon metric a FinanceBench question asks for, or ``None`` (a ratio, a growth rate, ...).

    Questions that ask for a computed quantity (ratio, margin, average, change, growth, turnover,
    "defined as") are not single-metric questions.
    """
    if re.search(r"ratio|margin|average|change|growth|turnover|CAGR|defined as|days|per share|%|percent",
                 question, re.IGNORECASE):
        return None
    hits = [m for m, rx in _ASK.items() if re.search(rx, question, re.IGNORECASE)]
    return hits[0] if len(hits) == 1 else None


def _gold(answer: str, question: str) -> tuple[float, str, float] | None:
    """(value, unit, tolerance) of a gold answer that is one number; money in USD millions."""
    m = _ANSWER_RE.fullmatch(str(answer))
    if not m:
        return None
    text = m.group("num")
    v = float(text.replace(",", ""))
    # FinanceBench prints every answer with two decimals ("$303.00" for 302,578 thousand): the
    # precision is that of the significant decimals ("303.00" → units, "0.40" → tenths)
    decimals = len(text.split(".")[1].rstrip("0")) if "." in text else 0
    step = 10 ** -decimals
    if m.group("neg"):
        v = -v
    if m.group("pct"):
        return v, "%", step / 2
    scale = 1.0
    if m.group("scale") == "billion" or re.search(r"USD billions|in billions|\$ ?billions", question, re.IGNORECASE):
        scale = 1e3
    elif m.group("scale") == "million" or re.search(r"USD millions|in millions|\$ ?millions", question, re.IGNORECASE):
        scale = 1.0
    elif m.group("cur"):
        return None  # dollars without a stated scale: a per-share amount or a price
    else:
        return None
    return v * scale, "USD m", step * scale / 2


def numeric_questions(dataset: Any) -> list[dict]:
    """FinanceBench questions whose gold answer is one money amount printed on an evidence page.

    An answer qualifies when it is a single number with a currency scale ("$1577.00" with "in USD
    millions" in the question) and a number printed on one of its evidence pages equals it after
    the page's scale ("(1,577)" on a page "in millions"), within half a unit of the answer's last
    significant digit (FinanceBench writes "$303.00" for 302,578 thousand: units; "$0.40" billion:
    tenths); signs are ignored (outflows are printed in parentheses).

    Returns
    -------
    list of dict
        ``qid``, ``question``, ``answer``, ``value`` (USD m), ``tolerance``, ``company``,
        ``metric`` (:func:`question_metric`, may be ``None``), ``period``, ``pages`` (pids).
    """
    by_pid = {p.pid: p for p in dataset.passages}
    out = []
    for q in dataset.queries:
        gold = _gold(q.meta.get("answer") or "", q.text)
        if gold is None or gold[1] != "USD m":
            continue
        value, unit, tol = gold
        pids = [f"{ev['doc_name']}#p{ev['page']}" for ev in q.meta.get("evidence", ())]
        printed = False
        for pid in pids:
            p = by_pid.get(pid)
            if p is None:
                continue
            scale = page_scale(p.text) or 1.0
            if any(abs(abs(n * scale) - abs(value)) <= tol for n, *_ in bare_numbers(p.text)):
                printed = True
                break
        if not printed:
            continue
        out.append({"qid": q.qid, "question": q.text, "answer": q.meta.get("answer"), "value": value, "tolerance": tol,
                    "company": q.meta.get("company"), "metric": question_metric(q.text),
                    "period": _question_period(q.text), "pages": pids})
    return out


def _question_period(question: str) -> str | None:
    m = re.search(r"\bFY\s?'?((?:19|20)\d{2})\b", question)
    if m:
        return f"FY{m.group(1)}"
    return parse_period(question)


def extraction_accuracy(dataset: Any, questions: Sequence[Mapping[str, Any]], *, ner: bool = True) -> dict:
    """Exact-match accuracy of the extractor on :func:`numeric_questions`, reading the evidence pages.

    For each question the extractor reads its evidence pages (the company's filing, so the
    retrieval step is not measured here) and its answer is the value stated most often for the
    question's metric and period (first in page order on a tie). It is correct when its absolute
    value equals the gold's within the gold's rounding (:func:`numeric_questions`). A question
    whose metric the lexicon does not know, or whose period the question does not name, counts
    as answered wrongly.

    Returns
    -------
    dict
        ``n``, ``exact_match`` (share), ``n_correct``, ``n_no_metric``, ``n_no_answer``, ``rows``.
    """
    by_pid = {p.pid: p for p in dataset.passages}
    extractor = RuleExtractor()
    rows = []
    for q in questions:
        pages = [by_pid[pid] for pid in q["pages"] if pid in by_pid]
        pred = None
        found: list[Finding] = []
        if q["metric"] is not None and q["period"] is not None and pages:
            resolver = DocumentResolver(pages, "company")
            mentions = [None] * len(pages)
            if ner:

                mentions = extract_entities([passage_text(p) for p in pages], "ner", progress=False)
            for p, m in zip(pages, mentions):
                view = build_view(p, resolver, m)
                found += [f for f in extractor.extract(view, [q["metric"]], [], resolver=resolver, specialist="eval")
                          if f.period == q["period"] and f.value is not None]
            if found:
                counts: dict[float, int] = {}
                for f in found:
                    counts[abs(f.value)] = counts.get(abs(f.value), 0) + 1
                pred = max(counts, key=lambda v: (counts[v], -[abs(f.value) for f in found].index(v)))
        correct = pred is not None and abs(pred - abs(q["value"])) <= q["tolerance"]
        rows.append({"qid": q["qid"], "company": q["company"], "metric": q["metric"], "period": q["period"],
                     "gold": q["value"], "predicted": pred, "correct": bool(correct), "n_findings": len(found),
                     "surface": next((f.surface for f in found if pred is not None and abs(abs(f.value) - pred) < 1e-9),
                                     None)})
    n = len(rows)
    return {"n": n, "exact_match": (sum(r["correct"] for r in rows) / n) if n else None,
            "n_correct": sum(r["correct"] for r in rows), "n_no_metric": sum(r["metric"] is None for r in rows),
            "n_no_answer": sum(r["predicted"] is None for r in rows), "rows": rows}



# ---------------------------------------------------------------------------------------- chapter
def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def takeaways(saved: Mapping[str, Any]) -> str:
    """The chapter's conclusions as Markdown bullets, every number read from its result file."""
    syn = saved["synthetic"]
    lines = []
    g = syn["scores"]["graph"]
    lines.append(f"* **Findings against the truth** ({syn['n_funds']} funds, {g['facts']['n_gold']} gold facts): "
                 f"precision {_pct(g['facts']['precision'])}, recall {_pct(g['facts']['recall'])} with the graph's "
                 f"top {saved['parameters']['k']} per query; {g['conflicts']['found']} of {g['conflicts']['n_planted']} "
                 f"planted contradictions reported as conflicts (recall {_pct(g['conflicts']['recall'])}, precision "
                 f"{_pct(g['conflicts']['precision'])}).")
    others = [s for s in syn["scores"] if s not in ("graph", "graph-ner")]
    if others:
        parts = [f"{s} {_pct(syn['scores'][s]['facts']['recall'])}" for s in others]
        best = max(others, key=lambda s: syn["scores"][s]["facts"]["recall"] or 0)
        verdict = ("holds here" if (g["facts"]["recall"] or 0) > (syn["scores"][best]["facts"]["recall"] or 0)
                   else "does not hold here")
        lines.append("* **The topological filter**: the same specialists fed other evidence recall "
                     + ", ".join(parts) + f" of the gold facts, against {_pct(g['facts']['recall'])} from the graph: "
                     f"the paper's claim that graph-filtered context serves the specialists better {verdict}.")
    if "graph-ner" in syn["scores"]:
        ner = syn["scores"]["graph-ner"]
        verdict = ""
        if others:
            beaten = [s for s in others if (syn["scores"][s]["facts"]["recall"] or 0) >= (ner["facts"]["recall"] or 0)]
            verdict = (f" — below {', '.join(beaten)}: without the entity master's names the claim does not hold"
                       if beaten else " — still above the non-graph evidence")
        lines.append(f"* **Entity linking matters**: built from spaCy NER alone, the graph's context gives recall "
                     f"{_pct(ner['facts']['recall'])} (conflicts {_pct(ner['conflicts']['recall'])}){verdict}. Linking "
                     "the names of the entity master (here the generator's own alias table) into the graph is what "
                     "joins the passages whose fund the NER model misses.")
    inv = syn["alias_invariance"]
    lines.append(f"* **Aliases**: {inv['n_identical']} of {inv['n_funds']} funds get the identical memo under every "
                 f"one of their names ({inv['n_names']} names tried).")
    lines.append(f"* **Audit**: {saved['audit']['n_figures']} figures in {saved['audit']['n_memos']} memos, each "
                 "with an audit row whose quote holds it, in the cited passage (checked by code).")
    fb = saved.get("financebench")
    if fb:
        acc = fb["accuracy"]
        lines.append(f"* **FinanceBench**: on the {acc['n']} questions whose gold answer is one amount printed on "
                     f"the evidence page, the extractor's exact match is {_pct(acc['exact_match'])} "
                     f"({acc['n_correct']} correct; {acc['n_no_metric']} ask for an item the lexicon does not know) — "
                     "a development-set figure: the statement patterns were written while reading these pages.")
        lines.append(f"* **Speed**: the {fb['target']} memo over {fb['n_passages']:,} pages took "
                     f"{fb['timing']['memo']:.1f} s from a fitted index (fitting it from the warm entity store: "
                     f"{fb['timing']['fit']:.1f} s).")
    return "\n".join(lines)
