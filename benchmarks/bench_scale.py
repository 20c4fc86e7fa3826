"""Passage work in-process vs on a Dask LocalCluster, a projection to large corpora, and the search side's memory.

    AETHEL_DATA=/work/shared/data .venv/bin/python benchmarks/bench_scale.py              # 2,000 FinanceBench pages
    AETHEL_DATA=/work/shared/data .venv/bin/python benchmarks/bench_scale.py --pages 10000 --workers 1,2
    .venv/bin/python benchmarks/bench_scale.py --source synthetic --pages 20               # smoke run (~2 min)
    options: --tasks ner,first,max,heading --partition-size 256 --docs all --seed 0

For each task -- spaCy NER (the ``ner`` store that ``ner`` and ``ner3`` share) and MiniLM encoding
with each pooling (``first``, ``max``: ~200-word windows, ``heading``: the first 200 characters)
-- the same pages are processed in-process (``extract_entities`` / ``DenseRetriever.fit``) and
with :func:`aethel_lite.evaluation.cluster.precompute` on ``LocalCluster`` s of each ``--workers``
count, every run into a fresh, empty cache folder (every page a miss). Models are loaded before
the clock starts (in-process and on every worker). Printed side by side: pages/s; for the cluster
runs the time inside the workers per page (the per-worker rate), the per-partition overhead
:math:`(W \\cdot \\text{wall} - \\sum \\text{worker seconds}) / \\text{partitions}` (scheduling,
transfer, the driver's store writes and idle worker slots) and the driver's write time per partition.

The projection to 49,942 pages (all 344 FinanceBench filings) and 750,000 pages at 8, 32 and
128 workers is arithmetic on those measurements, not a measurement:
:math:`t = \\max\\big(P \\cdot (s/r + o) / W,\\ P \\cdot d\\big)` for :math:`P` partitions of
:math:`s` pages, per-worker rate :math:`r` (pages/s), overhead :math:`o` and driver write time
:math:`d` per partition (the driver writes every partition, so it bounds the rate).

Memory: at the largest size run, the bytes of the arrays held by a fitted BM25 (bm25s), the dense
matrices (float32; ``first`` and ``max``) and the ner3 entity graph (incidence, alias and
adjacency CSR), scaled linearly to 100,000 pages (Python strings and dicts -- vocabularies,
ids -- are not counted).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from aethel_lite.caching.versions import versions
from aethel_lite.core.entities import extract_entities, get_extractor, graph_filters
from aethel_lite.core.graph import build_graph
from aethel_lite.evaluation.cluster import connect, precompute
from aethel_lite.retrievers import BM25Retriever, DenseRetriever, passage_text

TASKS = ("ner", "first", "max", "heading")
SIZES = (49_942, 750_000)
WORKERS = (8, 32, 128)


def load_pages(args):
    if args.source == "synthetic":
        from aethel_lite.data.synthetic import make_synthetic

        return make_synthetic(n_passages=args.pages, seed=args.seed).passages
    from aethel_lite.data.loaders import load_financebench

    passages = load_financebench(docs=args.docs).passages  # the data root from $AETHEL_DATA
    if args.pages > len(passages):
        sys.exit(f"--pages {args.pages}: the corpus has {len(passages)} pages")
    rng = np.random.default_rng(args.seed)
    return [passages[i] for i in sorted(rng.choice(len(passages), args.pages, replace=False))]


class Cache:
    """A fresh ``$AETHEL_CACHE`` folder per run (kept until the end: the memory section reads them)."""

    def __init__(self):
        self.root = Path(tempfile.mkdtemp(prefix="bench_scale_"))
        self.n = 0

    def fresh(self, label: str) -> Path:
        self.n += 1
        path = self.root / f"{self.n:02d}-{label}"
        os.environ["AETHEL_CACHE"] = str(path)
        return path


def run_in_process(task: str, passages) -> float:
    if task == "ner":
        extract_entities([passage_text(p) for p in passages], "ner", progress=False)
    else:
        DenseRetriever(pooling=task).fit(passages)
    return len(passages)


def warm_in_process(tasks, cache: Cache, sample) -> None:
    cache.fresh("warm")
    for task in tasks:
        run_in_process(task, sample)


def warm_workers(client, tasks) -> None:
    def load():
        from aethel_lite.core.ner import SpacyNerExtractor
        from aethel_lite.retrievers import DenseRetriever as Dense

        if "ner" in tasks:
            SpacyNerExtractor().extract(["Apple Inc. reported revenue in Cupertino."])
        if set(tasks) - {"ner"}:
            Dense().encode(["warm up"], progress=False)

    client.run(load)


def cluster_run(task: str, passages, client, partition_size: int) -> dict:
    kwargs = {"extractor": "ner"} if task == "ner" else {"poolings": (task,)}
    return precompute(passages, client=client, partition_size=partition_size, progress=False, **kwargs)


def nbytes(obj, seen=None, depth=0) -> int:
    """Bytes of the numpy arrays and scipy sparse matrices reachable from ``obj`` (attributes,
    dicts, lists; depth <= 6; each array counted once; Python strings and dicts are not counted)."""
    import scipy.sparse as sp

    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 6:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if sp.issparse(obj):
        return sum(
            getattr(obj, a).nbytes for a in ("data", "indices", "indptr", "row", "col") if hasattr(obj, a)
        )
    if isinstance(obj, dict):
        return sum(nbytes(v, seen, depth + 1) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(nbytes(v, seen, depth + 1) for v in obj[:10_000] if not isinstance(v, (str, int, float)))
    if hasattr(obj, "__dict__"):
        return nbytes(vars(obj), seen, depth + 1)
    return 0


def memory(passages, cache: Cache, roots: dict) -> list[tuple[str, float]]:
    n = len(passages)
    out = [("BM25 (bm25s)", nbytes(BM25Retriever().fit(passages)))]
    for task in ("first", "max"):
        if task in roots:
            os.environ["AETHEL_CACHE"] = str(roots[task])
            r = DenseRetriever(pooling=task).fit(passages)
            out.append(
                (
                    f"dense matrix ({task}, {r.embeddings_.shape[0]} rows)",
                    r.embeddings_.nbytes + r.chunk_offsets_.nbytes,
                )
            )
    if "ner" in roots:
        os.environ["AETHEL_CACHE"] = str(roots["ner"])
        ext = get_extractor("ner3")
        mentions = extract_entities([passage_text(p) for p in passages], ext, progress=False)
        stop, links = graph_filters(mentions, ext)
        graph = build_graph([p.pid for p in passages], mentions, stop=stop, alias_pairs=links)
        _ = graph.adjacency  # built once per graph, held by the retriever
        out.append((f"ner3 graph ({graph.n_entities} entities)", nbytes(graph)))
    return [(label, b * 100_000 / n) for label, b in out]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--source",
        choices=("financebench", "synthetic"),
        default=None,
        help="default: financebench when $AETHEL_DATA is set, else synthetic",
    )
    ap.add_argument("--pages", type=int, default=2000, help="pages processed per run (a seeded sample)")
    ap.add_argument(
        "--docs", choices=("question", "all"), default="all", help="financebench: filings to sample from"
    )
    ap.add_argument("--workers", default="1,2", help="comma-separated LocalCluster sizes")
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--partition-size", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    args.source = args.source or ("financebench" if os.environ.get("AETHEL_DATA") else "synthetic")
    tasks = [t for t in args.tasks.split(",") if t]
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        sys.exit(f"--tasks: unknown {unknown[0]!r}; choose from {','.join(TASKS)}")
    sizes = [int(w) for w in args.workers.split(",") if w]
    v = versions()
    print(
        f"# bench_scale  python {platform.python_version()}  cpus {os.cpu_count()}  loadavg "
        + " ".join(f"{x:.1f}" for x in os.getloadavg())
        + f"  torch {v['torch']}  spacy {v['spacy']}  sentence-transformers {v['sentence-transformers']}"
    )
    passages = load_pages(args)
    print(
        f"data: {len(passages)} pages ({args.source}, seed {args.seed}); partition size {args.partition_size}"
    )
    cache = Cache()
    try:
        rates: dict[str, dict[str, float]] = {t: {} for t in tasks}
        detail: dict[tuple[str, int], dict] = {}
        roots: dict[str, Path] = {}
        warm_in_process(tasks, cache, passages[:2])
        for task in tasks:
            roots[task] = cache.fresh(f"local-{task}")
            t0 = time.perf_counter()
            run_in_process(task, passages)
            rates[task]["in-process"] = len(passages) / (time.perf_counter() - t0)
        for w in sizes:
            client = connect(workers=w)
            try:
                client.wait_for_workers(w, timeout=300)
                warm_workers(client, tasks)
                cache.fresh(f"warm-{w}")
                for task in tasks:  # the store-configuration check loads every producer on every worker
                    cluster_run(task, passages[:2], client, args.partition_size)
                for task in tasks:
                    cache.fresh(f"w{w}-{task}")
                    s = cluster_run(task, passages, client, args.partition_size)
                    rates[task][f"{w} workers"] = len(passages) / s["seconds"]
                    job = next(iter(s["jobs"].values()))
                    parts = max(s["partitions"], 1)
                    detail[(task, w)] = {
                        "rate": len(passages) / max(job["worker_seconds"], 1e-9),
                        "overhead": max(w * s["seconds"] - job["worker_seconds"], 0.0) / parts,
                        "driver": s["driver_seconds"] / parts,
                        "partitions": s["partitions"],
                    }
            finally:
                client.close()
        columns = ["in-process"] + [f"{w} workers" for w in sizes]
        print("\npages/s (wall clock, every page a miss)")
        print(f"  {'task':<10}" + "".join(f"{c:>14}" for c in columns))
        for task in tasks:
            print(f"  {task:<10}" + "".join(f"{rates[task].get(c, float('nan')):>14.1f}" for c in columns))
        print(
            "\ncluster runs: per-worker rate (pages per worker-second), per-partition overhead and driver write time"
        )
        for (task, w), d in detail.items():
            print(
                f"  {task:<10} {w:>3} workers  {d['rate']:8.1f} pages/s/worker  overhead {d['overhead'] * 1000:8.1f} ms"
                f"  driver {d['driver'] * 1000:6.1f} ms  ({d['partitions']} partitions)"
            )
        print(
            "\nPROJECTION (arithmetic on the largest cluster run above, not a measurement): hours of passage work"
        )
        print(f"  {'task':<10} {'pages':>9}" + "".join(f"{f'{w} workers':>14}" for w in WORKERS))
        s_pages = args.partition_size
        for task in tasks:
            d = detail[(task, max(sizes))]
            for n in SIZES:
                parts = -(-n // s_pages)
                cells = [
                    max(parts * (s_pages / d["rate"] + d["overhead"]) / w, parts * d["driver"]) / 3600
                    for w in WORKERS
                ]
                print(f"  {task:<10} {n:>9,}" + "".join(f"{c:>14.2f}" for c in cells))
        print(f"\nsearch-side memory per 100,000 pages (measured at {len(passages)} pages, scaled linearly)")
        for label, b in memory(passages, cache, roots):
            print(f"  {label:<44} {b / 2**20:10.1f} MiB")
    finally:
        shutil.rmtree(cache.root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
