"""The swarm chapter's measurements: scores on the synthetic corpus, the topological filter, FinanceBench."""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..caching.resultcache import cached, dataset_digest
from ..core.entities import extract_entities
from ..data.sampling import sample_corpus
from ..data.schema import Dataset, Query, passage_text
from ..errors import ParameterError
from ..evaluation.splits import split
from ..retrievers.registry import make_retriever
from .extract import RuleExtractor, build_view
from .findings import Finding, score_conflicts, score_facts
from .lexicon import FUND_METRICS
from .resolvers import DocumentResolver
from .values import bare_numbers, page_scale, parse_period

__all__ = [
    "fund_targets",
    "synthetic_scores",
    "alias_invariance",
    "numeric_questions",
    "extraction_accuracy",
    "question_metric",
    "retrieved_pages",
    "end_to_end_accuracy",
    "end_to_end_table",
    "end_to_end_rows",
    "end_to_end_summary",
    "END_TO_END",
    "QUICK_CORPUS",
]

#: The retriever and depth whose pages :func:`end_to_end_accuracy` feeds the extractor.
END_TO_END = {"method": "aethel-hybrid", "k": 5}
#: Pages of the corpus :func:`end_to_end_accuracy` searches in quick mode (every evidence page kept).
QUICK_CORPUS = 60


def fund_targets(dataset: Any) -> list[str]:
    """Entity ids of the synthetic corpus's funds that state at least one scored fact, sorted."""
    return sorted({f["entity"] for f in dataset.meta["facts"] if f["metric"] in FUND_METRICS})


def synthetic_scores(
    orchestrator: Any,
    dataset: Any,
    *,
    evidence: Sequence[str] = ("graph", "bm25", "dense"),
    memos: bool = True,
) -> dict:
    """Score the swarm on every fund of a synthetic corpus, once per evidence source.

    Parameters
    ----------
    orchestrator : Orchestrator
        Fitted on ``dataset.passages`` (built with :meth:`Orchestrator.from_dataset`).
    dataset : Dataset
        A synthetic corpus (``meta["facts"]``, ``meta["aliases"]``, ``meta["contradictions"]``).
    evidence : sequence of {"graph", "bm25", "dense"}
    memos : bool
        Keep each run's memo Markdown (``graph`` evidence only).

    Returns
    -------
    dict
        ``{source: {"facts": score, "conflicts": score, "per_fund": [...], "seconds": float}}``
        and ``"memos": {entity: markdown}``, ``"targets": {entity: name used}`` (its longest name).
    """
    funds = fund_targets(dataset)
    aliases = dataset.meta["aliases"]
    planted = dataset.meta.get("contradictions", [])
    names = {e: max(aliases[e], key=lambda s: (len(s), s)) for e in funds}
    out: dict = {"targets": names, "memos": {}, "n_funds": len(funds), "n_planted": len(planted)}
    for source in evidence:
        t0 = time.perf_counter()
        facts: list[Finding] = []
        conflicts: list[Finding] = []
        per_fund = []
        for e in funds:
            result = orchestrator.run(names[e], evidence=source, memo=memos and source == "graph")
            own = [f for f in result.findings if f.entity == e]
            facts.extend(own)
            mine = [c for c in result.conflicts if c.entity == e]
            conflicts.extend(mine)
            s = score_facts(own, dataset.meta["facts"], metrics=FUND_METRICS, entities=[e])
            per_fund.append(
                {
                    "entity": e,
                    "name": names[e],
                    "precision": s["precision"],
                    "recall": s["recall"],
                    "n_found": s["n_found"],
                    "n_gold": s["n_gold"],
                    "n_conflicts": len(mine),
                    "n_passages": len({r["pid"] for recs in result.contexts.values() for r in recs}),
                }
            )
            if result.memo is not None:
                out["memos"][e] = result.memo.markdown
        fs = score_facts(facts, dataset.meta["facts"], metrics=FUND_METRICS, entities=funds)
        cs = score_conflicts(conflicts, planted, entities=funds)
        out[source] = {
            "facts": fs,
            "conflicts": cs,
            "per_fund": per_fund,
            "seconds": round(time.perf_counter() - t0, 3),
        }
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
    return {
        "entity": entity,
        "aliases": names,
        "identical": len(set(memos)) == 1,
        "n_distinct": len(set(memos)),
    }


