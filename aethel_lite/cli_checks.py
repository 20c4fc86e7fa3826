"""What the ``aethel`` command line checks before any work. Which flag applies to which command, data
set (``--format``) and setting: one table (:data:`FLAG_RULES`), checked by :func:`check_flags` and
printed in the book's command-line page (book/cli.md) (:func:`flag_table_markdown`); the values of ``aethel eval`` (:func:`check_eval_args`);
the result files a command writes (never an input, a file it did not write, or another output); and
standard output (:func:`flush_stdout`). What only ``aethel memo`` checks (its files, its target) needs
the swarm and is in :mod:`aethel_lite.cli_memo`, so that the other commands do not import it.

A flag of the table is given when its value is not ``None`` (the parser's defaults are ``None``);
:func:`check_flags` then fills in the defaults the table holds, so a command sees its usual values.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .data.select import eval_inputs
from .errors import ParameterError, check_k
from .io import check_output_file

__all__ = [
    "PRINTS",
    "prints_result",
    "StdoutError",
    "flush_stdout",
    "check_eval_args",
    "refused_output",
    "FlagRule",
    "FLAG_RULES",
    "check_flags",
    "flag_table_markdown",
    "same_file",
    "check_distinct_outputs",
    "check_eval_outputs",
    "is_eval_result",
]


@dataclass(frozen=True)
class FlagRule:
    """One flag of one command and where it applies: to the data sets ``formats`` (None: all) and, if
    ``needs`` is set, only where ``test`` holds of the parsed arguments (``needs`` says it in words);
    ``default`` is its value when not given; ``shown`` names it in messages (a flag with its pair)."""

    command: str
    flag: str
    dest: str
    formats: tuple[str, ...] | None = None
    needs: str | None = None
    test: Callable[[argparse.Namespace], bool] | None = None
    default: Any = None
    shown: str | None = None


_FB, _SYN = ("financebench",), ("synthetic",)

#: every flag that applies to some data sets, settings or other flags only; the others apply everywhere
FLAG_RULES: tuple[FlagRule, ...] = (
    FlagRule("eval", "--docs", "docs", _FB, default="question"),
    FlagRule("eval", "--granularity", "granularity", _FB, shown="--granularity/--chunk-words"),
    FlagRule(
        "eval",
        "--chunk-words",
        "chunk_words",
        _FB,
        "--granularity chunk",
        lambda a: a.granularity == "chunk",
        shown="--granularity/--chunk-words",
    ),
    FlagRule("eval", "--own-files", "own_files", _FB, default=False),
    FlagRule(
        "eval",
        "--distractors",
        "distractors",
        ("2wiki",),
        "--setting open (a closed pool never ranks them; --no-distractors fits any setting)",
        lambda a: a.distractors is False or a.setting == "open",
        shown="--distractors/--no-distractors",
    ),
    FlagRule("eval", "--size", "size", _SYN, default=1000),
    FlagRule(
        "eval",
        "--corpus-size",
        "corpus_size",
        None,
        "--setting open (sampling the corpus breaks the closed pools)",
        lambda a: a.setting != "closed",
    ),
    FlagRule(
        "eval",
        "--seed",
        "seed",
        None,
        "--format synthetic or --corpus-size (it seeds the synthetic corpus and the sampling)",
        lambda a: a.format == "synthetic" or a.corpus_size is not None,
        default=0,
    ),
    FlagRule("memo", "--data", "data", _FB),
    FlagRule("memo", "--size", "size", _SYN, default=1000),
    FlagRule("memo", "--seed", "seed", _SYN, default=0),
    FlagRule("memo", "--contradictions", "contradictions", _SYN, default=0),
    FlagRule(
        "memo",
        "--generator-model",
        "generator_model",
        None,
        "--generator-url",
        lambda a: a.generator_url is not None,
        default="default",
    ),
    FlagRule(
        "memo",
        "--generator-timeout",
        "generator_timeout",
        None,
        "--generator-url",
        lambda a: a.generator_url is not None,
        default=30.0,
    ),
    FlagRule(
        "search",
        "--json",
        "json",
        None,
        "one QUESTION (--questions always prints JSON lines)",
        lambda a: a.questions is None,
        default=False,
    ),
)


def _problem(rule: FlagRule, args: argparse.Namespace) -> str | None:
    """Why ``rule``'s flag, given, does not apply to ``args`` (None: it applies)."""
    fmt = getattr(args, "format", None)
    if rule.formats is not None and fmt not in rule.formats:
        shown = rule.shown or rule.flag
        verb = "apply" if "/" in shown else "applies"
        what = fmt if fmt is not None else ("--index" if args.command == "memo" else "this command")
        return f"{shown} {verb} to --format {' / '.join(rule.formats)} only, not {what}"
    if rule.test is not None and not rule.test(args):
        flag = "--no-distractors" if rule.dest == "distractors" and args.distractors is False else rule.flag
        return f"{flag} needs {rule.needs}"
    return None


def check_flags(args: argparse.Namespace, rules: Sequence[FlagRule] = FLAG_RULES) -> None:
    """Refuse (ParameterError, exit 2) the first flag of ``args.command`` given where :data:`FLAG_RULES`
    says it does not apply, before any work; then fill in the defaults of the flags not given."""
    mine = [r for r in rules if r.command == args.command]
    for r in mine:
        if getattr(args, r.dest, None) is not None:
            problem = _problem(r, args)
            if problem is not None:
                raise ParameterError(problem)
    for r in mine:
        if getattr(args, r.dest, None) is None:
            setattr(args, r.dest, r.default)


