"""Two runs of a chapter, leaf by leaf: do their result files say the same?

    .venv/bin/python benchmarks/compare_results.py A/results/closed_pool.json B/results/closed_pool.json

Every leaf of the two JSON files (metrics, per-question metrics, confidence intervals, p-values, the
rankings a file keeps) is compared for equality, except the keys that name the encoder's precision
(``precision``, ``dense_precision``), the package versions (``versions``) and timing (``timing``,
``latency``, anything in seconds or ms). Used to compare a chapter under two MiniLM precisions
(benchmarks/README.md, "The default's agreement with PyTorch, chapter by chapter"). Exit status 1
when a leaf differs or is in one file only.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from typing import Any

#: keys left out of the comparison (with the keys naming seconds or milliseconds)
SKIP = frozenset({"timing", "versions", "latency", "elapsed", "precision", "dense_precision"})


def _skipped(key: str) -> bool:
    return key in SKIP or "seconds" in key or key.endswith("_ms")


def leaves(x: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """``(path, value)`` of every leaf of ``x`` (dicts and lists walked; skipped keys left out)."""
    if isinstance(x, dict):
        for k, v in x.items():
            if not _skipped(str(k)):
                yield from leaves(v, (*path, str(k)))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from leaves(v, (*path, str(i)))
    else:
        yield path, x


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--show", type=int, default=8, help="differences printed at most")
    args = ap.parse_args(argv)
    with open(args.a, encoding="utf-8") as fa, open(args.b, encoding="utf-8") as fb:
        a, b = dict(leaves(json.load(fa))), dict(leaves(json.load(fb)))
    differ = sorted(p for p in a.keys() & b.keys() if a[p] != b[p])
    alone = sorted(a.keys() ^ b.keys())
    print(f"{args.a} vs {args.b}: {len(a)} leaves; {len(differ)} differ; {len(alone)} in one file only")
    for p in differ[: args.show]:
        print(f"  {'/'.join(p)}: {a[p]!r} != {b[p]!r}")
    for p in alone[: args.show]:
        print(f"  only in {'the first' if p in a else 'the second'}: {'/'.join(p)}")
    return 1 if differ or alone else 0


if __name__ == "__main__":
    raise SystemExit(main())
