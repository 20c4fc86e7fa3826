"""``aethel search``: answer one question, or a file of them, from an index built by ``aethel index``.

Reached through :data:`aethel_lite.cli.COMMANDS`: it imports the index reader only (not the builder, the
evaluation, the cluster or the swarm), so a search's start-up pays for nothing it does not run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .errors import DataError, DataNotFoundError, ParameterError, check_k
from .io import check_utf8
from .search.filters import Filters
from .search.format import method_parts
from .search.reader import matched, open_index
from .search.snippet import render

__all__ = ["cmd_search"]


def _bold() -> bool:
    """Whether to print matched words in bold: standard output is a terminal and NO_COLOR is not set (no-color.org)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _print_snippet(hit: dict, bold: bool) -> None:
    """The lines of a hit's page that best match the question (its column header above a statement row)."""
    snippet, text = hit.get("snippet"), hit["text"]
    if snippet is None:
        return
    header = snippet.get("header")
    if header is not None:
        print(f"      {render(text, header['start'], header['end'])}")
    print(f"      {render(text, snippet['start'], snippet['end'], snippet['matches'], bold=bold)}")


def _print_hits(hits: list) -> None:
    bold = _bold()
    for hit in hits:
        page = hit.get("page")  # a PDF page as a viewer numbers it (1-based), as the JSON gives it
        where = hit["doc_id"] + (f", page {page}" if page is not None else "")
        print(f"{hit['rank']:>2}. [{hit['score']:.4f}] {where}  ({hit['pid']})")
        if hit.get("source"):
            print(f"      source: {hit.get('link') or hit['source']}")
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
        _print_snippet(hit, bold)


def _read_questions(path: str) -> list[tuple[int, str]]:
    """(line number, question) of every non-blank line of ``path`` (``-``: standard input), read as bytes and
    decoded once as UTF-8. Lines end at ``\n`` (or ``\r\n``) only: a form feed, vertical tab, lone CR or
    U+2028/U+2029 inside a line is part of its question (``str.splitlines`` would cut there and shift
    every later ``"line"``)."""
    try:
        raw = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except FileNotFoundError:
        raise DataNotFoundError(f"--questions {path}: file not found") from None
    except IsADirectoryError:
        raise DataError(f"--questions {path}: is a folder, not a file of questions") from None
    except OSError as exc:
        raise DataError(f"--questions {path}: cannot read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DataError(f"--questions {path}:{line}: not UTF-8 text (byte {exc.start})") from None
    lines = text.split("\n")
    out = [(i, line.removesuffix("\r").strip()) for i, line in enumerate(lines, start=1)]
    out = [(i, q) for i, q in out if q]
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
    if args.question is not None:
        check_utf8(args.question, "question")  # once, here: every method gets the same text
    filters = Filters(**{name: getattr(args, name, None) for name in Filters.__dataclass_fields__}).check()
    numbered = [(None, args.question)] if args.question is not None else _read_questions(args.questions)
    questions = [q for _, q in numbered]
    index = open_index(args.index, args.method, questions)  # a graph method's NER tags them meanwhile
    documents = index.select(filters) if filters else None  # before ranking: their passages are the pool
    # "filters" (only when given): the filters as typed and the documents they match
    shown = {"filters": {**filters.given(), "doc_ids": documents}} if filters else {}
    # a hybrid's seed-source shares (one PageRank solve per source) only where they are shown: JSON and --explain
    sources = bool(args.json or args.explain or args.questions is not None)
    answers = index.iter_search(
        questions, k=args.k, method=args.method, explain=args.explain, sources=sources, documents=documents
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
                        **shown,
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
                {"question": args.question, "method": args.method, "hits": hits, "matched": found, **shown},
                indent=2,
                ensure_ascii=False,
            )
        )
        return 0
    if documents is not None:
        n = len(set(index.ids[1]))
        print(
            f"Searching {len(documents)} of {n} documents ({filters.flags()}): {', '.join(documents[:8])}"
            + (f", ... and {len(documents) - 8} more" if len(documents) > 8 else "")
        )
    if not found:
        print(
            "No passage matched the question (none holds one of its words); the hits below are not answers."
        )
    _print_hits(hits)
    return 0
