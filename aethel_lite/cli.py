"""The ``aethel`` command line (``eval``, ``index``, ``search``, ``data``, ``memo``): its flags, exit codes,
error lines and JSON output keys are a public interface."""

from __future__ import annotations

# The handler below must be in place before anything slow runs: ``_signal`` is built into the
# interpreter (importing it runs no Python code), and ``os`` and ``sys`` are loaded at start-up.
import _signal
import os
import sys


def _interrupted_while_starting(signum, frame):  # pragma: no cover - exercised in a subprocess
    """Until :func:`main` runs nothing has been done: a signal during the imports below ends the
    process at once with one line (not a traceback, nor swallowed by the import machinery)."""
    os.write(2, b"aethel: interrupted while starting; nothing was done\n")
    os._exit(128 + signum)


_STARTING: dict = {}  # signal -> the handler it had before the imports (restored by main)
if __name__ == "__main__" or os.path.basename(sys.argv[0] or "") == "aethel":  # the command, not an import
    for _sig in (_signal.SIGINT, _signal.SIGTERM):
        _STARTING[_sig] = _signal.signal(_sig, _interrupted_while_starting)
    if sys.argv[1:2] == ["search"]:
        # A search encodes one question at a time: OpenBLAS's and ONNX Runtime's worker threads cost
        # more to start and spin than they save (benchmarks/README.md); a value set by the caller is kept.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        os.environ.setdefault("AETHEL_ONNX_THREADS", "1")
        # spaCy loads in another process while this one starts (core.ner_process)
        from .core import ner_process

        ner_process.warm_up()

import argparse  # noqa: E402
import errno  # noqa: E402
import json  # noqa: E402
import signal  # noqa: E402
import sqlite3  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence
from pathlib import Path

from . import __version__  # noqa: E402
from .caching.versions import versions
from .cli_checks import (
    StdoutError,
    check_dataset_target,
    check_eval_args,
    check_flags,
    check_memo_outputs,
    flush_stdout,
    prints_result,
)
from .data import download
from .data.paths import data_root
from .data.sampling import sample_corpus
from .data.select import FORMATS, load_for_eval
from .data.synthetic import make_synthetic
from .errors import AethelError, DataError, DataNotFoundError, ParameterError, check_k
from .evaluation.runner import RUN_DEPTH, run_methods, score_runs, write_trec_runs
from .io import atomic_write, write_json
from .retrievers.cluster import SCHEDULER_ENV, cluster_options, precompute_methods
from .retrievers.registry import known_methods, parse_methods
from .search.atomic import index_identity, index_state, interrupt_handlers
from .search.index import Terminated, build_index, method_parts, open_index
from .search.reader import matched
from .swarm import OpenAICompatibleGenerator, Orchestrator, write_findings
from .swarm.indexed import check_target, index_orchestrator


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


def cmd_index(args: argparse.Namespace) -> int:
    """``aethel index``: build, rebuild or ``--add`` to an index; Ctrl-C / SIGTERM (exit 130 / 143) leave
    the previous one intact."""
    methods = (
        args.methods.split(",")
        if args.methods is not None
        else (None if args.add else ["bm25", "aethel-bct"])
    )
    log = None if args.quiet else (lambda msg: print(f"aethel: {msg}", file=sys.stderr))
    where = Path(os.path.realpath(args.out)) if str(args.out).strip() else None
    before = index_identity(where) if where is not None else None
    with interrupt_handlers():
        try:
            info = build_index(
                args.paths,
                args.out,
                methods=methods,
                chunk_words=args.chunk_words,
                progress=not args.quiet,
                add=args.add,
                force=args.force,
                follow_symlinks=args.follow_symlinks,
                n_process=args.n_process,
                log=log,
                scheduler=args.scheduler,
                workers=args.workers,
            )
            print(json.dumps(info, indent=2, sort_keys=True))
        except (KeyboardInterrupt, Terminated) as exc:
            # what the folder holds now decides the message, not how far the code got
            state = index_state(where, before) if where is not None else "none"
            print(f"aethel: interrupted; {INTERRUPTED_NOTES[state]}", file=sys.stderr)
            return 143 if isinstance(exc, Terminated) else 130
    return 0


#: the line after an interrupted ``aethel index``, by :func:`~aethel_lite.search.atomic.index_state`
INTERRUPTED_NOTES = {
    "kept": "previous index kept",
    "none": "no index written",
    "complete": "the new index was already complete and is in place",
}


