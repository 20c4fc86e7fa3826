"""The ``aethel`` command line: a stable way to run the method from a shell.

Commands (their flags and JSON output keys are a public interface; keep them working):

``aethel eval``    score retrieval methods on a data set, write a JSON result file
``aethel index``   index your own .txt/.md/.pdf files (passages, entity graph, BM25)
``aethel search``  query an index; ranked passages with document, page and provenance
``aethel data``    download / verify the public evaluation data
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from .errors import AethelError, ParameterError

from .experiment import FORMATS


# ------------------------------------------------------------------------------------------ eval
def cmd_eval(args: argparse.Namespace) -> int:
    from .experiment import load_for_eval, parse_methods, run_methods, score_runs, versions
    from .io import write_json

    if args.k < 1:
        raise ParameterError(f"--k must be ≥ 1, got {args.k}")
    methods = parse_methods(args.methods)
    t0 = time.perf_counter()
    dataset = load_for_eval(args.format, args.data, seed=args.seed, size=args.size, docs=args.docs)
    setting = args.setting or ("closed" if all(q.pool is not None for q in dataset.queries) and dataset.queries else "open")
    if args.limit is not None:
        dataset = dataset.subset(limit=args.limit, keep_all_passages=(setting == "open"))
    if not dataset.queries:
        raise ParameterError(f"{dataset.name}: no queries to evaluate")
    if dataset.meta.get("synthetic"):
        print("NOTE: running on the built-in SYNTHETIC private-equity corpus, not real data.", file=sys.stderr)
    print(f"{dataset.name}: {len(dataset.passages)} passages, {len(dataset.queries)} queries, setting={setting}", file=sys.stderr)
    depth = max(10, args.k)
    outcomes = run_methods(dataset, methods, setting=setting, k=depth, progress=not args.quiet,
                           log=None if args.quiet else (lambda m: print(m, file=sys.stderr)))
    result = {
        "dataset": dataset.name,
        "setting": setting,
        "n_queries": len(dataset.queries),
        "n_passages": len(dataset.passages),
        "k": args.k,
        "methods": score_runs(outcomes, dataset.queries, k=args.k, depth=10),
        "config": {"format": args.format, "data": args.data, "methods": methods, "k": args.k, "limit": args.limit,
                   "seed": args.seed, "size": args.size if args.format == "synthetic" else None, "docs": args.docs},
        "versions": versions(),
        "timing": {name: round(o.seconds, 3) for name, o in outcomes.items()},
        "seconds": round(time.perf_counter() - t0, 3),
    }
    write_json(args.out, result)
    if not args.quiet:
        for name, entry in result["methods"].items():
            cells = "  ".join(f"{m}={entry[m]:.3f}" for m in entry if m not in ("per_query", "per_query_metrics"))
            print(f"{name:>12}  {cells}", file=sys.stderr)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


# ----------------------------------------------------------------------------------- index/search
def cmd_index(args: argparse.Namespace) -> int:
    from .index import build_index

    info = build_index(args.paths, args.out, methods=args.methods.split(","), chunk_words=args.chunk_words, progress=not args.quiet)
    print(json.dumps(info, indent=2, sort_keys=True))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from .index import search_index

    hits = search_index(args.index, args.question, k=args.k, method=args.method)
    if args.json:
        print(json.dumps({"question": args.question, "method": args.method, "hits": hits}, indent=2, ensure_ascii=False))
        return 0
    for hit in hits:
        where = hit["doc_id"] + (f", page {hit['page'] + 1}" if hit.get("page") is not None else "")
        print(f"{hit['rank']:>2}. [{hit['score']:.4f}] {where}  ({hit['pid']})")
        for prov in hit.get("provenance", [])[:3]:
            print(f"      via {prov['seed']!r} -> {prov['entity']!r} ({prov['via']}, w={prov['weight']:.2f})")
        snippet = " ".join(hit["text"].split())[:240]
        print(f"      {snippet}")
    return 0


# ------------------------------------------------------------------------------------------- data
def cmd_data(args: argparse.Namespace) -> int:
    from .data import download

    if args.action == "download":
        download.download_data(args.dest, progress=not args.quiet)
    else:
        report = download.verify_data(args.dest)
        print(json.dumps(report, indent=2, sort_keys=True))
        if any(v != "ok" for v in report.values()):
            return 1
    return 0


# ----------------------------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="aethel", description="aethel-lite: graph retrieval (entity graph + Personalized PageRank + BCT)")
    parser.add_argument("--version", action="version", version=f"aethel-lite {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser("eval", help="score retrieval methods on a data set; write a JSON result")
    ev.add_argument("--data", help="data file or folder (default: $AETHEL_DATA)")
    ev.add_argument("--format", required=True, choices=FORMATS)
    ev.add_argument("--setting", choices=("closed", "open"), help="closed: rank each query's pool; open: the whole corpus (default: closed if every query has a pool)")
    ev.add_argument("--methods", help="comma-separated: bm25,dense,aethel-reg,aethel-ner,aethel-ner3,aethel-bct,rrf,rrf-bct")
    ev.add_argument("--k", type=int, default=5, help="cut-off for HR/AllSupport/Recall (default 5)")
    ev.add_argument("--limit", type=int, help="first N queries only")
    ev.add_argument("--seed", type=int, default=0)
    ev.add_argument("--size", type=int, default=1000, help="synthetic corpus size in passages")
    ev.add_argument("--docs", choices=("question", "all"), default="question", help="financebench: filings asked about, or all 344")
    ev.add_argument("--out", required=True, help="result JSON path")
    ev.add_argument("--quiet", action="store_true")
    ev.set_defaults(func=cmd_eval)

    ix = sub.add_parser("index", help="index .txt/.md/.pdf files or folders")
    ix.add_argument("paths", nargs="+")
    ix.add_argument("--out", required=True, help="index folder")
    ix.add_argument("--methods", default="bm25,aethel-bct", help="retrievers to build (default bm25,aethel-bct)")
    ix.add_argument("--chunk-words", type=int, default=None, help="split pages/paragraphs into windows of this many words")
    ix.add_argument("--quiet", action="store_true")
    ix.set_defaults(func=cmd_index)

    se = sub.add_parser("search", help="search an index built by `aethel index`")
    se.add_argument("index")
    se.add_argument("question")
    se.add_argument("-k", "--k", type=int, default=5)
    se.add_argument("--method", default="aethel-bct")
    se.add_argument("--json", action="store_true", help="print JSON")
    se.set_defaults(func=cmd_search)

    da = sub.add_parser("data", help="download or verify the public evaluation data")
    da.add_argument("action", choices=("download", "verify"))
    da.add_argument("--dest", default=None, help="data folder (default: $AETHEL_DATA or ./data)")
    da.add_argument("--quiet", action="store_true")
    da.set_defaults(func=cmd_data)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "dest", "unset") is None:
        from .data.paths import data_root

        args.dest = str(data_root())
    try:
        return int(args.func(args) or 0)
    except AethelError as exc:
        print(f"aethel: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
