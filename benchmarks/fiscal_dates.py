"""Date questions on filers whose fiscal year does not end in December: does ``aethel search`` find the page?

A question names a period as an analyst would ("quarter ended April 30, 2023", "Q1 FY24", "fiscal 2023",
"as of October 29, 2022"); the filings name their own fiscal periods (Walmart's quarter ended April 30, 2023
is its first quarter of fiscal 2024). This script indexes 25 real SEC filings the way an analyst's own
files would give them and measures, per phrasing, whether a page printing the asked figure comes first.

**Filings** (:data:`FILINGS`, 1,782 pages of FinanceBench's ``pages.jsonl.gz``). Seven filers whose fiscal
year does not end in December, each with filings of neighbouring periods so that the wrong period is a real
competitor: Apple (last Saturday of September: FY2022 10-K, Q3 FY2023 10-Q), Amcor (June 30: FY2022 and
FY2023 10-Ks, Q2 FY2023 10-Q, Q4 FY2023 earnings release), Microsoft (June 30: FY2022 and FY2023 10-Ks),
Best Buy (Saturday nearest January 31: FY2023 10-K, Q4 FY2023 and Q2 FY2024 releases, Q2 FY2024 10-Q),
Walmart (January 31: FY2023 10-K, Q1 FY2024 10-Q), Salesforce (January 31: FY2023 10-K, Q3 FY2023 10-Q,
Q1 and Q2 FY2024 releases) and Foot Locker (Saturday nearest January 31, its year named by the calendar
year in which it *starts*: the 10-K for the year ended January 28, 2023 reports "2022"; 10-Ks for 2021 and
2022, Q3 2022 10-Q); and two calendar-year controls: Lockheed Martin (quarters end on a Sunday: Q1 and
Q2 2023 earnings releases, filed in FinanceBench as 10-Qs) and Netflix (2022 10-K, Q2 2023 10-Q). Every
FinanceBench filing of these filers whose period is near the others was taken, except Foot Locker's
``FOOTLOCKER_2022_10Q`` (a byte-identical copy of ``FOOTLOCKER_2023Q3_10Q``, and not in the document
information file), the annual reports that repeat a 10-K (Walmart, General Mills, FedEx) and older 10-Ks.

**Questions** (``benchmarks/fiscal_questions.jsonl``, 48: 42 on the seven non-calendar filers, 6 controls).
Each names the company and one period in one of nine phrasings (``phrasing``): ``quarter_ended``
("quarter ended July 29, 2023"), ``three_months_ended``, ``six_months_ended``, ``nine_months_ended``,
``q_fy`` ("Q3 FY2023", "3Q FY23", "Q1 FY24"), ``quarter_of_fiscal`` ("first quarter of fiscal 2024"),
``fiscal_year`` ("fiscal 2023", "FY2023"; the gold filing is the 10-K), ``as_of`` (a balance-sheet figure)
and ``year_ended``; at least three per phrasing on the non-calendar filers. Each asks for one figure
printed in the financial statements or MD&A of one filing (``filing``: revenue, net income, diluted EPS,
gross margin, cost of sales, total assets, inventories, cash), written in the filer's own fiscal terms
(``fiscal_period``: the filer's label of the period the figure's column ends with, in docmeta's key
form, ``"2024q1"`` or ``"2023"``; ``months``: its length, 0 for a balance-sheet date). Figures were
chosen to be distinctive numbers (``"152,301"`` rather than ``"274"``). **Gold**: every page of the 25
filings of that company whose text holds the figure as a whole number (not inside a longer one); each
page was read and the pages where the same digits stand for something else (an AOCI balance, another
quarter's basic EPS) were dropped. Pages of the target filing are the gold proper; pages of another filing
repeating the figure for the same period (the earnings release of the same quarter, a later 10-K's
comparative column) carry ``"other_filing": true``.

**Index**: each filing becomes one JSONL passage file named by its opaque id, one passage per page, as
:func:`aethel_lite.data.own_files.own_files` gives it (pid ``doc-1a2b3c4d5e#p12``, no title, no
company, type or period from FinanceBench's metadata: ``docmeta.json`` reads them from the pages), then
``aethel index FILES --out INDEX --methods M`` and ``aethel search INDEX --questions FILE -k 10 --method M``
(JSON lines; ``M``: the default method of the code measured, ``--method`` another). The commands run on
the same ``aethel_lite`` this script imports (``PYTHONPATH=DIR`` runs another checkout, e.g. a ``git
archive`` of an older commit). An
existing ``--index`` built from the same filings is reused as it is (``--rebuild`` replaces it: needed
after a change to what ``aethel index`` writes, such as ``docmeta.json``).

**Scores**, per phrasing, for the non-calendar filers, the controls and overall: questions with a gold
page at rank 1 and in the top 3 (any gold page; ``strict``: a page of the target filing), the rank of the
first gold page per question (``None``: not in the top 10) and of the first page of the target filing.
Usage::

    AETHEL_DATA=/work/shared/data .venv/bin/python benchmarks/fiscal_dates.py [--index DIR] [--out FILE]
    # another commit, e.g. before the fiscal calendar (its own index: docmeta.json is written by aethel index)
    git archive 41e997c | tar -x -C /tmp/base
    PYTHONPATH=/tmp/base .venv/bin/python benchmarks/fiscal_dates.py --index /tmp/base-index --label 41e997c

The page texts stay in ``$AETHEL_DATA`` and in the index folder (default under ``$AETHEL_CACHE``), never
in the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import aethel_lite
from aethel_lite.caching.locations import cache_dir
from aethel_lite.caching.versions import versions
from aethel_lite.data.docmeta import period_keys
from aethel_lite.data.fiscal import filer_key
from aethel_lite.data.own_files import opaque_ids, own_files
from aethel_lite.data.paths import data_file
from aethel_lite.data.schema import Dataset, Passage
from aethel_lite.io import read_jsonl, write_json, write_jsonl
from aethel_lite.retrievers.registry import DEFAULT_METHOD

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "fiscal_questions.jsonl"
DEFAULT_OUT = HERE / "results" / "fiscal_dates.json"
METHOD = DEFAULT_METHOD  # aethel index/search's default
K = 10

#: the indexed filings: doc_name -> (fiscal year end, the filer's label of the filing's period, period end)
FILINGS = {
    "APPLE_2022_10K": ("last Saturday of September", "2022", "2022-09-24"),
    "APPLE_2023Q3_10Q": ("last Saturday of September", "2023q3", "2023-07-01"),
    "AMCOR_2022_10K": ("June 30", "2022", "2022-06-30"),
    "AMCOR_2023Q2_10Q": ("June 30", "2023q2", "2022-12-31"),
    "AMCOR_2023_10K": ("June 30", "2023", "2023-06-30"),
    "AMCOR_2023Q4_EARNINGS": ("June 30", "2023q4", "2023-06-30"),
    "MICROSOFT_2022_10K": ("June 30", "2022", "2022-06-30"),
    "MICROSOFT_2023_10K": ("June 30", "2023", "2023-06-30"),
    "BESTBUY_2023_10K": ("Saturday nearest January 31", "2023", "2023-01-28"),
    "BESTBUY_2023Q4_EARNINGS": ("Saturday nearest January 31", "2023q4", "2023-01-28"),
    "BESTBUY_2024Q2_10Q": ("Saturday nearest January 31", "2024q2", "2023-07-29"),
    "BESTBUY_2024Q2_EARNINGS": ("Saturday nearest January 31", "2024q2", "2023-07-29"),
    "WALMART_2023_10K": ("January 31", "2023", "2023-01-31"),
    "WALMART_2024Q1_10Q": ("January 31", "2024q1", "2023-04-30"),
    "SALESFORCE_2023_10K": ("January 31", "2023", "2023-01-31"),
    "SALESFORCE_2023Q3_10Q": ("January 31", "2023q3", "2022-10-31"),
    "SALESFORCE_2024Q1_EARNINGS": ("January 31", "2024q1", "2023-04-30"),
    "SALESFORCE_2024Q2_EARNINGS": ("January 31", "2024q2", "2023-07-31"),
    "FOOTLOCKER_2022_10K": ("Saturday nearest January 31 (named by its first year)", "2021", "2022-01-29"),
    "FOOTLOCKER_2023_10K": ("Saturday nearest January 31 (named by its first year)", "2022", "2023-01-28"),
    "FOOTLOCKER_2023Q3_10Q": (
        "Saturday nearest January 31 (named by its first year)",
        "2022q3",
        "2022-10-29",
    ),
    "LOCKHEEDMARTIN_2023Q1_10Q": ("December 31 (quarters end on a Sunday)", "2023q1", "2023-03-26"),
    "LOCKHEEDMARTIN_2023Q2_10Q": ("December 31 (quarters end on a Sunday)", "2023q2", "2023-06-25"),
    "NETFLIX_2022_10K": ("December 31", "2022", "2022-12-31"),
    "NETFLIX_2023Q2_10Q": ("December 31", "2023q2", "2023-06-30"),
}
PHRASINGS = (
    "quarter_ended",
    "three_months_ended",
    "six_months_ended",
    "nine_months_ended",
    "q_fy",
    "quarter_of_fiscal",
    "fiscal_year",
    "as_of",
    "year_ended",
)


def load_questions(path: Path) -> list[dict]:
    """The question records, checked for the fields this script reads (one line naming the problem)."""
    rows = list(read_jsonl(path, numbered=True))
    out = []
    for lineno, row in rows:
        missing = [k for k in ("id", "company", "question", "phrasing", "filing", "gold") if k not in row]
        if missing:
            raise SystemExit(f"{path}:{lineno}: missing field(s) {', '.join(missing)}")
        if row["phrasing"] not in PHRASINGS:
            raise SystemExit(f"{path}:{lineno}: unknown phrasing {row['phrasing']!r}")
        if "\n" in row["question"] or "\r" in row["question"]:
            raise SystemExit(f"{path}:{lineno}: a question must be one line")
        unknown = sorted({g["doc_name"] for g in row["gold"]} - set(FILINGS))
        if unknown or row["filing"] not in FILINGS:
            raise SystemExit(
                f"{path}:{lineno}: gold filing not indexed: {', '.join(unknown or [row['filing']])}"
            )
        out.append(row)
    return out


def filing_pages(pages_file: Path) -> list[Passage]:
    """The pages of :data:`FILINGS` as the loader names them (pid ``"<doc_name>#p<page>"``, meta ``page``)."""
    passages = []
    for row in read_jsonl(pages_file):
        if row["doc_name"] in FILINGS:
            doc, page = row["doc_name"], int(row["page"])
            passages.append(Passage(f"{doc}#p{page}", doc, doc, row["text"], {"page": page}))
    found = {p.doc_id for p in passages}
    if found != set(FILINGS):
        raise SystemExit(f"{pages_file}: filings not found: {', '.join(sorted(set(FILINGS) - found))}")
    return passages


def aethel(args: list[str], env: dict, capture: bool = True) -> str:
    """Run ``python -m aethel_lite.cli ARGS`` (the imported aethel_lite) from a neutral folder; stdout."""
    with tempfile.TemporaryDirectory(prefix="fiscal-dates-cwd-") as cwd:  # -m puts the cwd first on sys.path
        proc = subprocess.run(
            [sys.executable, "-m", "aethel_lite.cli", *args],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE if capture else None,
            text=True,
        )
    if proc.returncode != 0:
        raise SystemExit(f"aethel {args[0]} failed (exit {proc.returncode})")
    return proc.stdout or ""


def build_index(index: Path, pages_file: Path, env: dict, n_process: int, method: str = METHOD) -> dict:
    """Write each filing as an own-files JSONL passage file and run ``aethel index`` on them."""
    own = own_files(Dataset("fiscal-dates", filing_pages(pages_file), []), name="fiscal-dates-own")
    by_doc: dict[str, list[dict]] = {}
    for p in own.passages:
        by_doc.setdefault(p.doc_id, []).append(p.to_dict())
    with tempfile.TemporaryDirectory(prefix="fiscal-dates-filings-") as tmp:
        files = []
        for doc, rows in sorted(by_doc.items()):
            files.append(Path(tmp) / f"{doc}.jsonl")
            write_jsonl(files[-1], rows)
        t0 = time.perf_counter()
        out = aethel(
            [
                "index",
                *map(str, files),
                "--out",
                str(index),
                "--methods",
                method,
                "--n-process",
                str(n_process),
            ],
            env,
        )
        seconds = time.perf_counter() - t0
    print(out.strip())
    return {"n_pages": len(own.passages), "n_filings": len(by_doc), "seconds": round(seconds, 1)}


def index_documents(index: Path) -> set[str] | None:
    """The document ids of an existing index (``ids.json``), or None when there is no index there."""
    if not (index / "index.json").is_file() or not (index / "ids.json").is_file():
        return None
    return set(json.loads((index / "ids.json").read_text(encoding="utf-8"))["doc_ids"])


def first_rank(hits: list[dict], wanted: set[tuple[str, int]]) -> int | None:
    return next((h["rank"] for h in hits if (h["doc_name"], h["page_index"]) in wanted), None)


def score(questions: list[dict], answers: list[dict], name_of: dict[str, str]) -> list[dict]:
    """Per question: the ranks of the first gold page (any; strict) and of the target filing's first page."""
    rows = []
    for q, a in zip(questions, answers, strict=True):
        hits = [
            {
                "rank": h["rank"],
                "doc_name": name_of.get(h["doc_id"], h["doc_id"]),
                "page_index": h["page_index"],
            }
            for h in a["hits"]
        ]
        gold = {(g["doc_name"], int(g["page"])) for g in q["gold"]}
        strict = {(g["doc_name"], int(g["page"])) for g in q["gold"] if not g.get("other_filing")}
        filing = next((h["rank"] for h in hits if h["doc_name"] == q["filing"]), None)
        rows.append(
            {
                "id": q["id"],
                "company": q["company"],
                "phrasing": q["phrasing"],
                "control": q["fiscal_year_end_month"] == 12,
                "question": q["question"],
                "fiscal_period": q.get("fiscal_period"),
                "question_period_keys": period_keys(q["question"]),
                "filing": q["filing"],
                "rank": first_rank(hits, gold),
                "rank_strict": first_rank(hits, strict),
                "rank_filing": filing,
                "top": [f"{h['doc_name']}#p{h['page_index']}" for h in hits[:3]],
            }
        )
    return rows


