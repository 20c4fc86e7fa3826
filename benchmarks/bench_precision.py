"""MiniLM in bfloat16 against float32: speed, embedding agreement and retrieval quality.

    AETHEL_DATA=/work/shared/data .venv/bin/python benchmarks/bench_precision.py [--corpus financebench]

Encodes a seeded sample of the corpus's passages in both precisions (no cache) to time them and
compare the vectors (cosine of each pair), then fits ``DenseRetriever`` on the whole corpus in
each precision (the embedding stores under ``AETHEL_CACHE`` are used, so a warm cache makes this
part cheap) and prints HR@1, HR@5 and MRR of both, how many questions' top-5 lists are identical,
and the paired bootstrap of the MRR difference. ``make book`` and the library use float32
(``AETHEL_DENSE_PRECISION`` in the Makefile): bfloat16 is faster only on cores that compute it natively.
"""

from __future__ import annotations

import argparse
import os
import random
import time

import numpy as np


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--corpus", default="financebench", help="a name of aethel_lite.studies.open_corpus.OPEN_DATASETS"
    )
    ap.add_argument("--sample", type=int, default=300, help="passages encoded without cache for the timing")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    from aethel_lite.data.schema import passage_text
    from aethel_lite.evaluation.metrics import per_query
    from aethel_lite.evaluation.stats import bootstrap_ci
    from aethel_lite.retrievers import DenseRetriever
    from aethel_lite.studies.open_corpus import load_open

    ds = load_open(args.corpus)
    print(
        f"# bench_precision  corpus {args.corpus}: {len(ds.passages)} passages, {len(ds.queries)} questions; "
        f"cpus {os.cpu_count()}  loadavg {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    texts = [
        passage_text(p)
        for p in random.Random(args.seed).sample(list(ds.passages), min(args.sample, len(ds.passages)))
    ]
    vecs, rate = {}, {}
    for precision in (
        "float32",
        "bfloat16",
        "float32",
        "bfloat16",
    ):  # twice each, interleaved; best rate kept
        r = DenseRetriever(precision=precision, cache=False)
        r.encode(texts[:8])  # model loaded and warmed up
        t0 = time.perf_counter()
        vecs[precision] = r.encode(texts)
        rate[precision] = max(rate.get(precision, 0.0), len(texts) / (time.perf_counter() - t0))
    cos = (vecs["float32"] * vecs["bfloat16"]).sum(axis=1)
    print(
        f"encode {len(texts)} passages: float32 {rate['float32']:.1f}/s, bfloat16 {rate['bfloat16']:.1f}/s "
        f"(x{rate['bfloat16'] / rate['float32']:.2f}); cosine float32 vs bfloat16: min {cos.min():.6f}, "
        f"median {np.median(cos):.6f}"
    )

    metrics = ("HR@1", "HR@5", "MRR")
    runs, scores = {}, {}
    for precision in ("float32", "bfloat16"):
        r = DenseRetriever(precision=precision, progress=True).fit(ds.passages)
        runs[precision] = r.search(ds.queries, k=1000)
        scores[precision] = per_query(runs[precision], ds.queries, metrics)
    qids = [q.qid for q in ds.queries]
    for precision in ("float32", "bfloat16"):
        means = {m: np.mean([scores[precision][q][m] for q in qids]) for m in metrics}
        print(f"{precision:9s} " + "  ".join(f"{m} {v:.3f}" for m, v in means.items()))
    same = sum(
        [pid for pid, _ in runs["float32"][q][:5]] == [pid for pid, _ in runs["bfloat16"][q][:5]]
        for q in qids
    )
    diff = np.array([scores["bfloat16"][q]["MRR"] - scores["float32"][q]["MRR"] for q in qids])
    ci = bootstrap_ci(diff, n_resamples=10_000, seed=0)
    print(
        f"identical top-5 lists: {same}/{len(qids)}; MRR bfloat16 - float32: {ci.mean:+.4f} "
        f"[{ci.ci_low:+.4f}, {ci.ci_high:+.4f}] (paired bootstrap, 95%)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