# ---------------------------------------------------------------------------------- FinanceBench
_ANSWER_RE = re.compile(
    r"\s*(?P<cur>\$)?\s*(?P<neg>-)?\s*(?P<num>\d[\d,]*(?:\.\d+)?|\.\d+)\s*(?P<pct>%)?"
    r"\s*(?P<scale>million|billion)?\s*\.?\s*"
)
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
    """The lexicon metric a FinanceBench question asks for, or ``None`` (a computed quantity: a ratio, ...)."""
    if re.search(
        r"ratio|margin|average|change|growth|turnover|CAGR|defined as|days|per share|%|percent",
        question,
        re.IGNORECASE,
    ):
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
    step = 10**-decimals
    if m.group("neg"):
        v = -v
    if m.group("pct"):
        return v, "%", step / 2
    if m.group("scale") == "billion" or re.search(
        r"USD billions|in billions|\$ ?billions", question, re.IGNORECASE
    ):
        scale = 1e3
    elif m.group("scale") == "million" or re.search(
        r"USD millions|in millions|\$ ?millions", question, re.IGNORECASE
    ):
        scale = 1.0
    else:
        return None  # no stated scale: a per-share amount, a price or a count
    return v * scale, "USD m", step * scale / 2


def numeric_questions(dataset: Any) -> list[dict]:
    """FinanceBench questions whose gold answer is one money amount printed on an evidence page.

    An answer qualifies when it is a single number with a currency scale ("$1577.00" with "in USD
    millions" in the question) and a number printed on one of its evidence pages equals it after
    the page's scale ("(1,577)" on a page "in millions"), sign aside, within half a unit of the
    answer's last significant digit ("$303.00": units, "$0.40": tenths).

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
        pages = [(by_pid[pid].text, page_scale(by_pid[pid].text) or 1.0) for pid in pids if pid in by_pid]
        if not any(
            abs(abs(n * scale) - abs(value)) <= tol for text, scale in pages for n, *_ in bare_numbers(text)
        ):
            continue  # the answer is not printed on an evidence page
        fy = re.search(r"\bFY\s?'?((?:19|20)\d{2})\b", q.text)
        out.append(
            {
                "qid": q.qid,
                "question": q.text,
                "answer": q.meta.get("answer"),
                "value": value,
                "tolerance": tol,
                "company": q.meta.get("company"),
                "metric": question_metric(q.text),
                "period": f"FY{fy.group(1)}" if fy else parse_period(q.text),
                "pages": pids,
            }
        )
    return out


def extraction_accuracy(
    dataset: Any, questions: Sequence[Mapping[str, Any]], *, pages: Mapping[str, Sequence[str]] | None = None
) -> dict:
    """Exact-match accuracy of the extractor on :func:`numeric_questions`, reading the evidence pages.

    The answer is the value stated most often in the pages read for the question's metric and
    period about its company, segments' figures left out (first in page order on a tie); it is
    correct when its absolute value equals the gold's within the gold's rounding. A question without
    metric or period is wrong.

    Parameters
    ----------
    pages : mapping qid -> sequence of pids, optional
        The pages read for each question (default: its evidence pages, ``q["pages"]``).

    Returns
    -------
    dict
        ``n``, ``exact_match`` (share), ``n_correct``, ``n_no_metric``, ``n_no_answer``,
        ``n_gold_read`` (questions with an evidence page among the pages read), ``rows``.
    """
    by_pid = {p.pid: p for p in dataset.passages}
    extractor = RuleExtractor()
    rows = []
    for q in questions:
        read = list(q["pages"] if pages is None else pages.get(q["qid"], ()))
        chosen = [by_pid[pid] for pid in read if pid in by_pid]
        pred = None
        found: list[Finding] = []
        if q["metric"] is not None and q["period"] is not None and chosen:
            resolver = DocumentResolver(chosen, "company")
            mentions = extract_entities([passage_text(p) for p in chosen], "ner", progress=False)
            for p, m in zip(chosen, mentions):
                view = build_view(p, resolver, m)
                found += [
                    f
                    for f in extractor.extract(view, [q["metric"]], [], resolver=resolver, specialist="eval")
                    if f.period == q["period"]
                    and f.value is not None
                    and f.segment is None  # a segment's figure is not the company's answer
                    and (q.get("company") is None or f.entity == q["company"])
                ]
            if found:
                counts = Counter(abs(f.value) for f in found)
                pred = max(counts, key=lambda v: (counts[v], -[abs(f.value) for f in found].index(v)))
        correct = pred is not None and abs(pred - abs(q["value"])) <= q["tolerance"]
        rows.append(
            {
                "qid": q["qid"],
                "company": q["company"],
                "metric": q["metric"],
                "period": q["period"],
                "gold": q["value"],
                "predicted": pred,
                "correct": bool(correct),
                "n_findings": len(found),
                "surface": next(
                    (f.surface for f in found if pred is not None and abs(abs(f.value) - pred) < 1e-9), None
                ),
                "pages": read,
                "gold_read": bool(set(read) & set(q["pages"])),
            }
        )
    n = len(rows)
    return {
        "n": n,
        "exact_match": (sum(r["correct"] for r in rows) / n) if n else None,
        "n_correct": sum(r["correct"] for r in rows),
        "n_no_metric": sum(r["metric"] is None for r in rows),
        "n_no_answer": sum(r["predicted"] is None for r in rows),
        "n_gold_read": sum(r["gold_read"] for r in rows),
        "rows": rows,
    }


def retrieved_pages(
    dataset: Any,
    questions: Sequence[Mapping[str, Any]],
    *,
    method: str = END_TO_END["method"],
    k: int = END_TO_END["k"],
    corpus: Sequence[Any] | None = None,
    progress: bool = False,
) -> dict[str, list[str]]:
    """qid → the pids of ``method``'s top ``k`` pages for each question, searching ``corpus`` whole.

    The retriever is fitted on ``corpus`` (default: the data set's pages; no closed pool). The
    result is cached on disk (:func:`~aethel_lite.caching.resultcache.cached`).
    """
    if k < 1:
        raise ParameterError(f"k must be a positive integer, got {k!r}")
    by_qid = {q.qid: q for q in dataset.queries}
    missing = [q["qid"] for q in questions if q["qid"] not in by_qid]
    if missing:
        raise ParameterError(f"retrieved_pages: questions {missing[:3]} are not the data set's")
    passages = list(dataset.passages if corpus is None else corpus)
    queries = [Query(q["qid"], by_qid[q["qid"]].text, by_qid[q["qid"]].gold) for q in questions]
    if not queries:
        return {}

    def compute() -> dict:
        retriever = make_retriever(method, progress=progress)
        run = retriever.fit(passages).search(queries, k=k)
        return {q.qid: [pid for pid, _ in run.get(q.qid, [])[:k]] for q in queries}

    digest = dataset_digest(Dataset(getattr(dataset, "name", "corpus"), passages, queries, {}))
    return cached("swarm-retrieved-pages", {"data": digest, "method": method, "k": k}, compute)


def end_to_end_accuracy(
    dataset: Any,
    questions: Sequence[Mapping[str, Any]],
    *,
    method: str = END_TO_END["method"],
    k: int = END_TO_END["k"],
    corpus_size: int | None = None,
    progress: bool = False,
) -> dict:
    """:func:`extraction_accuracy` fed ``method``'s top ``k`` pages (:func:`retrieved_pages`) instead of the gold pages.

    The corpus searched is every page of the data set, or with ``corpus_size`` a sample of that many
    pages keeping every evidence page (:func:`~aethel_lite.data.sampling.sample_corpus`, seed 0).

    Returns
    -------
    dict
        What :func:`extraction_accuracy` returns, plus ``method``, ``k``, ``n_passages`` (the
        corpus searched), ``sampled``, ``dev_test`` (``{"dev": {"n", "n_correct"}, "test": {...}}``,
        the halves of :func:`aethel_lite.evaluation.splits.split`) and each row's ``half``.
    """
    passages = list(dataset.passages)
    if corpus_size is not None:
        by_qid = {q.qid: q for q in dataset.queries}
        asked = [
            Query(q["qid"], by_qid[q["qid"]].text, frozenset(q["pages"]) & {p.pid for p in passages})
            for q in questions
        ]
        passages = sample_corpus(Dataset(dataset.name, passages, asked, {}), corpus_size, 0).passages
    pages = retrieved_pages(dataset, questions, method=method, k=k, corpus=passages, progress=progress)
    out = extraction_accuracy(dataset, questions, pages=pages)
    halves = split(getattr(dataset, "name", "financebench"), [q["qid"] for q in questions])
    half = {qid: h for h, qids in halves.items() for qid in qids}
    for row in out["rows"]:
        row["half"] = half[row["qid"]]
    dev_test = {
        h: {
            "n": sum(r["half"] == h for r in out["rows"]),
            "n_correct": sum(r["correct"] for r in out["rows"] if r["half"] == h),
        }
        for h in ("dev", "test")
    }
    return {
        "method": method,
        "k": k,
        "n_passages": len(passages),
        "sampled": corpus_size is not None,
        "dev_test": dev_test,
        **out,
    }


def end_to_end_table(fb: Mapping[str, Any]) -> list[dict]:
    """The two FinanceBench numbers side by side (rows of a table): the extractor on the gold
    pages, and on the retriever's top pages (``fb`` is the chapter's ``financebench`` record)."""
    e2e = fb["end_to_end"]
    return [
        {
            "the extractor reads": label,
            "questions": acc["n"],
            "correct": acc["n_correct"],
            "exact match": acc["exact_match"],
            "an evidence page read": acc.get("n_gold_read", acc["n"]),
            "no value found": acc["n_no_answer"],
        }
        for label, acc in (
            ("the evidence pages (retrieval taken as perfect)", fb["accuracy"]),
            (f"{e2e['method']}'s top {e2e['k']} of {e2e['n_passages']:,} pages (end to end)", e2e),
        )
    ]


def end_to_end_rows(fb: Mapping[str, Any]) -> list[dict]:
    """Per question, the value read from the evidence pages beside the value read from the retriever's
    top pages, in eight columns narrow enough for the book's text column."""
    e2e = fb["end_to_end"]
    gold = {r["qid"]: r for r in fb["accuracy"]["rows"]}
    top = f"top {e2e['k']}"

    def yes(flag: bool) -> str:
        return "yes" if flag else "no"

    return [
        {
            "question": f"{r['qid'].removeprefix('financebench_id_')} ({r['half']})",
            "company": r["company"],
            "asked": f"{r['metric'].replace('_', ' ')}, {r['period']}",
            "gold (USD m)": r["gold"],
            "from evidence pages": gold[r["qid"]]["predicted"],
            f"from {top}": r["predicted"],
            "right": f"{yes(gold[r['qid']]['correct'])} / {yes(r['correct'])}",
            f"evidence page in {top}": yes(r["gold_read"]),
        }
        for r in e2e["rows"]
    ]


