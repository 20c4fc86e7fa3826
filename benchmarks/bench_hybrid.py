"""Query latency of ``aethel-hybrid`` beside BM25 and dense retrieval on the FinanceBench pages.

Fits BM25, dense (MiniLM, first 256 word pieces) and ``aethel-hybrid`` on the 10,206 pages of the
74 filings the questions ask about (entities and embeddings from the cache), then times
``search`` over the 129 questions, 10 hits each: one question at a time (*single*, median ms) and
all in one call (*batched*, total ms / questions), the best of ``--passes`` passes. The hybrid's
time includes encoding the question with MiniLM, scoring every page with BM25 and dense,
building the seed vector and solving Personalized PageRank (the ranking); "question analysed"
times the same with the question's MiniLM embedding, spaCy entities and BM25 tokens computed beforehand (what
the graph adds to a dense retriever); ``explain`` adds the per-hit attribution of the first 10
hits by seed source (one more PageRank solve per source).
Targets (issue 9): single ≤ 20 ms, batched ≤ 5 ms. Usage::

    AETHEL_DATA=/work/shared/data .venv/bin/python benchmarks/bench_hybrid.py [--passes 3] [--out results/bench_hybrid.json]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aethel_lite.caching.versions import versions  # noqa: E402
from aethel_lite.io import write_json  # noqa: E402
from aethel_lite.studies.beyond import latency  # noqa: E402
from aethel_lite.studies.open_corpus import load_open  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--passes", type=int, default=3, help="timing passes; the best is reported")
    ap.add_argument("--queries", type=int, default=None, help="first N questions (default all 129)")
    ap.add_argument("--out", default=None, help="also write the numbers to this JSON file")
    ap.add_argument(
        "--question-batches",
        default=None,
        metavar="8,16,64",
        help="only time MiniLM encoding the questions in batches of these sizes (ratios against 64)",
    )
    args = ap.parse_args(argv)
    ds = load_open("financebench")
    v = versions()
    print(
        f"# bench_hybrid  python {platform.python_version()}  numpy {v['numpy']}  torch {v['torch']}  "
        f"cpus {os.cpu_count()}  loadavg {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    if args.question_batches:
        return question_batches(ds, [int(b) for b in args.question_batches.split(",")], args.passes)
    res = latency(ds, n_queries=args.queries, repeats=args.passes)
    print(
        f"data: {res['n_passages']} passages, {res['n_queries']} questions; 10 hits per question; best of {args.passes} passes"
    )
    for name in (
        "bm25",
        "dense",
        "aethel-hybrid",
        "aethel-hybrid (question analysed)",
        "aethel-hybrid (explain)",
    ):
        r = res[name]
        print(f"  {name:36s} single {r['single_ms']:8.2f} ms/query   batched {r['batched_ms']:8.2f} ms/query")
    print("targets (issue 9: single <= 20 ms, batched <= 5 ms)")
    for name in ("aethel-hybrid", "aethel-hybrid (question analysed)"):
        h = res[name]
        for what, limit in (("single", 20), ("batched", 5)):
            v = h[f"{what}_ms"]
            print(f"  [{'met' if v <= limit else 'NOT met'}] {name}, {what} <= {limit} ms/query ({v:.1f})")
    print(f"loadavg at end {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if args.out:
        write_json(args.out, {**res, "passes": args.passes, "versions": v})
    return 0


def question_batches(ds, sizes, passes: int, baseline: int = 64) -> int:
    """Print ms per question of MiniLM encoding all questions in batches of each size (best of ``passes``)."""
    import time

    from aethel_lite.core.encoders import resolve_precision
    from aethel_lite.retrievers import DenseRetriever

    dense = DenseRetriever()
    texts = [q.text for q in ds.queries]
    dense.encode(texts[:8], progress=False)  # load the model
    ms = {}
    for size in sorted(set(sizes) | {baseline}):
        best = None
        for _ in range(max(passes, 1)):
            t = time.perf_counter()
            dense.encode(texts, progress=False, batch_size=size)
            took = 1000 * (time.perf_counter() - t) / len(texts)
            best = took if best is None else min(best, took)
        ms[size] = best
    print(
        f"MiniLM on {len(texts)} questions ({resolve_precision(dense.precision)}), ms per question, best of {passes}:"
    )
    for size, t in ms.items():
        print(f"  batch {size:4d}  {t:6.2f} ms   x{ms[baseline] / t:4.2f} against batch {baseline}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
