"""``aethel memo``: the specialist swarm's memo on one fund, GP or company, and the checks before it runs
(its output files, and a ``--target`` the data set knows).

Reached through :data:`aethel_lite.cli.COMMANDS`, so only ``aethel memo`` imports the swarm.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .cli_checks import check_distinct_outputs, refused_output
from .data.select import load_for_eval
from .data.synthetic import make_synthetic
from .errors import AethelError, ParameterError, check_k
from .io import atomic_write, check_output_file
from .swarm import OpenAICompatibleGenerator, Orchestrator, read_findings, write_findings
from .swarm.indexed import check_target, closest_companies, index_orchestrator
from .swarm.memo import is_memo_markdown

__all__ = ["check_dataset_target", "check_memo_outputs", "cmd_memo"]


def _memo_wrote(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8") as fh:
            return is_memo_markdown(fh.read(1 << 22))
    except (OSError, UnicodeDecodeError):
        return False


def _findings_wrote(path: Path) -> bool:
    try:
        read_findings(path)
        return True
    except (AethelError, OSError):
        return False


def check_memo_outputs(args: argparse.Namespace) -> None:
    """``--out`` (and ``--findings``) must be writable, distinct, and an existing file there one
    ``aethel memo`` wrote unless ``--force``: a user's file is never replaced by accident."""
    check_distinct_outputs([("--out", args.out), ("--findings", args.findings)])
    outputs = [("--out", args.out, _memo_wrote, "a memo")]
    if args.findings:
        outputs.append(("--findings", args.findings, _findings_wrote, "a findings list"))
    for flag, path, ours, what in outputs:
        target = check_output_file(path, flag)
        if not args.force and (target.exists() or target.is_symlink()) and not ours(target):
            raise ParameterError(refused_output(flag, path, f"{what} that aethel memo wrote"))


def check_dataset_target(orchestrator: Orchestrator, dataset, args: argparse.Namespace) -> None:
    """``--target`` must name an entity of the data set, by a name or by a trading symbol its filings' covers
    register ("AAPL"; :class:`~aethel_lite.swarm.resolvers.DocumentResolver`); else a ParameterError listing
    the closest names."""
    resolver = orchestrator.resolver
    if not args.target.strip() or resolver.lookup(args.target.strip()) is not None:
        return  # an empty name: the orchestrator's own one-line error
    aliases = getattr(resolver, "aliases", None)
    names = (
        [resolver.display(e) for e in aliases]
        if aliases
        else [str(p.meta["company"]) for p in dataset.passages if p.meta.get("company")]
    )
    known = closest_companies(args.target, names)
    raise ParameterError(
        f"--target {args.target!r}: not a fund, GP or company of the {args.format} data set (or it names "
        f"several); closest: {', '.join(known[:8])}"
        + (f" and {len(known) - 8} more" if len(known) > 8 else "")
    )


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