def end_to_end_summary(fb: Mapping[str, Any]) -> str:
    """The FinanceBench comparison in words (Markdown), every number read from the chapter's record."""
    acc, e2e = fb["accuracy"], fb["end_to_end"]
    n, top = e2e["n"], f"top {e2e['k']}"
    lost = acc["n_correct"] - e2e["n_correct"]
    if lost > 0:
        cost = f"retrieval costs {lost} of the {acc['n_correct']} answers the evidence pages give"
    elif lost == 0:
        cost = "retrieval costs none of the answers the evidence pages give"
    else:
        cost = (
            f"{-lost} more than from the evidence pages (a page of the same filing in the {top} states a "
            "figure the evidence pages do not)"
        )
    corpus = (
        f"a {e2e['n_passages']:,}-page sample of the corpus that keeps every evidence page (quick mode: "
        "retrieval is easier than over the whole corpus)"
        if e2e.get("sampled")
        else f"all {e2e['n_passages']:,} pages of the corpus"
    )
    dt = e2e["dev_test"]
    return (
        f"Reading the evidence pages, the extractor answers **{acc['n_correct']} of {acc['n']}** "
        f"({_pct(acc['exact_match'])}): that takes retrieval as perfect, so it is an upper bound on the "
        f"pipeline, not its result. Fed instead **{e2e['method']}'s {top} pages** of {corpus}, the same "
        f"extractor answers **{e2e['n_correct']} of {n}** ({_pct(e2e['exact_match'])}) — the end-to-end "
        f"number, question to figure: {cost}. The {top} held an evidence page for {e2e['n_gold_read']} of the "
        f"{n} questions. The hybrid's weights were chosen on the development halves of the open corpora; "
        f"{dt['dev']['n']} of these questions are in FinanceBench's development half ({dt['dev']['n_correct']} "
        f"answered end to end) and {dt['test']['n']} in its test half ({dt['test']['n_correct']})."
    )


