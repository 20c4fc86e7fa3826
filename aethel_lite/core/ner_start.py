"""Starting the process that tags questions with spaCy (:mod:`aethel_lite.core.ner_process`).

Only the standard library is imported here, so ``aethel search`` can start that process before it
imports anything of its own (:mod:`aethel_lite.cli`): the process's start-up (the interpreter, then
spaCy's import and pipeline, ≈ 0.9 s of one core) is the longer of the search's two, and each
millisecond before it begins is one more the search waits (benchmarks/README.md).

The process is started with ``python -S`` (no ``site``: no ``.pth`` files read, no site folders
looked for) and this interpreter's own ``sys.path`` as ``PYTHONPATH``, behind the folder that holds
this package: it imports the same spaCy, model and package as this process would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

__all__ = ["spawn"]

#: The module run in the other process.
MODULE = "aethel_lite.core.ner_process"
#: The folder holding this package (first on the other process's ``PYTHONPATH``: it imports this copy).
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _python_path() -> str:
    """``PYTHONPATH`` for the other process: this package's folder, then this process's ``sys.path``."""
    paths = [_ROOT] + [p for p in sys.path if p and os.path.isdir(p)]
    return os.pathsep.join(dict.fromkeys(paths))


def spawn(settings: dict | None = None) -> subprocess.Popen | None:
    """Start ``python -S -m aethel_lite.core.ner_process [SETTINGS]``; None if it cannot be started.

    Parameters
    ----------
    settings : dict, optional
        ``{"exclude": [...], "max_chars": int}`` of the extractor whose pipeline the process loads;
        None: :class:`~aethel_lite.core.ner.SpacyNerExtractor`'s defaults.

    Returns
    -------
    subprocess.Popen or None
        The process, its standard input and output as pipes (the texts go in as one JSON list when
        standard input is closed, the mentions come out as JSON), its standard error discarded.
    """
    args = [] if settings is None else [json.dumps(settings)]
    env = dict(os.environ, PYTHONPATH=_python_path())
    try:
        return subprocess.Popen(
            [sys.executable, "-S", "-m", MODULE, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
    except (OSError, TypeError, ValueError):  # no interpreter to start (an embedded Python): tag here
        return None
