"""Ingest throughput on FinanceBench: entity extraction (regex, ner, ner3), BM25, dense, graph.

Reads the 74 filings the questions ask about (10,206 pages) with
``aethel_lite.data.loaders.load_financebench`` (or ``$AETHEL_DATA/financebench/pages.jsonl.gz``
directly if the loader is missing) and prints pages/s for each stage, cold and from the cache.

Target (2 CPU cores): full ingest (ner3 + BM25 + dense + graph) <= 20 min cold, <= 30 s from cache.

A stage is "cold" only if none of its pages is in the per-passage store yet
(``aethel_lite.caching.store.PassageStore``); otherwise the cold line says how many were. Use
``--fresh-cache`` to time everything cold in a temporary cache directory (nothing is warmed), or
run without it to warm the shared cache (``$AETHEL_CACHE`` or ``./.aethel_cache``).

Usage::

    HF_HUB_OFFLINE=1 AETHEL_DATA=/work/shared/data .venv/bin/python benchmarks/bench_ingest.py --limit 500
    HF_HUB_OFFLINE=1 AETHEL_DATA=/work/shared/data .venv/bin/python benchmarks/bench_ingest.py --n-process 2
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def load_pages(limit: int | None):
    """(pids, texts, passages) of the FinanceBench question filings, first ``limit`` pages."""
    try:
        from aethel_lite.data.loaders import load_financebench
    except ImportError:
        load_financebench = None
    if load_financebench is not None:
        ds = load_financebench(docs="question", granularity="page")
        passages = ds.passages[:limit] if limit else ds.passages
        texts = [f"{p.title}\n{p.text}" if p.title else p.text for p in passages]
        return [p.pid for p in passages], texts, passages
    root = Path(os.environ.get("AETHEL_DATA") or "data") / "financebench"
    docs = {
        json.loads(line)["doc_name"]
        for line in open(root / "financebench_open_source.jsonl", encoding="utf-8")
    }
    pids, texts = [], []
    with gzip.open(root / "pages.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row["doc_name"] in docs:
                pids.append(f"{row['doc_name']}#p{row['page']}")
                texts.append(f"{row['doc_name']}\n{row['text']}")
                if limit and len(pids) >= limit:
                    break
    return pids, texts, None


_LAST_CPU = [0.0]


def _cpu() -> float:
    """CPU seconds of this process and its finished children (spaCy workers)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn):
    c0, t0 = _cpu(), time.perf_counter()
    out = fn()
    _LAST_CPU[0] = _cpu() - c0
    return out, time.perf_counter() - t0


