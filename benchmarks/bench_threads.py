"""MiniLM encoding in concurrent processes: torch threads per process against throughput.

    AETHEL_DATA=/work/shared/data .venv/bin/python benchmarks/bench_threads.py [--pages 400]

What ``make test`` meets: pytest-xdist runs one worker per core, and each worker's torch starts one
thread per core. The script times MiniLM over the first ``--pages`` FinanceBench pages (the first
1,500 characters of each, no cache) in one process with as many threads as cores, then in one
process per core started together, first with as many threads as cores each, then with one thread
each. ``tests/conftest.py`` sets ``OMP_NUM_THREADS=1`` in the test workers from what this shows.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def encode_once(threads: int, pages: int) -> float:
    """Seconds MiniLM takes over the first ``pages`` pages, with ``threads`` torch threads."""
    import torch

    from aethel_lite.retrievers import DenseRetriever

    torch.set_num_threads(threads)
    texts = []
    with gzip.open(Path(os.environ["AETHEL_DATA"]) / "financebench" / "pages.jsonl.gz", "rt") as fh:
        for line in fh:
            text = json.loads(line).get("text") or ""
            if len(text) > 200:
                texts.append(text[:1500])
            if len(texts) >= pages:
                break
    dense = DenseRetriever(cache=False)
    dense.encode(texts[:8], progress=False)  # the model loaded before the clock starts
    start = time.perf_counter()
    dense.encode(texts, progress=False)
    return time.perf_counter() - start


def concurrent(processes: int, threads: int, pages: int) -> list[float]:
    """Seconds of each of ``processes`` processes started together, ``threads`` torch threads each."""
    cmd = [sys.executable, __file__, "--child", str(threads), "--pages", str(pages)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(processes)]
    return [float(p.communicate()[0]) for p in procs]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=400)
    ap.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(f"{encode_once(args.child, args.pages):.2f}")
        return 0
    cores = os.cpu_count() or 1
    print(
        f"# bench_threads  pages {args.pages}  cpus {cores}  loadavg {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    print(f"one process, {cores} threads: {concurrent(1, cores, args.pages)[0]:.1f} s")
    for threads in (cores, 1):
        times = concurrent(cores, threads, args.pages)
        print(
            f"{cores} processes at once, {threads} thread(s) each: "
            + ", ".join(f"{t:.1f}" for t in times)
            + " s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
