"""Shared fixtures.

Real-data tests use the ``real_data`` fixture. When ``AETHEL_DATA`` is unset they are skipped
(the synthetic corpus covers the code paths); when it is set, a missing file is a test *failure*,
so CI (which sets it) can never silently skip them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# every test computes what it checks (a cached result would make "two runs agree" hold trivially);
# tests/caching/test_resultcache.py turns the result cache on where it is the subject
os.environ["AETHEL_RESULT_CACHE"] = "0"
# pytest-xdist runs one worker per core, so each worker's torch (and the notebook kernels it starts) uses
# one thread instead of one per core: two processes encoding 400 FinanceBench pages with MiniLM on 2 cores
# took 33 s each with 2 threads per process, 27 s with 1 (benchmarks/bench_threads.py). A value set by
# the caller is kept.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    os.environ.setdefault("OMP_NUM_THREADS", "1")

#: Test files that take longest, longest first, as paths under tests/ (their sums of per-test seconds in CI: ``make
#: test PYTEST_ARGS=--durations=0``). With ``--dist loadfile --no-loadscope-reorder`` (Makefile) pytest-xdist hands
#: out whole files in this order, each worker taking the next when it is nearly done: the long files start first
#: and the run ends on short ones, so no worker is left alone with a long file while the other has nothing to do.
LONGEST_FIRST = (
    "book/test_chapters.py",  # 330 s
    "book/test_notebooks.py",  # 242 s
    "evaluation/test_acceptance_musique.py",  # 252 s
    "swarm/test_swarm.py",  # 74 s
    "core/test_encoders.py",  # 47 s
    "data/test_synthetic.py",  # 46 s
    "evaluation/test_cluster.py",  # 46 s
    "studies/test_teaching.py",  # 44 s
    "caching/test_memo.py",  # 34 s
    "cli/test_cli.py",  # 31 s
    "retrievers/test_estimators.py",  # 29 s
    "studies/test_comparisons.py",  # 29 s
    "search/test_index.py",  # 26 s
    "core/test_ner_process.py",  # 25 s
    "evaluation/test_agreement.py",  # 18 s
    "book/test_bookcheck.py",  # 15 s
    "cli/test_reliability.py",  # 12 s
    "data/test_cover.py",  # 11 s
    "retrievers/test_statements.py",  # 11 s
)
TESTS = Path(__file__).resolve().parent


def _under_tests(path: Path) -> str:
    """``path`` relative to tests/, in forward slashes (``book/test_chapters.py``)."""
    try:
        return path.resolve().relative_to(TESTS).as_posix()
    except ValueError:  # a test file outside tests/ (given on the command line)
        return path.name


def pytest_collection_modifyitems(items):
    """The files of :data:`LONGEST_FIRST` first, in that order; each file's tests keep their order."""
    missing = [name for name in LONGEST_FIRST if not (TESTS / name).is_file()]
    if missing:  # a renamed file would silently lose its place
        raise pytest.UsageError(f"tests/conftest.py: LONGEST_FIRST names no such file: {', '.join(missing)}")
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(_under_tests(item.path), len(rank)))


@pytest.fixture(scope="session")
def real_data() -> Path:
    """The real data root (``$AETHEL_DATA``); skip if unset, fail if set but absent."""
    root = os.environ.get("AETHEL_DATA")
    if not root:
        pytest.skip("AETHEL_DATA is not set: real-data test skipped (CI sets it)")
    path = Path(root)
    if not path.is_dir():
        pytest.fail(f"AETHEL_DATA={root} is set but is not a directory")
    return path


def require(path: Path) -> Path:
    """Fail (never skip) when a real-data file that AETHEL_DATA promises is missing."""
    if not path.exists():
        pytest.fail(f"AETHEL_DATA is set but {path} is missing")
    return path


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory) -> Path:
    """A cache directory shared by the whole session (warm across tests); the environment is not changed.

    Module-scoped fixtures that need it set ``AETHEL_CACHE`` themselves, inside a
    ``pytest.MonkeyPatch.context()`` that is undone when they end.
    """
    return tmp_path_factory.mktemp("aethel_cache")


@pytest.fixture(scope="session")
def run_cache(tmp_path_factory, worker_id) -> Path:
    """One cache folder for the whole run, shared by its pytest-xdist workers (a fresh one per run).

    For the tests that execute chapters or studies with the real models and compute the same entities
    and embeddings (the book built on the synthetic corpus and the swarm chapter; the hybrid chapter's
    quick samples and the comparison study): whichever runs second finds the first one's work. The
    stores are content-addressed, checked on read and safe for several processes (WAL, busy timeout),
    and MiniLM's vectors on ONNX Runtime are the same bits in any batch and on any number of threads
    (tests/retrievers/test_encoders.py), so which test computes a text first changes no result.
    """
    base = tmp_path_factory.getbasetemp()
    path = (base if worker_id == "master" else base.parent) / "run_cache"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture
def cache_root(session_cache, monkeypatch) -> Path:
    """``$AETHEL_CACHE`` pointed at :func:`session_cache` for one test (restored afterwards), so
    tests never touch the user's cache and never leak the setting into other tests."""
    monkeypatch.setenv("AETHEL_CACHE", str(session_cache))
    return session_cache


def toy_filings():
    """Six toy filings (3 companies x FY2018/FY2019, 3 pages each: overview, cash flow, risks) and one
    capital-expenditure question per filing whose gold is its cash-flow page."""
    from aethel_lite.data.schema import Dataset, Passage, Query

    companies = ["Acme Widgets", "Bolt Motors", "Crane Foods"]
    passages, queries = [], []
    for c in companies:
        for year in (2018, 2019):
            doc = f"{c.split()[0].upper()}_{year}"
            for page, text in enumerate(
                [
                    f"{c} annual report {year}. Overview of {c}.",
                    f"Cash flow statement {year}: capital expenditures and dividends.",
                    f"Risk factors: competition and supply for {c}.",
                ]
            ):
                passages.append(
                    Passage(
                        f"{doc}#p{page}",
                        doc,
                        doc,
                        text,
                        {"page": page, "company": c, "doc_period": year, "doc_type": "10k"},
                    )
                )
            queries.append(
                Query(f"q-{doc}", f"What were {c}'s FY{year} capital expenditures?", frozenset({f"{doc}#p1"}))
            )
    return Dataset("toy", passages, queries, {})