# ---------------------------------------------------------------------------------------- chapter
def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def takeaways(saved: Mapping[str, Any]) -> str:
    """The chapter's conclusions as Markdown bullets, every number read from its result file."""
    syn = saved["synthetic"]
    g = syn["scores"]["graph"]
    lines = [
        f"* **Findings against the truth** ({syn['n_funds']} funds, {g['facts']['n_gold']} gold facts): "
        f"precision {_pct(g['facts']['precision'])}, recall {_pct(g['facts']['recall'])} with the graph's "
        f"top {saved['parameters']['k']} per query; {g['conflicts']['found']} of {g['conflicts']['n_planted']} "
        f"planted contradictions reported as conflicts (recall {_pct(g['conflicts']['recall'])}, precision "
        f"{_pct(g['conflicts']['precision'])})."
    ]
    others = [s for s in syn["scores"] if s not in ("graph", "graph-ner")]
    if others:
        parts = [f"{s} {_pct(syn['scores'][s]['facts']['recall'])}" for s in others]
        best = max(others, key=lambda s: syn["scores"][s]["facts"]["recall"] or 0)
        verdict = (
            "holds here"
            if (g["facts"]["recall"] or 0) > (syn["scores"][best]["facts"]["recall"] or 0)
            else "does not hold here"
        )
        lines.append(
            "* **The topological filter**: the same specialists fed other evidence recall "
            + ", ".join(parts)
            + f" of the gold facts, against {_pct(g['facts']['recall'])} from the graph: "
            f"the paper's claim that graph-filtered context serves the specialists better {verdict}."
        )
    if "graph-ner" in syn["scores"]:
        ner = syn["scores"]["graph-ner"]
        verdict = ""
        if others:
            beaten = [
                s
                for s in others
                if (syn["scores"][s]["facts"]["recall"] or 0) >= (ner["facts"]["recall"] or 0)
            ]
            verdict = (
                f" — below {', '.join(beaten)}: without the entity master's names the claim does not hold"
                if beaten
                else " — still above the non-graph evidence"
            )
        lines.append(
            f"* **Entity linking matters**: built from spaCy NER alone, the graph's context gives recall "
            f"{_pct(ner['facts']['recall'])} (conflicts {_pct(ner['conflicts']['recall'])}){verdict}. Linking "
            "the names of the entity master (here the generator's own alias table) into the graph is what "
            "joins the passages whose fund the NER model misses."
        )
    inv = syn["alias_invariance"]
    lines.append(
        f"* **Aliases**: {inv['n_identical']} of {inv['n_funds']} funds get the identical memo under every "
        f"one of their names ({inv['n_names']} names tried)."
    )
    lines.append(
        f"* **Audit**: {saved['audit']['n_figures']} figures in {saved['audit']['n_memos']} memos, each "
        "with an audit row whose quote holds it, in the cited passage (checked by code)."
    )
    fb = saved.get("financebench")
    if fb:
        acc = fb["accuracy"]
        lines.append(
            f"* **FinanceBench, the extractor alone**: on the {acc['n']} questions whose gold answer is one "
            f"amount printed on the evidence page, reading those evidence pages, the extractor's exact match is "
            f"{_pct(acc['exact_match'])} ({acc['n_correct']} correct; {acc['n_no_metric']} ask for an item the "
            "lexicon does not know) — retrieval taken as perfect, so an upper bound, and a development-set "
            "figure: the statement patterns were written while reading these pages."
        )
        e2e = fb.get("end_to_end")
        if e2e:
            sample = " (a sample of the corpus, quick mode)" if e2e.get("sampled") else ""
            lines.append(
                f"* **FinanceBench, end to end**: fed {e2e['method']}'s top {e2e['k']} pages of "
                f"{e2e['n_passages']:,}{sample} instead, the same extractor answers {e2e['n_correct']} of "
                f"{e2e['n']} ({_pct(e2e['exact_match'])}); the top {e2e['k']} held an evidence page for "
                f"{e2e['n_gold_read']} of them. This, not the figure above, is what a user of the pipeline gets."
            )
        lines.append(
            f"* **Speed**: the {fb['target']} memo over {fb['n_passages']:,} pages took "
            f"{fb['timing']['memo']:.1f} s from a fitted index (fitting it from the warm entity store: "
            f"{fb['timing']['fit']:.1f} s)."
        )
    return "\n".join(lines)
