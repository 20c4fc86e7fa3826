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
def cache_root(tmp_path_factory) -> Path:
    """A per-session cache directory so tests never touch the user's cache."""
    path = tmp_path_factory.mktemp("aethel_cache")
    os.environ["AETHEL_CACHE"] = str(path)
    return path