def line(stage: str, mode: str, n: int, seconds: float | None, note: str = "") -> None:
    """Wall seconds, pages/s, CPU seconds and pages per CPU-second (robust to a busy machine)."""
    if seconds is None:
        print(f"{stage:<10} {mode:<6} {'-':>9} {'-':>10} {'-':>9} {'-':>10}  {note}", flush=True)
    else:
        cpu = _LAST_CPU[0]
        print(
            f"{stage:<10} {mode:<6} {seconds:9.2f} {n / max(seconds, 1e-9):10.1f} {cpu:9.2f} "
            f"{n / max(cpu, 1e-9):10.1f}  {note}",
            flush=True,
        )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="only the first N pages")
    ap.add_argument("--n-process", type=int, default=2, help="spaCy worker processes (default 2)")
    ap.add_argument("--extractors", default="regex,ner,ner3")
    ap.add_argument("--no-dense", action="store_true", help="skip dense encoding")
    ap.add_argument("--fresh-cache", action="store_true", help="time cold runs in a temporary cache dir")
    args = ap.parse_args(argv)

    if args.fresh_cache:
        os.environ["AETHEL_CACHE"] = tempfile.mkdtemp(prefix="aethel_bench_cache_")
    from aethel_lite.caching.store import text_key
    from aethel_lite.core.entities import entity_store, extract_entities, get_extractor, graph_filters

    (pids, texts, passages), t_load = timed(lambda: load_pages(args.limit))
    n = len(texts)
    keys = [text_key(t) for t in texts]

    def n_stored(store) -> int:
        """How many of the pages ``store`` already holds."""
        with store:
            return len(store.get_many(keys))

    print(
        f"FinanceBench question filings: {n} pages, {sum(map(len, texts)):,} chars (load {t_load:.1f} s); "
        f"n_process={args.n_process}; cache={os.environ.get('AETHEL_CACHE') or './.aethel_cache'}",
        flush=True,
    )
    print(
        f"{'stage':<10} {'mode':<6} {'wall s':>9} {'pages/s':>10} {'cpu s':>9} {'pages/cpu-s':>10}",
        flush=True,
    )

    totals = {"cold": 0.0, "cache": 0.0}
    mentions_ner3 = None
    for name in [e for e in args.extractors.split(",") if e]:
        ext = get_extractor(name)
        base = ext.ner if name == "ner3" else ext
        n_warm = n_stored(entity_store(base))
        was_cached = n_warm > 0
        run = lambda: extract_entities(texts, ext, n_process=args.n_process, progress=False)  # noqa: B023, E731
        ms, sec = timed(run)
        if was_cached:
            note = (
                "(= cached ner + label/key filters, see the cache line)"
                if name == "ner3"
                else f"({n_warm} of {n} pages already cached: use --fresh-cache)"
            )
        else:
            note = f"{sum(map(len, ms)):,} mentions"
        line(name, "cold", n, None if was_cached else sec, note)
        ms2, sec2 = timed(run)
        assert ms2 == ms
        line(name, "cache", n, sec2)
        if name == "ner3":
            mentions_ner3 = ms
            if not was_cached:
                totals["cold"] += sec
            totals["cache"] += sec2

    if mentions_ner3 is not None:
        from aethel_lite.core.graph import build_graph

        ner3 = get_extractor("ner3")

        def graph():
            stop, links = graph_filters(mentions_ner3, ner3)
            return build_graph(pids, mentions_ner3, stop=stop, alias_pairs=links), stop, links

        (g, stop, links), sec = timed(graph)
        line(
            "graph",
            "build",
            n,
            sec,
            f"{g.n_entities:,} entities, {len(stop)} stop-entities, {len(links):,} substring links",
        )
        totals["cold"] += sec
        totals["cache"] += sec
        top = sorted(stop)[:15]
        print(f"           stop-entities (first 15 of {len(stop)}): {top}", flush=True)

    if passages is not None:
        from aethel_lite.retrievers import BM25Retriever

        _, sec = timed(lambda: BM25Retriever().fit(passages))
        line("bm25", "fit", n, sec)
        totals["cold"] += sec
        totals["cache"] += sec
        if not args.no_dense:
            from aethel_lite.retrievers import DenseRetriever

            dense = DenseRetriever(batch_size=64, cache=True)
            n_warm = n_stored(dense.embedding_store())
            was_cached = n_warm > 0
            _, sec = timed(lambda: DenseRetriever(batch_size=64, cache=True).fit(passages))
            line(
                "dense",
                "cold",
                n,
                None if was_cached else sec,
                f"({n_warm} of {n} pages already cached: use --fresh-cache)"
                if was_cached
                else "MiniLM, batch 64, normalised",
            )
            if not was_cached:
                totals["cold"] += sec
            _, sec2 = timed(lambda: DenseRetriever(batch_size=64, cache=True).fit(passages))
            line("dense", "cache", n, sec2)
            totals["cache"] += sec2
    else:
        print("aethel_lite.data.loaders not available: BM25/dense stages skipped", flush=True)

    print(
        f"ingest total (ner3 + graph + bm25 + dense): cold {totals['cold']:.1f} s "
        f"(only stages that ran cold), from cache {totals['cache']:.1f} s",
        flush=True,
    )
    print(
        f"load average now: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores "
        "(pages/cpu-s x cores estimates the rate on an idle machine)",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
