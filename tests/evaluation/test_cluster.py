"""Passage work on a Dask cluster (aethel_lite.evaluation.cluster): a real LocalCluster of 2 worker processes.

The oracle of every test is the in-process run: the same passages extracted or encoded without
a cluster, in another cache folder. Equality is checked on the stored bytes (key by key) and on
the rankings of a retriever fitted from each store.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from aethel_lite.core.entities import (
    RegexExtractor,
    SpacyNerExtractor,
    extract_entities,
)
from aethel_lite.data.synthetic import make_synthetic
from aethel_lite.errors import ParameterError
from aethel_lite.evaluation.cluster import ClusterMismatch, connect, plan, precompute
from aethel_lite.retrievers import DenseRetriever, GraphRetriever, passage_text


def stored(root: Path) -> dict[str, dict[str, bytes]]:
    """Every store file under ``root`` (by file name) -> its entries, read with plain sqlite3."""
    out = {}
    for path in sorted((root / "store").glob("*.sqlite")):
        con = sqlite3.connect(path)
        out[path.name] = {k: bytes(v) for k, v in con.execute("SELECT key, value FROM entries")}
        con.close()
    return out


def rankings(retriever, queries, k: int = 10) -> dict[str, list[str]]:
    return {qid: [pid for pid, _ in hits] for qid, hits in retriever.search(queries, k=k).items()}


@pytest.fixture(scope="module")
def client():
    c = connect(workers=2)
    c.wait_for_workers(2, timeout=120)
    yield c
    c.close()


@pytest.fixture(scope="module")
def corpus():
    return make_synthetic(n_passages=300, seed=3)


def in_process(root: Path, monkeypatch, fit):
    """Run ``fit()`` with ``$AETHEL_CACHE`` = ``root`` (the in-process oracle)."""
    monkeypatch.setenv("AETHEL_CACHE", str(root))
    return fit()


def forbid(monkeypatch, cls, method="extract"):
    """After precompute the fit must find everything in the store: calling the producer on any text fails the test."""

    def refuse(self, texts, *a, **kw):
        if len(texts):
            raise AssertionError(f"{cls.__name__}.{method} called on {len(texts)} texts after precompute")
        return [] if method == "extract" else np.zeros((0, 384), np.float32)

    monkeypatch.setattr(cls, method, refuse)


# -------------------------------------------------------------------------------------- connect
def test_connect_without_options_is_none_and_imports_no_dask(monkeypatch):
    monkeypatch.delenv("AETHEL_SCHEDULER", raising=False)
    code = (
        "import sys, os; os.environ.pop('AETHEL_SCHEDULER', None)\n"
        "from aethel_lite.evaluation.cluster import connect\n"
        "assert connect() is None\n"
        "print(','.join(m for m in ('dask', 'distributed') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == ""
    with pytest.raises(ParameterError, match="not both"):
        connect("tcp://127.0.0.1:1", 2)
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ParameterError, match="--workers"):
            connect(workers=bad)
    with pytest.raises(ParameterError, match="empty address"):
        connect(" ")


def test_plan_names_what_each_method_fits():
    assert plan(["bm25"]) == ([], [])
    assert plan(["rrf-dense", "dense-max", "aethel-reg"]) == (["regex"], ["first", "max"])
    extractors, poolings = plan(["aethel-hybrid"])
    assert extractors == ["ner3"] and set(poolings) == {"first", "heading"}


# -------------------------------------------------------------------------------------- regex
def test_regex_stores_and_rankings_equal_the_in_process_run(client, corpus, tmp_path, monkeypatch):
    local = in_process(
        tmp_path / "local", monkeypatch, lambda: GraphRetriever(extractor="regex").fit(corpus.passages)
    )
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cluster"))
    summary = precompute(corpus.passages, extractor="regex", client=client, partition_size=64, progress=False)
    assert summary["texts"] == len(corpus.passages) and summary["partitions"] == 5 and summary["hits"] == 0
    assert stored(tmp_path / "cluster") == stored(tmp_path / "local")
    with monkeypatch.context() as m:
        forbid(m, RegexExtractor)
        remote = GraphRetriever(extractor="regex").fit(corpus.passages)
    assert rankings(remote, corpus.queries) == rankings(local, corpus.queries)
    again = precompute(corpus.passages, extractor="regex", client=client, progress=False)
    assert again["texts"] == 0 and again["hits"] == len(corpus.passages)  # nothing left to send


def test_interrupted_driver_reruns_only_the_missing_partitions(client, corpus, tmp_path, monkeypatch):
    texts = [passage_text(p) for p in corpus.passages]
    in_process(tmp_path / "local", monkeypatch, lambda: extract_entities(texts, "regex", progress=False))
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cluster"))

    def crash(summary):
        if crash.calls == 3:
            raise KeyboardInterrupt
        crash.calls += 1

    crash.calls = 0
    with pytest.raises(KeyboardInterrupt):
        precompute(
            corpus.passages,
            extractor="regex",
            client=client,
            partition_size=32,
            on_stored=crash,
            progress=False,
        )
    done = stored(tmp_path / "cluster")
    ((_, entries),) = done.items()
    assert len(entries) == 4 * 32  # the four partitions written before the interruption, nothing else
    rerun = precompute(corpus.passages, extractor="regex", client=client, partition_size=32, progress=False)
    assert rerun["hits"] == 4 * 32 and rerun["texts"] == len(texts) - 4 * 32
    assert rerun["partitions"] == -(-(len(texts) - 4 * 32) // 32)
    assert stored(tmp_path / "cluster") == stored(tmp_path / "local")


def test_a_worker_with_other_versions_is_refused(client, corpus, tmp_path, monkeypatch):
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path))
    victim = min(client.scheduler_info()["workers"])
    patch = (
        "import aethel_lite.core.entities as e, aethel_lite.evaluation.cluster as c\n"
        "e._real_fp = getattr(e, '_real_fp', e.normalization_fingerprint)\n"
        "e.normalization_fingerprint = lambda: 'another-normalization'\nc._PRODUCERS.clear()"
    )
    undo = (
        "import aethel_lite.core.entities as e, aethel_lite.evaluation.cluster as c\n"
        "e.normalization_fingerprint = e._real_fp\nc._PRODUCERS.clear()"
    )
    client.run(exec, patch, workers=[victim])
    try:
        with pytest.raises(
            ClusterMismatch,
            match=f"worker {victim} refused for entities-regex: normalization: "
            "'another-normalization' on the worker",
        ):
            precompute(corpus.passages, extractor="regex", client=client, progress=False)
    finally:
        client.run(exec, undo, workers=[victim])
    assert all(not entries for entries in stored(tmp_path).values())  # nothing was sent or stored


# -------------------------------------------------------------------------------------- spaCy
@pytest.mark.slow
def test_spacy_entities_equal_even_when_a_worker_is_killed(client, corpus, tmp_path, monkeypatch):
    """ner3 goes through the ner store; a worker killed (SIGKILL) while it holds a partition: Dask
    reruns the partition on the restarted worker and the result is complete and identical."""
    passages = corpus.passages[:240]
    local = in_process(
        tmp_path / "local", monkeypatch, lambda: GraphRetriever(extractor="ner3").fit(passages)
    )
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cluster"))
    pids = client.run(os.getpid)
    killed = []

    def kill_one(summary):
        if killed:
            return
        busy = [w for w, keys in client.processing().items() if keys]
        assert busy, "no worker was busy when the first partition was stored"
        killed.append((busy[0], pids[busy[0]], summary["partitions"]))
        os.kill(pids[busy[0]], signal.SIGKILL)

    summary = precompute(
        passages, extractor="ner3", client=client, partition_size=32, on_stored=kill_one, progress=False
    )
    assert killed and summary["texts"] == len(passages) and summary["partitions"] == len(passages) // 32 + 1
    deadline = time.monotonic() + 60
    while len(client.scheduler_info()["workers"]) < 2 and time.monotonic() < deadline:
        time.sleep(0.5)  # the nanny restarts the killed worker (later tests keep two)
    assert killed[0][1] not in client.run(os.getpid).values()
    assert stored(tmp_path / "cluster") == stored(tmp_path / "local")
    texts = [passage_text(p) for p in passages]  # other batches (a rerun's): the same mentions here too
    assert (
        SpacyNerExtractor(batch_size=7).extract(texts[5:])
        == extract_entities(texts, "ner", progress=False)[5:]
    )
    with monkeypatch.context() as m:
        forbid(m, SpacyNerExtractor)
        remote = GraphRetriever(extractor="ner3").fit(passages)
    assert rankings(remote, corpus.queries) == rankings(local, corpus.queries)


# -------------------------------------------------------------------------------------- MiniLM
@pytest.mark.slow
def test_minilm_embeddings_equal_the_in_process_run(client, corpus, tmp_path, monkeypatch):
    """One precompute over all the misses: the same batches, so the same bytes and the same scores.
    A rerun after an interruption encodes the rest in other batches: cosine >= 0.99999, same rankings."""
    passages = corpus.passages[:64]
    queries = [q.text for q in corpus.queries[:20]]
    settings = {"batch_size": 16}

    def fit_all():
        return {
            pooling: DenseRetriever(pooling=pooling, **settings).fit(passages)
            for pooling in ("first", "heading")
        }

    local = in_process(tmp_path / "local", monkeypatch, fit_all)
    want = stored(tmp_path / "local")
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cluster"))
    summary = precompute(
        passages,
        poolings=("first", "heading"),
        dense=settings,
        client=client,
        partition_size=40,
        progress=False,
    )
    assert summary["jobs"]["embeddings-first"]["partitions"] == 64 // 32  # 40 rounded down to 2 batches of 16
    assert stored(tmp_path / "cluster") == want  # identical bytes
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "rerun"))

    def crash(summary):  # at the first partition stored
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        precompute(
            passages,
            poolings=("first",),
            dense=settings,
            client=client,
            partition_size=16,
            on_stored=crash,
            progress=False,
        )
    rerun = precompute(passages, poolings=("first", "heading"), dense=settings, client=client, progress=False)
    assert 0 < rerun["jobs"]["embeddings-first"]["hits"] < len(passages)
    got = stored(tmp_path / "rerun")
    ((name, expected),) = want.items()
    assert got[name].keys() == expected.keys()
    a = np.stack([np.frombuffer(expected[k], "<f4") for k in expected])
    b = np.stack([np.frombuffer(got[name][k], "<f4") for k in expected])
    assert float((a * b).sum(axis=1).min()) >= 0.99999
    for pooling, retriever in local.items():
        with monkeypatch.context() as m:
            forbid(m, DenseRetriever, "encode")
            remote = DenseRetriever(pooling=pooling, **settings).fit(passages)
        assert (
            np.argsort(-remote.score_texts(queries), axis=1, kind="stable")
            == np.argsort(-retriever.score_texts(queries), axis=1, kind="stable")
        ).all()


# -------------------------------------------------------------------------------------- the CLI
def test_aethel_eval_on_the_cluster_writes_the_in_process_result(client, tmp_path, monkeypatch, capsys):
    from aethel_lite.cli import main

    args = ["eval", "--format", "synthetic", "--size", "300", "--methods", "aethel-reg,bm25"]
    monkeypatch.delenv("AETHEL_SCHEDULER", raising=False)
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "local"))
    assert main([*args, "--quiet", "--out", str(tmp_path / "local.json")]) == 0
    monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / "cluster"))
    capsys.readouterr()
    assert (
        main([*args, "--out", str(tmp_path / "cluster.json"), "--scheduler", client.scheduler.address]) == 0
    )
    assert "cluster: 300 texts in 2 partitions on 2 workers, 0 already stored" in capsys.readouterr().err
    results = [json.loads((tmp_path / f"{name}.json").read_text()) for name in ("local", "cluster")]
    for r in results:
        del r["timing"], r["seconds"]
    assert results[0] == results[1]
    assert stored(tmp_path / "cluster") == stored(tmp_path / "local")


def test_aethel_index_on_the_cluster_writes_the_in_process_index(client, tmp_path, monkeypatch, capsys):
    from aethel_lite.cli import main

    docs = tmp_path / "docs"
    docs.mkdir()
    for i, p in enumerate(make_synthetic(n_passages=60, seed=5).passages):
        (docs / f"{i:03d}.txt").write_text(p.text, encoding="utf-8")
    monkeypatch.delenv("AETHEL_SCHEDULER", raising=False)
    for name, extra in (("local", []), ("cluster", ["--scheduler", client.scheduler.address])):
        monkeypatch.setenv("AETHEL_CACHE", str(tmp_path / f"cache-{name}"))
        capsys.readouterr()
        assert (
            main(["index", str(docs), "--out", str(tmp_path / name), "--methods", "aethel-reg", *extra]) == 0
        )
    assert "cluster: 60 texts in 1 partitions on 2 workers" in capsys.readouterr().err
    for part in ("entities-regex.jsonl", "graph-regex/graph.json", "graph-regex/graph.npz"):
        assert (tmp_path / "cluster" / part).read_bytes() == (tmp_path / "local" / part).read_bytes(), part
    assert stored(tmp_path / "cache-cluster") == stored(tmp_path / "cache-local")
