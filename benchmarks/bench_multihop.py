"""Search time of ``aethel-multihop``, ``aethel-bridges`` and ``aethel-chain`` beside ``aethel-hybrid``, BM25 and dense on the pooled multi-hop corpora.

Fits each method once on 2Wiki-open (7,005 passages) and MuSiQue-open (3,141), entities and embeddings from
the cache, then times ``search`` over every question, 10 hits each, all questions in one call (*batched*,
total ms / questions) and one question at a time (*single*, median ms), the best of ``--passes`` passes.
Each time includes encoding the questions with MiniLM and scoring every passage. Target (multi-hop at the
state of the art): ``aethel-multihop`` batched under 50 ms per question on 2Wiki-open. Usage::

    AETHEL_DATA=/work/shared/data .venv/bin/python benchmarks/bench_multihop.py [--passes 3] [--single 20]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aethel_lite.caching.versions import versions  # noqa: E402
from aethel_lite.retrievers.registry import make_retriever  # noqa: E402
from aethel_lite.studies.open_corpus import load_open  # noqa: E402

METHODS = ("bm25", "dense", "aethel-hybrid", "aethel-multihop", "aethel-bridges", "aethel-chain")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--passes", type=int, default=3, help="timing passes; the best is reported")
    ap.add_argument("--single", type=int, default=20, help="questions timed one at a time")
    ap.add_argument("--corpora", default="2wiki-open,musique-open")
    args = ap.parse_args(argv)
    v = versions()
    print(
        f"# bench_multihop  python {platform.python_version()}  numpy {v['numpy']}  torch {v['torch']}  "
        f"cpus {os.cpu_count()}  loadavg {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    for name in args.corpora.split(","):
        ds = load_open(name)
        print(
            f"{name}: {len(ds.passages)} passages, {len(ds.queries)} questions; best of {args.passes} passes"
        )
        for method in METHODS:
            r = make_retriever(method)
            t0 = time.perf_counter()
            r.fit(ds.passages)
            fit = time.perf_counter() - t0
            r.search(ds.queries[:2], k=10)  # warm: models loaded
            batched = []
            for _ in range(args.passes):
                t0 = time.perf_counter()
                r.search(ds.queries, k=10)
                batched.append(1000 * (time.perf_counter() - t0) / len(ds.queries))
            single = []
            for q in ds.queries[: args.single]:
                t0 = time.perf_counter()
                r.search([q], k=10)
                single.append(1000 * (time.perf_counter() - t0))
            print(
                f"  {method:16s} batched {min(batched):8.2f} ms/question   single median {statistics.median(single):8.2f} ms"
                f"   (fit {fit:.1f} s)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