def flag_table_markdown(rules: Sequence[FlagRule] = FLAG_RULES) -> str:
    """The table of the command-line page's flag section (book/cli.md) (a test keeps the two equal)."""
    rows = ["| command | flag | data sets | only with | default |", "| --- | --- | --- | --- | --- |"]
    for r in rules:
        formats = ", ".join(r.formats) if r.formats else "all"
        default = "—" if r.default is None else f"`{json.dumps(r.default)}`"
        rows.append(f"| `aethel {r.command}` | `{r.flag}` | {formats} | {r.needs or '—'} | {default} |")
    return "\n".join(rows) + "\n"


# ------------------------------------------------------------------------------ output files


def same_file(a: Any, b: Any) -> bool:
    """Whether two paths name one file: the same resolved path, or the same ``(st_dev, st_ino)``."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        sa, sb = os.stat(a), os.stat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def check_distinct_outputs(outputs: Iterable[tuple[str, Any]]) -> None:
    """ParameterError when two output flags name one file (the second would replace the first)."""
    given = [(flag, path) for flag, path in outputs if path is not None]
    for i, (flag, path) in enumerate(given):
        for other, other_path in given[:i]:
            if same_file(path, other_path):
                raise ParameterError(
                    f"{flag} {path} and {other} {other_path} name the same file; give each its own path"
                )


def is_eval_result(path: Path) -> bool:
    """Whether ``path`` holds a result JSON that ``aethel eval`` wrote (its top-level keys)."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return False
    keys = {"dataset", "setting", "n_queries", "methods", "config", "versions"}
    return isinstance(data, dict) and keys <= set(data)


def _written_by_trec(path: Any, trec: Any) -> bool:
    """Whether ``path`` is a file ``--trec-out trec`` writes (``qrels.txt`` or ``<method>.trec`` in it)."""
    name = Path(path).name
    in_folder = same_file(Path(os.path.realpath(path)).parent, trec)
    return in_folder and (name == "qrels.txt" or name.endswith(".trec"))


def check_eval_outputs(args: argparse.Namespace, inputs: Sequence[Path]) -> None:
    """``aethel eval``'s ``--out`` and ``--trec-out`` files are never one of the ``inputs`` it reads and
    never coincide; an existing ``--out`` is a result ``aethel eval`` wrote unless ``--force``."""
    trec = args.trec_out
    if trec is not None and (same_file(args.out, trec) or _written_by_trec(args.out, trec)):
        raise ParameterError(
            f"--out {args.out} is --trec-out {trec} or one of the files written there "
            "(qrels.txt, <method>.trec); give the result another path"
        )
    for path in inputs:
        clash = [("--out", args.out)] if same_file(args.out, path) else []
        if trec is not None and _written_by_trec(path, trec):
            clash.append(("--trec-out", trec))
        for flag, out in clash:
            raise ParameterError(
                f"{flag} {out}: it is the input {path} (read by --format {args.format}); writing "
                "there would replace the data; give the result another path"
            )
    target = Path(args.out)
    if not args.force and (target.exists() or target.is_symlink()) and not is_eval_result(target):
        raise ParameterError(refused_output("--out", args.out, "a result that aethel eval wrote"))


def refused_output(flag: str, path: Any, what: str) -> str:
    """The line that refuses to replace ``path`` (given as ``flag``), which is not ``what``: a dangling
    symbolic link is called one (it is not a file that exists)."""
    target = Path(path)
    if target.is_symlink() and not target.exists():
        try:
            where = os.readlink(target)
        except OSError:
            where = "?"
        return (
            f"{flag} {path}: a symbolic link to {where}, which does not exist; choose another path, "
            "or pass --force to replace the link by the file"
        )
    return f"{flag} {path}: the file exists and is not {what}; choose another path, or pass --force to replace it"


def check_eval_args(args: argparse.Namespace) -> None:
    """Reject bad values and output paths of ``aethel eval`` before any data is loaded (after
    :func:`check_flags`)."""
    check_k(args.k, "--k")
    if args.n_process < 1:
        raise ParameterError(f"--n-process must be ≥ 1, got {args.n_process}")
    if args.depth < 10:
        raise ParameterError(f"--depth must be ≥ 10 (nDCG@10), got {args.depth}")
    if args.k > args.depth:  # the cut-off given is the one at fault: name it
        raise ParameterError(
            f"--k {args.k} is more than --depth {args.depth}, the passages ranked per question; "
            f"give --k ≤ {args.depth}, or a --depth of at least {args.k}"
        )
    # where each flag applies was checked by check_flags (FLAG_RULES); here: the values
    if args.corpus_size is not None and args.corpus_size < 1:
        raise ParameterError(f"--corpus-size must be a positive integer, got {args.corpus_size}")
    if args.trec_out is not None and Path(args.trec_out).exists() and not Path(args.trec_out).is_dir():
        raise ParameterError(f"--trec-out {args.trec_out}: exists and is not a folder")
    check_output_file(args.out)  # a bad --out fails now, not after every method has run
    inputs = eval_inputs(args.format, args.data, setting=args.setting, distractors=args.distractors)
    check_eval_outputs(args, inputs)  # never over an input, a file it did not write, or each other


#: the commands that print their result on standard output
PRINTS = ("index", "search", "data verify")


def prints_result(args: argparse.Namespace) -> bool:
    """Whether the command of ``args`` prints its result on standard output (:data:`PRINTS`)."""
    command = getattr(args, "command", None)
    return (f"{command} {args.action}" if command == "data" else command) in PRINTS


class StdoutError(Exception):
    """A write to standard output failed (not a broken pipe): the result was not all printed."""


def flush_stdout() -> None:
    """Flush standard output now, where a failure (a full disk, a closed descriptor) is one line and
    exit 1, rather than at exit, where Python would only print a warning and exit 120."""
    if sys.stdout is None:
        return
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as exc:
        what = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise StdoutError(
            f"writing to standard output failed ({what}); the result was not all printed"
        ) from None