def _print_hits(hits: list) -> None:
    for hit in hits:
        page = hit.get(
            "page"
        )  # 0-based from a PDF; a passage file's meta may give any value (shown as given)
        page = page + 1 if isinstance(page, int) and not isinstance(page, bool) else page
        where = hit["doc_id"] + (f", page {page}" if page is not None else "")
        print(f"{hit['rank']:>2}. [{hit['score']:.4f}] {where}  ({hit['pid']})")
        if hit.get("source"):
            print(f"      source: {hit['source']}")
        for prov in hit.get("provenance", [])[:3]:
            print(f"      via {prov['seed']!r} -> {prov['entity']!r} ({prov['via']}, w={prov['weight']:.2f})")
        if "explain" in hit:
            shares = hit["explain"]
            total = sum(e["share"] for e in shares)
            if not shares:
                print(
                    "      explain: no share from an entity seed (not ranked by the entity graph's PageRank)"
                )
            else:
                whose = (
                    "its document node's PageRank" if hit.get("explain_node") == "document" else "PageRank"
                )
                print(f"      explain: {whose} {total:.6f} = sum of the seeds' shares")
            for e in shares[:8]:
                print(
                    f"        {e['share']:.6f} ({e['share'] / total:6.1%})  {e['seed']!r} -> {e['entity']!r} ({e['via']})"
                )
            if len(shares) > 8:
                print(
                    f"        ... {len(shares) - 8} more seeds, {sum(e['share'] for e in shares[8:]):.6f} together"
                )
        snippet = " ".join(hit["text"][:2000].split())[:240]
        print(f"      {snippet}")


