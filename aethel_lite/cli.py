"""The ``aethel`` command line (``eval``, ``index``, ``search``, ``data``, ``memo``): its flags, exit codes,
error lines and JSON output keys are a public interface.

This module holds the parser (every command's flags and help) and :func:`main`; each command's work is
in a module of its own (``cli_eval``, ``cli_index``, ``cli_search``, ``cli_data``, ``cli_memo``), which
:func:`main` imports for the one command that runs (:data:`COMMANDS`)."""

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
        # spaCy loads in another process while this one starts, begun before any import of the package
        # but the one that starts it (core.ner_start: the standard library only); core.ner_process keeps it
        from .core.ner_start import spawn

        _tagger = spawn()
        from .core import ner_process

        ner_process.warm_up(process=_tagger)

import argparse  # noqa: E402
import errno  # noqa: E402
import importlib  # noqa: E402
import signal  # noqa: E402
import sqlite3  # noqa: E402
from collections.abc import Callable, Sequence

from . import __version__  # noqa: E402
from .cli_checks import StdoutError, check_flags, flush_stdout, prints_result
from .data.paths import data_root
from .data.runs import RUN_DEPTH
from .data.select import FORMATS
from .errors import AethelError, ParameterError
from .retrievers.registry import DEFAULT_METHOD, SUMMARIES, known_methods
from .search.atomic import Terminated

#: the module that holds each command's function ``cmd_<command>``. :func:`main` imports only the one
#: of the command that runs (a command table, as pip's ``commands/__init__.py`` with its ``commands_dict``;
#: the package allows no import of its own modules inside a function), so ``aethel search`` loads neither
#: the index builder nor the evaluation, the cluster or the swarm. The parser stays here, whole:
#: ``aethel --help`` and every command's flags need no command module.
COMMANDS = {
    "eval": "aethel_lite.cli_eval",
    "index": "aethel_lite.cli_index",
    "search": "aethel_lite.cli_search",
    "data": "aethel_lite.cli_data",
    "memo": "aethel_lite.cli_memo",
}

#: environment variable with a Dask scheduler's address; the same name as
#: :data:`aethel_lite.evaluation.cluster.SCHEDULER_ENV` (a test keeps the two equal), written out here
#: so that the parser does not import the cluster module
SCHEDULER_ENV = "AETHEL_SCHEDULER"


def command_function(command: str) -> Callable[[argparse.Namespace], int]:
    """The function that runs ``aethel <command>``: ``cmd_<command>`` of its module in :data:`COMMANDS`,
    imported now (with its dependencies) if it was not yet.

    Parameters
    ----------
    command : str
        A key of :data:`COMMANDS` (the parser accepts no other).

    Returns
    -------
    callable
        Takes the parsed arguments and returns the exit status.
    """
    return getattr(importlib.import_module(COMMANDS[command]), f"cmd_{command}")


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
        help=f"retrievers to build, comma-separated (default {DEFAULT_METHOD}: BM25, the entity graph, dense "
        "vectors, document metadata and statement pages; with --add: the index's)",
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
    ix.add_argument(
        "--json", action="store_true", help="print the index's summary as JSON (default: a short summary)"
    )
    ix.add_argument("--quiet", action="store_true")

    width = max(map(len, SUMMARIES))
    se = sub.add_parser(
        "search",
        help="search an index built by `aethel index`",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="methods (--method; an index answers those it was built for, `aethel index --methods`):\n"
        + "\n".join(f"  {name:<{width}}  {SUMMARIES[name]}" for name in known_methods()),
    )
    se.add_argument("index", help="the index folder (`aethel index ... --out FOLDER`)")
    se.add_argument("question", nargs="?", default=None, help="the question (or --questions FILE)")
    se.add_argument("-k", "--k", type=int, default=5, help="hits per question (default 5)")
    se.add_argument(
        "--method",
        default=DEFAULT_METHOD,
        help=f"the retrieval method (default {DEFAULT_METHOD}; listed below)",
    )
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
    filters = se.add_argument_group(
        "filters",
        "restrict the search to documents, before ranking (as the index's document metadata names them)",
    )
    filters.add_argument("--company", metavar="NAME", help="a company, by any of its names or its ticker")
    filters.add_argument(
        "--year", metavar="YYYY", help="a fiscal year as the filer names it, e.g. 2023 or FY2023"
    )
    filters.add_argument(
        "--period", metavar="PERIOD", help="a fiscal quarter, e.g. Q3 or 2023q3, or FY for annual"
    )
    filters.add_argument("--form", metavar="FORM", help="a filing type: 10-K, 10-Q, 8-K, 20-F or earnings")
    filters.add_argument("--doc", metavar="DOC_ID", help="one document, by its doc_id (or file name)")

    da = sub.add_parser("data", help="download or verify the public evaluation data")
    da.add_argument("action", choices=("download", "verify"))
    da.add_argument("--dest", default=None, help="data folder (default: $AETHEL_DATA or ./data)")
    da.add_argument("--quiet", action="store_true")

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
        f"NER (the default {DEFAULT_METHOD} has it); the target is one of its documents' companies",
    )
    me.add_argument(
        "--target", required=True, help="the fund, GP or company, by any of its names or its ticker"
    )
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
    # a fault of the program, not of the input: say so; the class and message stay for the report
    return f"internal error ({type(exc).__name__}: {exc}); please report it with the command you ran"


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
    # the command's own modules only (COMMANDS), imported while a signal is still the starting handler's line
    run_command = command_function(args.command)
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
        status = int(run_command(args) or 0)
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