def summarise(rows: list[dict]) -> dict:
    def counts(group: list[dict]) -> dict:
        def at(key: str, k: int) -> int:
            return sum(1 for r in group if r[key] is not None and r[key] <= k)

        return {
            "n": len(group),
            "top1": at("rank", 1),
            "top3": at("rank", 3),
            "top10": at("rank", K),
            "top1_strict": at("rank_strict", 1),
            "top3_strict": at("rank_strict", 3),
            "filing_top1": at("rank_filing", 1),
        }

    return {
        "by_phrasing": {p: counts([r for r in rows if r["phrasing"] == p]) for p in PHRASINGS},
        "non_calendar": counts([r for r in rows if not r["control"]]),
        "controls": counts([r for r in rows if r["control"]]),
        "overall": counts(rows),
    }


def docmeta_check(index: Path, name_of: dict[str, str]) -> list[dict]:
    """``docmeta.json`` of the index beside what each filing says of itself (:data:`FILINGS`): its periods as the
    filer names them (:func:`~aethel_lite.data.fiscal.filer_key`, by ``fiscal_year_name``)."""
    path = index / "docmeta.json"
    if not path.is_file():
        return []
    out = []
    for m in json.loads(path.read_text(encoding="utf-8"))["documents"]:
        doc_id = m["doc_id"]
        name = name_of.get(doc_id, doc_id)
        fye, label, end = FILINGS.get(name, ("?", "?", "?"))
        named = [filer_key(p, m.get("fiscal_year_name")) for p in m.get("periods", [])]
        out.append(
            {
                "doc_name": name,
                "doc_id": doc_id,
                "fiscal_year_end": fye,
                "filer_period": label,
                "period_end": end,
                "docmeta_periods": m.get("periods"),
                "docmeta_fiscal_year_end": m.get("fiscal_year_end"),
                "docmeta_fiscal_year_name": m.get("fiscal_year_name"),
                "docmeta_types": m.get("types"),
                "docmeta_companies": m.get("companies"),
                "agrees": bool(named) and label in named and named[0] == label.split("q")[0],
            }
        )
    return sorted(out, key=lambda r: r["doc_name"])


