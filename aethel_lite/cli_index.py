"""``aethel index``: build, rebuild or add to an index folder; safe to interrupt.

Reached through :data:`aethel_lite.cli.COMMANDS`, so only ``aethel index`` imports the index builder.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .retrievers.registry import DEFAULT_METHOD
from .search.atomic import Terminated, index_identity, index_state, interrupt_handlers
from .search.builder import build_index
from .search.summary import index_summary

__all__ = ["INTERRUPTED_NOTES", "cmd_index"]


def cmd_index(args: argparse.Namespace) -> int:
    """``aethel index``: build, rebuild or ``--add`` to an index; Ctrl-C / SIGTERM (exit 130 / 143) leave
    the previous one intact. Prints a short summary (:func:`~aethel_lite.search.summary.index_summary`), or with
    ``--json`` the dict :func:`~aethel_lite.search.builder.build_index` returns."""
    methods = (
        args.methods.split(",") if args.methods is not None else (None if args.add else [DEFAULT_METHOD])
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
            for entry in info.get("skipped", ()):  # shown with --quiet too: a file that is not in the index
                print(f"aethel: warning: skipped {entry['path']}: {entry['reason']}", file=sys.stderr)
            if args.json:
                print(json.dumps(info, indent=2, sort_keys=True))
            else:
                print(index_summary(info, add=args.add, index_dir=where), end="")
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