def _read_questions(path: str) -> list[tuple[int, str]]:
    """(line number, question) of every non-blank line of ``path`` (``-``: standard input)."""
    try:
        lines = (sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")).splitlines()
    except FileNotFoundError:
        raise DataNotFoundError(f"--questions {path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"--questions {path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise DataError(f"--questions {path}: cannot read ({exc.strerror or exc})") from None
    out = [(i, line.strip()) for i, line in enumerate(lines, start=1) if line.strip()]
    if not out:
        raise ParameterError(f"--questions {path}: no questions (one per line)")
    return out


def cmd_search(args: argparse.Namespace) -> int:
    """``aethel search``: load a verified index once and answer one question or a file of them."""
    if (args.question is None) == (args.questions is None):
        raise ParameterError("give either a QUESTION or --questions FILE (one question per line)")
    check_k(args.k, "-k")
    method_parts(args.method)  # unknown method: a clear error before anything is loaded
    if args.question is not None and not args.question.strip():
        raise ParameterError("question: empty question")
    numbered = [(None, args.question)] if args.question is not None else _read_questions(args.questions)
    questions = [q for _, q in numbered]
    index = open_index(args.index, args.method, questions)  # a graph method's NER tags them meanwhile
    # a hybrid's seed-source shares (one PageRank solve per source) only where they are shown: JSON and --explain
    sources = bool(args.json or args.explain or args.questions is not None)
    answers = index.iter_search(
        questions, k=args.k, method=args.method, explain=args.explain, sources=sources
    )
    if args.questions is not None:  # JSONL: one line per question, written as it is answered
        for (line, question), hits in zip(numbered, answers):
            print(
                json.dumps(
                    {
                        "line": line,
                        "question": question,
                        "method": args.method,
                        "hits": hits,
                        "matched": matched(question, hits),
                    },
                    ensure_ascii=False,
                ),
                flush=True,
            )
        return 0
    hits = next(answers)
    found = matched(args.question, hits)
    if args.json:
        print(
            json.dumps(
                {"question": args.question, "method": args.method, "hits": hits, "matched": found},
                indent=2,
                ensure_ascii=False,
            )
        )
        return 0
    if not found:
        print(
            "No passage matched the question (none holds one of its words); the hits below are not answers."
        )
    _print_hits(hits)
    return 0


def cmd_data(args: argparse.Namespace) -> int:
    if args.action == "download":
        download.download_data(args.dest, progress=not args.quiet)
    else:
        report = download.verify_data(args.dest)
        print(json.dumps(report, indent=2, sort_keys=True))
        if any(v != "ok" for v in report.values()):
            return 1
    return 0


def cmd_memo(args: argparse.Namespace) -> int:
    """``aethel memo``: resolve the target, run the specialist swarm on a data set (``--format``) or an
    index of the user's files (``--index``), write the memo (and findings)."""
    check_k(args.k, "--k")
    if (args.format is None) == (args.index is None):
        raise ParameterError(
            "give either --format synthetic|financebench or --index FOLDER (an `aethel index` folder)"
        )
    if args.contradictions < 0:
        raise ParameterError(f"--contradictions must be ≥ 0, got {args.contradictions}")
    check_memo_outputs(args)
    generator = (
        OpenAICompatibleGenerator(
            args.generator_url, model=args.generator_model, timeout=args.generator_timeout
        )
        if args.generator_url
        else None
    )
    t0 = time.perf_counter()
    if args.index is not None:
        orchestrator = index_orchestrator(args.index, k=args.k, generator=generator, progress=not args.quiet)
        check_target(orchestrator, args.target)  # unknown: the index's companies, closest first
    else:
        if args.format == "synthetic":
            dataset = make_synthetic(n_passages=args.size, seed=args.seed, contradictions=args.contradictions)
            print("NOTE: the built-in SYNTHETIC private-equity corpus, not real data.", file=sys.stderr)
        else:
            dataset = load_for_eval("financebench", args.data)
        orchestrator = Orchestrator.from_dataset(
            dataset, k=args.k, generator=generator, progress=not args.quiet
        ).fit(dataset.passages)
        check_dataset_target(orchestrator, dataset, args)
    t1 = time.perf_counter()
    result = orchestrator.run(args.target)
    memo = result.memo
    with atomic_write(args.out) as fh:
        fh.write(memo.markdown)
    if args.findings:
        write_findings(args.findings, result.findings + result.conflicts)
    if not args.quiet:
        what = (
            f"{len(result.facts)} facts, {len(result.findings) - len(result.facts)} topics, "
            f"{len(result.conflicts)} conflicts"
            if memo.found
            else "no evidence found"
        )
        print(
            f"{result.target.name}: {what}; index {t1 - t0:.1f} s, memo {time.perf_counter() - t1:.1f} s; "
            f"wrote {args.out}" + (f" and {args.findings}" if args.findings else ""),
            file=sys.stderr,
        )
        if memo.generator_error:
            print(f"text generator not used: {memo.generator_error}", file=sys.stderr)
    return 0


def _add_cluster_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="entity extraction and encoding on this Dask scheduler "
        f"(default: ${SCHEDULER_ENV}); results equal the in-process run",
    )
    parser.add_argument(
        "--workers", type=int, metavar="N", help="the same on a local Dask cluster of N worker processes"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aethel", description="aethel-lite: graph retrieval (entity graph + Personalized PageRank + BCT)"
    )
    parser.add_argument("--version", action="version", version=f"aethel-lite {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser("eval", help="score retrieval methods on a data set; write a JSON result")
    ev.add_argument("--data", help="data file or folder (default: $AETHEL_DATA)")
    ev.add_argument("--format", required=True, choices=FORMATS)
    ev.add_argument(
        "--setting",
        choices=("closed", "open"),
        help="closed: rank each query's pool; open: the whole corpus (default: closed if every query has a pool)",
    )
    ev.add_argument("--methods", help=f"comma-separated, from: {','.join(known_methods())}")
    ev.add_argument("--k", type=int, default=5, help="cut-off for HR/AllSupport/Recall (default 5)")
    ev.add_argument("--limit", type=int, help="first N queries only")
    ev.add_argument(
        "--seed", type=int, help="seed of the synthetic corpus and of --corpus-size sampling (default 0)"
    )
    ev.add_argument("--size", type=int, help="synthetic corpus size in passages (default 1000)")
    ev.add_argument(
        "--docs",
        choices=("question", "all"),
        help="financebench: the filings asked about (default), or all 344",
    )
    ev.add_argument(
        "--granularity",
        choices=("page", "chunk"),
        help="financebench: rank pages (default) or ~200-word chunks",
    )
    ev.add_argument(
        "--chunk-words", type=int, help="financebench, --granularity chunk: words per chunk (default 200)"
    )
    ev.add_argument(
        "--distractors",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="2wiki, --setting open: add the 6,119-paragraph distractor corpus (default: when present)",
    )
    ev.add_argument(
        "--own-files",
        action="store_true",
        default=None,
        help="financebench: hide what the data set says about each filing (opaque document ids, no titles, "
        "no company/period/type), as a folder of your own PDFs would give it",
    )
    ev.add_argument(
        "--corpus-size",
        type=int,
        help="--setting open: sample the corpus to N passages, every gold passage kept (seeded by --seed)",
    )
    ev.add_argument(
        "--depth",
        type=int,
        default=RUN_DEPTH,
        help=f"passages ranked per query; MRR is over this run (default {RUN_DEPTH})",
    )
    ev.add_argument(
        "--n-process",
        type=int,
        default=1,
        help="spaCy worker processes for entity extraction (default 1; results do not depend on it)",
    )
    ev.add_argument(
        "--trec-out", help="folder for each method's run (<method>.trec) and the qrels (qrels.txt)"
    )
    ev.add_argument(
        "--out",
        required=True,
        help="result JSON path (an existing file that is not an aethel eval result is kept unless --force)",
    )
    ev.add_argument(
        "--force", action="store_true", help="replace --out even if it is not a result aethel eval wrote"
    )
    _add_cluster_flags(ev)
    ev.add_argument("--quiet", action="store_true")
    ev.set_defaults(func=cmd_eval)

    ix = sub.add_parser(
        "index",
        help="index .txt/.md/.pdf files or folders (or .jsonl passage files)",
        description="Build an index folder that `aethel search` loads without refitting. Safe to "
        "interrupt: the previous index stays as it was until the new one is complete.",
    )
    ix.add_argument(
        "paths", nargs="+", help="files (.txt, .md, .pdf, .jsonl passages) and folders (walked recursively)"
    )
    ix.add_argument("--out", required=True, help="index folder")
    ix.add_argument(
        "--methods",
        default=None,
        help="retrievers to build (default bm25,aethel-bct; with --add: the index's)",
    )
    ix.add_argument(
        "--chunk-words", type=int, default=None, help="split pages/paragraphs into windows of this many words"
    )
    ix.add_argument(
        "--add",
        action="store_true",
        help="add the files to the existing index at --out (new documents "
        "appended, changed ones replaced; other passages are not re-processed and keep their ids)",
    )
    ix.add_argument(
        "--force",
        action="store_true",
        help="replace --out even if it holds files that are not an index (they are deleted)",
    )
    ix.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="follow symbolic links that lead out of the folders given",
    )
    ix.add_argument(
        "--n-process", type=int, default=1, help="spaCy worker processes for entity extraction (default 1)"
    )
    _add_cluster_flags(ix)
    ix.add_argument("--quiet", action="store_true")
    ix.set_defaults(func=cmd_index)

    se = sub.add_parser("search", help="search an index built by `aethel index`")
    se.add_argument("index")
    se.add_argument("question", nargs="?", default=None)
    se.add_argument("-k", "--k", type=int, default=5)
    se.add_argument("--method", default="aethel-bct")
    se.add_argument("--json", action="store_true", default=None, help="print JSON (one QUESTION)")
    se.add_argument(
        "--explain",
        action="store_true",
        help='per hit, the exact share of its PageRank that each seed contributes (JSON: "explain")',
    )
    se.add_argument(
        "--questions",
        metavar="FILE",
        default=None,
        help="answer every line of FILE ('-': standard input) after one load; prints JSONL, one line per question",
    )
    se.set_defaults(func=cmd_search)

    da = sub.add_parser("data", help="download or verify the public evaluation data")
    da.add_argument("action", choices=("download", "verify"))
    da.add_argument("--dest", default=None, help="data folder (default: $AETHEL_DATA or ./data)")
    da.add_argument("--quiet", action="store_true")
    da.set_defaults(func=cmd_data)

    me = sub.add_parser(
        "memo",
        help="investment-committee memo for one fund, GP or company (every figure audited)",
        description="Write the specialist swarm's memo on a data set (--format) or on your own files "
        "indexed by `aethel index` (--index; every figure cites file and page).",
    )
    me.add_argument("--data", help="--format financebench: the data folder (default: $AETHEL_DATA)")
    me.add_argument("--format", choices=("synthetic", "financebench"), help="a data set (or give --index)")
    me.add_argument(
        "--index",
        metavar="FOLDER",
        help="an index built by `aethel index` with a graph method on spaCy "
        "NER (the default bm25,aethel-bct has it); the target is one of its documents' companies",
    )
    me.add_argument("--target", required=True, help="the fund, GP or company, by any of its names")
    me.add_argument(
        "--out",
        required=True,
        help="memo Markdown path (an existing file that is not a memo is kept unless --force)",
    )
    me.add_argument(
        "--force",
        action="store_true",
        help="replace --out / --findings even if they are not files aethel memo wrote",
    )
    me.add_argument("--findings", help="also write the findings as a JSON list of records")
    me.add_argument("--k", type=int, default=10, help="passages per metric or topic query (default 10)")
    me.add_argument("--size", type=int, help="synthetic corpus size in passages (default 1000)")
    me.add_argument("--seed", type=int, help="seed of the synthetic corpus (default 0)")
    me.add_argument(
        "--contradictions", type=int, help="synthetic: plant N stale or misprinted figures (default 0)"
    )
    me.add_argument(
        "--generator-url", help="OpenAI-compatible endpoint that rewrites the summary prose (optional)"
    )
    me.add_argument("--generator-model", help="model name sent to the generator (default 'default')")
    me.add_argument("--generator-timeout", type=float, help="seconds to wait for the generator (default 30)")
    me.add_argument("--quiet", action="store_true")
    me.set_defaults(func=cmd_memo)
    return parser


#: environment variable: ``AETHEL_DEBUG=1`` lets an unexpected error end in its Python traceback
DEBUG_ENV = "AETHEL_DEBUG"


def _describe(exc: BaseException, args: argparse.Namespace | None = None) -> str:
    """One line for an error the commands do not turn into an :class:`AethelError` themselves."""
    if isinstance(exc, OSError):
        where = exc.filename
        what = exc.strerror or str(exc)
        if exc.errno == errno.ENOSPC and where is None:
            outputs = [str(v) for k in ("out", "findings", "trec_out") if (v := getattr(args, k, None))]
            outputs += ["standard output"] if args is not None and prints_result(args) else []
            cache = os.environ.get("AETHEL_CACHE") or "the default cache folder"
            return f"{what} (writing {' or '.join(outputs + [f'the cache {cache}'])})"
        return (
            f"{where}: {what}" + (f" (and {exc.filename2})" if exc.filename2 else "")
            if where is not None
            else what
        )
    if isinstance(exc, sqlite3.Error):
        return f"the cache ({os.environ.get('AETHEL_CACHE') or 'the default cache folder'}): {exc}"
    return f"{type(exc).__name__}: {exc}"


def _quiet_broken_pipe() -> None:
    """The reader of stdout went away (``aethel search ... | head -1``): send the rest nowhere."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass  # not a real file descriptor (captured output): nothing more will be flushed to it


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``aethel`` command; return its exit code.

    Every failure is one line on stderr and a non-zero code: 2 a clear error (a bad parameter or
    input, named), 1 an unexpected one (its Python traceback with ``AETHEL_DEBUG=1``), 130/143
    interrupted by SIGINT/SIGTERM, 141 stdout closed by its reader (a broken pipe, quietly).
    """
    args = build_parser().parse_args(argv)
    if getattr(args, "dest", "unset") is None:
        args.dest = str(data_root())
    # Nothing has been done until the command runs: until here a signal is the starting handler's one line.
    for sig, handler in _STARTING.items():
        if signal.getsignal(sig) is _interrupted_while_starting:
            signal.signal(sig, handler)
    try:
        check_flags(args)  # a flag that does not apply: one line, before any work
        if prints_result(args) and sys.stdout is None:
            raise ParameterError(
                f"standard output is closed, and aethel {args.command} prints its result there; "
                "redirect it to a file or /dev/null instead of closing it"
            )
        status = int(args.func(args) or 0)
        flush_stdout()
        return status
    except AethelError as exc:
        print(f"aethel: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        _quiet_broken_pipe()
        return 141
    except StdoutError as exc:
        print(f"aethel: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("aethel: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("aethel: terminated", file=sys.stderr)
        return 143
    except Exception as exc:  # noqa: BLE001 - one line instead of a traceback; AETHEL_DEBUG=1 shows it
        if os.environ.get(DEBUG_ENV) == "1":
            raise
        print(f"aethel: error: {_describe(exc, args)} (AETHEL_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1


def run(argv: Sequence[str] | None = None) -> None:
    """The ``aethel`` command: :func:`main`, then exit with its status; a signal arriving after main
    has returned (its work done and reported) is ignored rather than turning success into exit -2."""
    status = main(argv)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    sys.exit(status)


if __name__ == "__main__":  # pragma: no cover
    run()