def print_report(summary: dict, rows: list[dict], meta: list[dict]) -> None:
    heads = ("top1", "top3", "top10", "strict@1", "strict@3", "filing@1")
    print(f"\n{'phrasing':20s} {'n':>3s} " + " ".join(f"{h:>8s}" for h in heads))
    groups = [*summary["by_phrasing"].items(), ("non-calendar", summary["non_calendar"]),
              ("controls", summary["controls"]), ("overall", summary["overall"])]  # fmt: skip
    for name, c in groups:
        print(
            f"{name:20s} {c['n']:3d} {c['top1']:8d} {c['top3']:8d} {c['top10']:8d} "
            f"{c['top1_strict']:8d} {c['top3_strict']:8d} {c['filing_top1']:8d}"
        )
    print(
        "\nper question: rank of the first gold page (strict), of the target filing; the filer's period; "
        "the question's period keys read in the calendar year (docmeta.period_keys); the first hit"
    )
    for r in rows:
        ranks = f"rank {r['rank']!s:>4s} ({r['rank_strict']!s:>4s}) filing {r['rank_filing']!s:>4s}"
        keys = ",".join(r["question_period_keys"])
        print(
            f"{r['id']} {r['phrasing']:18s} {ranks}  {r['fiscal_period']:>7s} read as {keys}  "
            f"top1 {r['top'][0] if r['top'] else '-'}"
        )
    if meta:
        print("\ndocmeta.json beside the filings' own periods (filer_period: how the filer labels it)")
        for m in meta:
            flag = "" if m["agrees"] else "   <-- differs"
            print(
                f"  {m['doc_name']:28s} {m['filer_period']:>7s} (ends {m['period_end']})  "
                f"docmeta {m['docmeta_periods']} {m['docmeta_types']} "
                f"year end {m['docmeta_fiscal_year_end']} named by {m['docmeta_fiscal_year_name']}{flag}"
            )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", default=str(QUESTIONS), help="the question file (default %(default)s)")
    ap.add_argument("--index", default=None, help="index folder, reused when it holds these filings "
                    "(default $AETHEL_CACHE/fiscal_dates/index)")  # fmt: skip
    ap.add_argument("--rebuild", action="store_true", help="rebuild the index even if --index holds one")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="JSON result (default %(default)s)")
    ap.add_argument("--n-process", type=int, default=1, help="spaCy worker processes for aethel index")
    ap.add_argument("--method", default=METHOD, help="the search method measured (default %(default)s)")
    ap.add_argument(
        "--label", default=None, help="a name for the code measured, kept in the JSON (e.g. a commit)"
    )
    args = ap.parse_args(argv)

    questions = load_questions(Path(args.questions))
    pages_file = data_file("financebench", "pages.jsonl.gz")
    code = Path(aethel_lite.__file__).resolve().parents[1]
    env = {**os.environ, "AETHEL_CACHE": str(cache_dir().resolve())}
    env["PYTHONPATH"] = os.pathsep.join([str(code), *filter(None, [os.environ.get("PYTHONPATH")])])
    index = Path(args.index).resolve() if args.index else cache_dir("fiscal_dates").resolve() / "index"
    name_of = {oid: name for name, oid in opaque_ids(FILINGS).items()}
    v = versions()
    print(
        f"# fiscal_dates  python {platform.python_version()}  aethel_lite {code}  cpus {os.cpu_count()}  "
        f"loadavg {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    print(f"questions: {len(questions)} ({args.questions}); filings: {len(FILINGS)}; index: {index}")

    have = index_documents(index)
    built = None
    if args.rebuild or have != set(name_of):
        if have is not None and not args.rebuild:
            raise SystemExit(
                f"{index}: an index of other documents; give --rebuild to replace it or another --index"
            )
        built = build_index(index, pages_file, env, args.n_process, args.method)
        print(f"indexed {built['n_filings']} filings, {built['n_pages']} pages in {built['seconds']} s")
    else:
        print("index reused (same filings)")

    with tempfile.TemporaryDirectory(prefix="fiscal-dates-q-") as tmp:
        qfile = Path(tmp) / "questions.txt"
        qfile.write_text("".join(q["question"] + "\n" for q in questions), encoding="utf-8")
        t0 = time.perf_counter()
        out = aethel(
            ["search", str(index), "--questions", str(qfile), "-k", str(K), "--method", args.method], env
        )
        search_seconds = time.perf_counter() - t0
    answers = [json.loads(line) for line in out.splitlines() if line.strip()]
    if len(answers) != len(questions):
        raise SystemExit(f"aethel search answered {len(answers)} of {len(questions)} questions")
    rows = score(questions, answers, name_of)
    summary = summarise(rows)
    meta = docmeta_check(index, name_of)
    print_report(summary, rows, meta)
    result = {
        "method": args.method,
        "k": K,
        "aethel_lite": str(code),
        "commit": _commit(code),
        "label": args.label,
        "questions": str(args.questions),
        "n_questions": len(questions),
        "phrasings": dict(Counter(q["phrasing"] for q in questions)),
        "filings": sorted(FILINGS),
        "index": str(index),
        "index_built": built,
        "search_seconds": round(search_seconds, 1),
        "summary": summary,
        "per_question": rows,
        "docmeta": meta,
        "versions": v,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, result)
    print(f"\nwrote {args.out}")
    return 0


def _commit(code: Path) -> str | None:
    """``git describe --always --dirty`` of the checkout the code came from, if it is one."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(code), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except OSError:
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None


if __name__ == "__main__":
    sys.exit(main())
