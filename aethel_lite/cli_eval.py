"""``aethel eval``: score retrieval methods on a data set and write a JSON result.

Reached through :data:`aethel_lite.cli.COMMANDS`, so only ``aethel eval`` imports the evaluation runner
and the Dask cluster options.
"""

from __future__ import annotations

import argparse
import sys
import time

from .caching.versions import versions
from .cli_checks import check_eval_args
from .data.sampling import sample_corpus
from .data.select import load_for_eval
from .errors import ParameterError
from .evaluation.cluster import cluster_options, precompute_methods
from .evaluation.runner import run_methods, score_runs, write_trec_runs
from .io import write_json
from .retrievers.registry import parse_methods

__all__ = ["CORPUS_KEYS", "cmd_eval", "eval_dataset"]


def eval_dataset(args: argparse.Namespace):
    """The data set ``aethel eval`` scores and its setting: loaded, cut to ``--limit`` queries, then
    sampled to ``--corpus-size`` passages (every gold passage of those queries kept)."""
    dataset = load_for_eval(
        args.format,
        args.data,
        setting=args.setting,
        seed=args.seed,
        size=args.size,
        docs=args.docs,
        granularity=args.granularity or "page",
        chunk_words=args.chunk_words or 200,
        distractors=args.distractors,
        own_files=args.own_files,
    )
    setting = args.setting or (
        "closed" if all(q.pool is not None for q in dataset.queries) and dataset.queries else "open"
    )
    if args.corpus_size is not None and setting != "open":
        raise ParameterError(
            f"--corpus-size needs --setting open ({args.format} defaults to its closed pools)"
        )
    if args.limit is not None:
        dataset = dataset.subset(limit=args.limit, keep_all_passages=(setting == "open"))
    if not dataset.queries:
        raise ParameterError(f"{dataset.name}: no queries to evaluate")
    if args.corpus_size is not None:
        try:
            dataset = sample_corpus(dataset, args.corpus_size, args.seed)
        except ParameterError as exc:
            raise ParameterError(f"--corpus-size: {exc}") from None
    return dataset, setting


#: ``dataset.meta`` entries copied into the ``corpus`` block of the ``aethel eval`` JSON
CORPUS_KEYS = (
    "duplicates_merged",
    "distractors",
    "n_distractors",
    "sample",
    "granularity",
    "chunk_words",
    "chunk_overlap",
    "own_files",
)


def cmd_eval(args: argparse.Namespace) -> int:
    """``aethel eval``: check the values and outputs, load the data set, run and score the methods, and
    write the result JSON (and, with ``--trec-out``, the runs)."""
    check_eval_args(args)
    cluster = cluster_options(
        args.scheduler, args.workers
    )  # None: no --scheduler, --workers, $AETHEL_SCHEDULER
    methods = parse_methods(args.methods)
    log = None if args.quiet else (lambda m: print(m, file=sys.stderr))
    t0 = time.perf_counter()
    dataset, setting = eval_dataset(args)
    if dataset.meta.get("synthetic"):
        print(
            "NOTE: running on the built-in SYNTHETIC private-equity corpus, not real data.", file=sys.stderr
        )
    print(
        f"{dataset.name}: {len(dataset.passages)} passages, {len(dataset.queries)} queries, setting={setting}",
        file=sys.stderr,
    )
    if (
        cluster is not None
    ):  # entity extraction and encoding on the cluster first; the fits find them in the stores
        precompute_methods(dataset.passages, methods, progress=not args.quiet, log=log, **cluster)
    outcomes = run_methods(
        dataset,
        methods,
        setting=setting,
        depth=args.depth,
        progress=not args.quiet,
        log=log,
        graph={"n_process": args.n_process},
    )
    result = {
        "dataset": dataset.name,
        "setting": setting,
        "n_queries": len(dataset.queries),
        "n_passages": len(dataset.passages),
        "k": args.k,
        "methods": score_runs(outcomes, dataset.queries, k=args.k, depth=10),
        "corpus": {key: dataset.meta[key] for key in CORPUS_KEYS if key in dataset.meta},
        "config": {
            "format": args.format,
            "data": args.data,
            "methods": methods,
            "k": args.k,
            "limit": args.limit,
            "seed": args.seed,
            "size": args.size if args.format == "synthetic" else None,
            "docs": args.docs if args.format == "financebench" else None,
            "setting": args.setting,
            "depth": args.depth,
            "corpus_size": args.corpus_size,
            "granularity": (args.granularity or "page") if args.format == "financebench" else None,
            "chunk_words": (args.chunk_words or 200) if args.granularity == "chunk" else None,
            "distractors": args.distractors,
            "own_files": args.own_files,
            "trec_out": args.trec_out,
            "n_process": args.n_process,
        },
        "versions": versions(),
        "timing": {name: round(o.seconds, 3) for name, o in outcomes.items()},
        "seconds": round(time.perf_counter() - t0, 3),
    }
    if args.trec_out is not None:
        write_trec_runs(outcomes, dataset.queries, args.trec_out)
    write_json(args.out, result)
    if not args.quiet:
        for name, entry in result["methods"].items():
            cells = "  ".join(
                f"{m}={entry[m]:.3f}" for m in entry if m not in ("per_query", "per_query_metrics")
            )
            print(f"{name:>16}  {cells}", file=sys.stderr)
        print(
            f"wrote {args.out}" + (f" and the runs in {args.trec_out}" if args.trec_out else ""),
            file=sys.stderr,
        )
    return 0
