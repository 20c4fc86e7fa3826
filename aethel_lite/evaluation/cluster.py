r"""Passage work on a Dask cluster: entity extraction and passage encoding for corpora that outgrow one machine.

Entity mentions (:func:`aethel_lite.core.entities.extract_entities`) and passage embeddings
(:meth:`aethel_lite.retrievers.dense.DenseRetriever.embed`) depend only on one passage's text and the producer's
configuration, kept in content-addressed per-passage stores (:class:`~aethel_lite.caching.store.PassageStore`).
:func:`precompute` fills those stores on a cluster; the in-process fit that follows finds every passage there and
computes nothing. Without a cluster (:func:`connect` returns None) nothing here runs and Dask is never imported. The
**driver** writes each completed partition to the stores, so workers need no shared file system and a rerun sends
only what is still missing. Only strings go out and the stores' ``bytes`` come back (nothing is pickled).

Equality with the in-process run
--------------------------------
*Entities are identical.* For spaCy the partitions are consecutive slices of the misses the in-process run
extracts (:data:`~aethel_lite.caching.store.FLUSH_EVERY` = 256 at a time), so with ``partition_size`` a multiple
of the extractor's ``batch_size`` that divides 256 (the default) the workers run exactly the in-process
``nlp.pipe`` batches (unless a text over ``max_chars`` is split). After an interruption the batches differ; the
mentions were still identical in the tests (observed, not guaranteed).

*Embeddings are identical where the batching is the same*: a text's vector depends (in its last bits) on the
batch it is padded with, so the driver cuts the misses into the batches the in-process ``embed`` encodes
(:func:`~aethel_lite.core.encoders.encoder_batches`), one ``encode`` call each on a worker. After an
interruption other batches can change a vector's last bits (cosine ≥ 0.99999, identical rankings; both tested).

Examples
--------
>>> client = connect(workers=2)                                   # doctest: +SKIP
>>> precompute(passages, extractor="ner3", poolings=("first",), client=client)  # doctest: +SKIP
>>> GraphRetriever(extractor="ner3").fit(passages)                # everything from the store  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..caching.store import PassageStore, config_fingerprint, text_key
from ..core.encoders import encoder_batches, resolve_precision
from ..core.entities import (
    Ner3Extractor,
    RegexExtractor,
    SpacyNerExtractor,
    _encode_mentions,
    entity_store,
    entity_store_config,
    get_extractor,
)
from ..data.schema import passage_text
from ..errors import AethelError, DataError, ParameterError
from ..retrievers.dense import DenseRetriever
from ..retrievers.registry import FUSIONS, METHODS

__all__ = [
    "PARTITION_SIZE",
    "SCHEDULER_ENV",
    "ClusterMismatch",
    "cluster_options",
    "connect",
    "parse_scheduler_address",
    "plan",
    "precompute",
    "precompute_methods",
]

#: environment variable with the address of an existing Dask scheduler (``--scheduler`` overrides it)
SCHEDULER_ENV = "AETHEL_SCHEDULER"
#: default texts per partition (a multiple of the spaCy and MiniLM batch sizes, 32 and 64)
PARTITION_SIZE = 256
_LOOKUP_CHUNK = 10_000  # store look-ups per get_many call while finding the misses (bounds memory)
_PRODUCERS: dict[
    str, tuple[Any, dict]
] = {}  # on a worker: spec JSON -> (extractor or DenseRetriever, store config)


class ClusterMismatch(AethelError, RuntimeError):
    """A worker would compute under another store configuration than the driver (other versions or model files)."""


def connect(scheduler: str | None = None, workers: int | None = None):
    """A Dask client for the passage work, or None (then everything runs in-process, as without this module).

    Parameters
    ----------
    scheduler : str, optional
        Address of an existing scheduler (``tcp://host:8786``); default ``$AETHEL_SCHEDULER``.
    workers : int, optional
        Start a local cluster of this many one-thread worker processes instead (closed with the client).

    Returns
    -------
    distributed.Client or None
        None when neither is given and ``$AETHEL_SCHEDULER`` is unset or empty (Dask is not imported).

    Raises
    ------
    ParameterError, DataError
        Options :func:`cluster_options` refuses; the scheduler cannot be reached.
    """
    options = cluster_options(scheduler, workers)
    if options is None:
        return None
    from distributed import Client

    if (
        workers is not None
    ):  # a Client given cluster settings starts its own LocalCluster and closes it with itself
        return Client(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            set_as_default=False,
        )
    address = options["scheduler"]
    source = "--scheduler" if scheduler is not None else f"${SCHEDULER_ENV}"
    scheme, host, port = parse_scheduler_address(address, source)
    if scheme in ("tcp", "tls", "ws", "wss"):  # reachable at all: a short probe before Dask's own connection
        try:
            socket.create_connection((host, port), timeout=CONNECT_TIMEOUT).close()
        except OSError as exc:
            raise DataError(
                f"{source} {address}: cannot reach the Dask scheduler ({exc.strerror or exc})"
            ) from None
    try:
        return Client(address, timeout=f"{CONNECT_TIMEOUT}s", set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise DataError(f"{source} {address}: cannot reach the Dask scheduler ({exc})") from None


#: the address schemes (protocols) a Dask scheduler listens on
SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx", "inproc")
#: seconds to wait for the scheduler to answer
CONNECT_TIMEOUT = 10


def parse_scheduler_address(address: str, source: str = "--scheduler") -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of a scheduler address (``tcp://host:8786``, ``host:8786``, ...), checked
    without connecting; ParameterError naming ``source`` and the address otherwise."""
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "tcp", address
    example = "e.g. tcp://10.0.0.5:8786"
    if scheme not in SCHEDULER_SCHEMES:
        raise ParameterError(
            f"{source} {address}: unknown protocol {scheme!r} (one of {', '.join(SCHEDULER_SCHEMES)}; {example})"
        )
    if scheme == "inproc":
        return scheme, rest, None
    if not rest or any(c.isspace() for c in rest) or "/" in rest.rstrip("/"):
        raise ParameterError(f"{source} {address}: not a scheduler address HOST:PORT ({example})")
    try:
        parts = urlsplit(f"//{rest.rstrip('/')}")
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or port is None:
        raise ParameterError(f"{source} {address}: the address needs a host and a port ({example})")
    return scheme, host, port


def cluster_options(scheduler: str | None = None, workers: int | None = None) -> dict | None:
    """The options of :func:`connect`, checked without connecting (ParameterError): None when it would return
    None, else ``{"scheduler": ..., "workers": ...}``."""
    if scheduler is not None and workers is not None:
        raise ParameterError("give --scheduler or --workers, not both")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ParameterError(f"--workers must be a positive integer, got {workers!r}")
    if scheduler is not None and not scheduler.strip():
        raise ParameterError("--scheduler: empty address")
    if workers is None:
        source = "--scheduler" if scheduler is not None else f"${SCHEDULER_ENV}"
        scheduler = (
            scheduler if scheduler is not None else os.environ.get(SCHEDULER_ENV, "")
        ).strip() or None
        if scheduler is None:
            return None
        parse_scheduler_address(scheduler, source)
    return {"scheduler": scheduler, "workers": workers}


def plan(methods: Iterable[str]) -> tuple[list[str], list[str]]:
    """The extractors and dense poolings that fitting ``methods`` needs (fusions expanded).

    Returns
    -------
    (extractors, poolings) : list of str, list of str
        E.g. ``(["ner3"], ["first", "heading"])`` for ``aethel-hybrid``; in first-needed order.
    """
    extractors: list[str] = []
    poolings: list[str] = []
    for method in methods:
        for base in FUSIONS.get(method, (method,)):
            for part in METHODS[base].parts():  # graph-<extractor>, dense-<pooling>: what it encodes
                kind, _, name = part.partition("-")
                if kind == "graph":
                    extractors.append(name)
                elif kind == "dense":
                    poolings.append(name)
    return list(dict.fromkeys(extractors)), list(dict.fromkeys(poolings))


def _extractor_spec(extractor: Any) -> dict:
    """A JSON description from which a worker rebuilds ``extractor`` (ner3 → its ner, whose store it uses)."""
    extractor = get_extractor(extractor)
    if isinstance(extractor, Ner3Extractor):
        extractor = extractor.ner
    if type(extractor) is SpacyNerExtractor:
        return {
            "kind": "entities",
            "name": "ner",
            "batch_size": extractor.batch_size,
            "max_chars": extractor.max_chars,
        }
    if type(extractor) is RegexExtractor:
        return {"kind": "entities", "name": "regex", "stop_words": sorted(extractor.stop_words)}
    raise ParameterError(
        f"precompute: extractor {extractor!r} is not one of regex, ner, ner3 (a worker could not rebuild it)"
    )


def _build(spec: Mapping[str, Any]) -> tuple[Any, dict]:
    """The producer a spec describes and its store configuration (what names its store file)."""
    if spec["kind"] == "embeddings":
        r = DenseRetriever(
            model_path=spec["model_path"],
            batch_size=spec["batch_size"],
            normalize=spec["normalize"],
            precision=spec["precision"],
            progress=False,
        )
        return r, r.embedding_store_config()
    if spec["name"] == "ner":
        ext: Any = SpacyNerExtractor(batch_size=spec["batch_size"], max_chars=spec["max_chars"])
    else:
        ext = RegexExtractor(stop_words=spec["stop_words"])
    return ext, entity_store_config(ext)


def _producer(spec_json: str) -> tuple[Any, dict]:
    """:func:`_build`, once per process and spec."""
    if spec_json not in _PRODUCERS:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the models come from installed packages, never a hub
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        _PRODUCERS[spec_json] = _build(json.loads(spec_json))
    return _PRODUCERS[spec_json]


def _worker_configs(spec_jsons: Sequence[str]) -> list[dict]:
    """Run on every worker before work is sent: the store configuration of each spec there."""
    return [_producer(s)[1] for s in spec_jsons]


def _work(spec_json: str, texts: list[str], batch_size: int) -> dict:
    """Run on a worker: the stored values (bytes) of one partition's ``texts``, in order (embeddings
    ``batch_size`` texts per ``encode`` call, the batches the driver chose)."""
    t0 = time.perf_counter()
    producer, config = _producer(spec_json)
    if isinstance(producer, DenseRetriever):
        values = [
            row.tobytes()
            for i in range(0, len(texts), batch_size)
            for row in producer.encode(texts[i : i + batch_size], progress=False).astype("<f4", copy=False)
        ]
    else:
        values = [_encode_mentions(ms) for ms in producer.extract(texts, progress=False)]
    return {
        "fingerprint": config_fingerprint(config),
        "values": values,
        "seconds": time.perf_counter() - t0,
        "pid": os.getpid(),
    }


@dataclass
class _Job:
    """The misses of one producer: texts in the order they are sent, cut into partitions."""

    label: str
    spec_json: str
    config: dict
    store: PassageStore
    batch_size: int
    pages_per_text: float
    keys: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    hits: int = 0

    def partitions(self, size: int) -> list[tuple[int, int]]:
        return [(i, min(i + size, len(self.keys))) for i in range(0, len(self.keys), size)]


def _job(
    label: str,
    spec: dict,
    config: dict,
    store: PassageStore,
    texts: Sequence[str],
    n_pages: int,
    claimed: set[str],
    batch_size: int,
) -> _Job:
    by_key = dict(zip(map(text_key, texts), texts))  # distinct texts, first occurrence first (as the fit)
    distinct = [k for k in by_key if k not in claimed]
    missing: set[str] = set()
    for i in range(0, len(distinct), _LOOKUP_CHUNK):  # bounded look-ups
        chunk = distinct[i : i + _LOOKUP_CHUNK]
        found = store.get_many(chunk)
        missing.update(k for k in chunk if k not in found)
    keys = [k for k in distinct if k in missing]
    claimed.update(keys)
    return _Job(
        label,
        json.dumps(spec, sort_keys=True),
        config,
        store,
        batch_size,
        n_pages / max(len(by_key), 1),
        keys,
        [by_key[k] for k in keys],
        hits=len(distinct) - len(missing),
    )


def _cut(text: str, max_chars: int | None) -> str:
    return text if max_chars is None else text[:max_chars]


def _jobs(
    passages: Sequence,
    extractors: Sequence,
    poolings: Sequence[str],
    dense: Mapping[str, Any],
    max_chars: int | None,
) -> list[_Job]:
    """One job per distinct entity store and per pooling (a text an earlier pooling claimed is not sent twice)."""
    jobs: list[_Job] = []
    claimed: dict[str, set[str]] = {}
    texts = [_cut(passage_text(p), max_chars) for p in passages]
    for extractor in extractors:
        spec = _extractor_spec(extractor)
        ext, config = _build(spec)
        store = entity_store(ext)
        if store.fingerprint in claimed:  # e.g. ner and ner3: one ner store
            store.close()
            continue
        claimed[store.fingerprint] = set()
        jobs.append(
            _job(
                f"entities-{spec['name']}",
                spec,
                config,
                store,
                texts,
                len(passages),
                claimed[store.fingerprint],
                0,
            )
        )
    for pooling in poolings:
        r = DenseRetriever(**{**dense, "pooling": pooling})
        spec = {
            "kind": "embeddings",
            "model_path": None if r.model_path is None else str(r.model_path),
            "batch_size": r.batch_size,
            "normalize": bool(r.normalize),
            "precision": resolve_precision(r.precision),
        }
        store = r.embedding_store()
        seen = claimed.setdefault(store.fingerprint, set())
        chunks = [_cut(c, max_chars) for p in passages for c in r.passage_chunks(p)]
        job = _job(
            f"embeddings-{pooling}",
            spec,
            r.embedding_store_config(),
            store,
            chunks,
            len(passages),
            seen,
            r.batch_size,
        )
        by_key = dict(
            zip(job.keys, job.texts)
        )  # sent in the batches an in-process embed of these misses encodes
        job.keys = [k for batch in encoder_batches(r.model, job.keys, job.texts, r.batch_size) for k in batch]
        job.texts = [by_key[k] for k in job.keys]
        jobs.append(job)
    return jobs


def _first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """``"path: a != b"`` for the first place where two JSON values differ, else None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            found = _first_difference(a.get(key), b.get(key), f"{path}.{key}" if path else str(key))
            if found:
                return found
        return None
    return None if a == b else f"{path or 'config'}: {a!r} on the worker, {b!r} on the driver"


def _check_workers(client, jobs: Sequence[_Job]) -> int:
    """The number of workers, after refusing (ClusterMismatch) any whose store configurations differ."""
    client.wait_for_workers(1, timeout=120)
    try:
        found = client.run(_worker_configs, [job.spec_json for job in jobs])
    except Exception as exc:  # e.g. a worker without aethel-lite or without a model package
        raise ClusterMismatch(f"a worker cannot build the producers ({type(exc).__name__}: {exc})") from exc
    for address, configs in sorted(found.items()):
        for job, config in zip(jobs, configs):
            diff = _first_difference(config, job.config)
            if diff:
                raise ClusterMismatch(f"worker {address} refused for {job.label}: {diff}")
    return max(1, len(client.scheduler_info().get("workers", {})))


def precompute(
    passages: Sequence,
    *,
    extractor: Any = None,
    poolings: Sequence[str] = (),
    client,
    partition_size: int = PARTITION_SIZE,
    dense: Mapping[str, Any] | None = None,
    max_chars: int | None = None,
    progress: bool = True,
    on_stored: Callable[[dict], None] | None = None,
) -> dict:
    """Fill the entity and embedding stores of ``passages`` on the cluster behind ``client``.

    Parameters
    ----------
    passages : sequence of Passage
        The passages the fit will see, in its order.
    extractor : str, extractor, or a sequence of them, optional
        ``"regex"``, ``"ner"``, ``"ner3"`` (its ``ner`` store) or such an extractor object.
    poolings : sequence of {"first", "max", "heading"}
        The :class:`DenseRetriever` poolings to encode, in the order the fit runs them.
    client : distributed.Client
        From :func:`connect`.
    partition_size : int
        Texts per partition (rounded down to whole encoding batches for embeddings).
    dense : mapping, optional
        :class:`DenseRetriever` settings other than ``pooling`` (default: its defaults).
    max_chars : int, optional
        Cut every text to this many characters first (as ``aethel index`` does).
    progress : bool
        A tqdm bar over the partitions, with the pages per second.
    on_stored : callable, optional
        Called with a copy of the running summary after each partition is written.

    Returns
    -------
    dict
        ``partitions`` and ``texts`` (sent), ``hits`` (already stored), ``workers``, ``seconds`` (wall clock),
        ``driver_seconds`` (writing the results), and ``jobs``: per store job (``entities-ner``, ...) those counts
        and ``worker_seconds``.

    Raises
    ------
    ClusterMismatch
        A worker's versions or model files differ from the driver's (nothing is sent).
    """
    from distributed import as_completed
    from tqdm.auto import tqdm

    if isinstance(partition_size, bool) or not isinstance(partition_size, int) or partition_size < 1:
        raise ParameterError(f"partition_size must be a positive integer, got {partition_size!r}")
    extractors = (
        []
        if extractor is None
        else (list(extractor) if isinstance(extractor, (list, tuple)) else [extractor])
    )
    passages = list(passages)
    t0 = time.perf_counter()
    jobs = _jobs(passages, extractors, list(dict.fromkeys(poolings)), dict(dense or {}), max_chars)
    summary: dict[str, Any] = {
        "partitions": 0,
        "texts": 0,
        "hits": sum(j.hits for j in jobs),
        "workers": 0,
        "seconds": 0.0,
        "driver_seconds": 0.0,
        "jobs": {j.label: {"partitions": 0, "texts": 0, "hits": j.hits, "worker_seconds": 0.0} for j in jobs},
    }
    try:
        todo = [
            (job, a, b)
            for job in jobs
            for a, b in job.partitions(
                max(job.batch_size, partition_size // job.batch_size * job.batch_size)
                if job.batch_size
                else partition_size
            )
        ]
        if not todo:
            return summary
        n_workers = summary["workers"] = _check_workers(client, [j for j in jobs if j.keys])
        bar = tqdm(
            total=len(todo),
            desc=f"passage work on {n_workers} workers",
            unit=" partitions",
            disable=not progress,
        )
        pending: dict[Any, tuple[_Job, int, int]] = {}
        queue = iter(todo)
        stream = as_completed(loop=client.loop)
        pages = 0.0

        def send() -> None:
            item = next(queue, None)
            if item is not None:
                job, a, b = item
                future = client.submit(_work, job.spec_json, job.texts[a:b], job.batch_size, pure=False)
                pending[future] = item
                stream.add(future)
                for entry in (summary["jobs"][job.label], summary):
                    entry["partitions"] += 1
                    entry["texts"] += b - a

        try:
            for _ in range(2 * n_workers):
                send()
            for future in stream:
                job, a, b = pending.pop(future)
                result = future.result()
                if result["fingerprint"] != job.store.fingerprint:
                    raise ClusterMismatch(
                        f"a worker computed {job.label} under another configuration "
                        f"(fingerprint {result['fingerprint'][:16]}, the driver's {job.store.fingerprint[:16]})"
                    )
                if len(result["values"]) != b - a:
                    raise RuntimeError(
                        f"{job.label}: a worker returned {len(result['values'])} values for {b - a} texts"
                    )
                t_write = time.perf_counter()
                job.store.put_many(zip(job.keys[a:b], result["values"]))
                summary["driver_seconds"] += time.perf_counter() - t_write
                summary["jobs"][job.label]["worker_seconds"] += result["seconds"]
                future.release()
                send()
                pages += (b - a) * job.pages_per_text
                bar.set_postfix_str(
                    f"{pages / max(time.perf_counter() - t0, 1e-9):.1f} pages/s", refresh=False
                )
                bar.update(1)
                if on_stored is not None:
                    on_stored(json.loads(json.dumps(summary)))
        finally:
            bar.close()
            if pending:
                client.cancel(list(pending))
    finally:
        for job in jobs:
            job.store.close()
        summary["seconds"] = round(time.perf_counter() - t0, 3)
    return summary


def precompute_methods(
    passages: Sequence,
    methods: Iterable[str],
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    max_chars: int | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
    dense: Mapping[str, Any] | None = None,
) -> dict | None:
    """What ``aethel eval`` and ``aethel index`` run before fitting: :func:`precompute` of what :func:`plan`
    says ``methods`` need (``dense``: the dense models' settings, e.g. the index's ``precision``); the summary
    (also one line to ``log``), or None without a cluster."""
    client = connect(scheduler, workers)
    if client is None:
        return None
    try:
        extractors, poolings = plan(methods)
        summary = precompute(
            passages,
            extractor=extractors,
            poolings=poolings,
            client=client,
            max_chars=max_chars,
            progress=progress,
            dense=dense,
        )
    finally:
        client.close()
    if log is not None:
        log(
            f"cluster: {summary['texts']} texts in {summary['partitions']} partitions on {summary['workers']} workers, "
            f"{summary['hits']} already stored ({summary['seconds']:.1f} s)"
        )
    return summary
